"""A bare tqdm draw (no description, no postfix) and a trainer_log.jsonl row of LLaMA-Factory's own keys are read
apart from the line readers that cannot read them: the answer must be the one the full reading gives."""

from pathlib import Path

import pytest

from trainsteps.logs import read_log, reader
from trainsteps.logs.explain import explain_log, to_json

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "corpus"
BARRED = sorted(p for p in CORPUS.iterdir() if p.is_file() and "%|" in p.read_text(encoding="utf-8", errors="replace"))
ROWS = sorted(CORPUS.glob("*.trainer_log.jsonl"))
BANNER = ("***** Running training *****\n  Num examples = 1,047\n  Num Epochs = 3\n  Instantaneous batch size per device = 8\n"
          "  Total train batch size (w. parallel, distributed & accumulation) = 32\n  Gradient Accumulation steps = 4\n"
          "  Total optimization steps = 99\n")


def _draws(total: int, start: int = 0, stop: int | None = None) -> str:
    """tqdm's draws written to a file: carriage returns between them, the first with no clock left or rate yet."""
    draws = []
    for n in range(start, total + 1 if stop is None else stop):
        left = "?" if n == 0 else f"{(total - n) // 60:02d}:{(total - n) % 60:02d}"
        rate = "?" if n == 0 else f"{1 + n % 7 / 10:.2f}"
        draws.append(f"{n * 100 // total:3d}%|{'█' * (n * 10 // total):<10}| {n}/{total} [{n // 60:02d}:{n % 60:02d}<{left}, {rate}it/s]")
    return "\r".join(draws)


MADE = {
    "the Trainer's bar of max_steps": BANNER + _draws(99) + "\n{'train_runtime': 120.5, 'train_steps_per_second': 0.82, 'epoch': 3.0}\n",
    "a bar cut by a crash": BANNER + _draws(99, stop=60) + "\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
    "draws whose digits hold a GPU's name": _draws(2000, start=1080, stop=1100) + "\r" + _draws(2000, start=1905, stop=1915) + "\n",
    "a bar of another total and a loss dict": BANNER + _draws(250, stop=120) + "\n{'loss': 0.61, 'epoch': 1.2}\n" + _draws(250, start=120) + "\n",
}


def _answer(text: str | None = None, path: Path | None = None) -> dict:
    obs = read_log(str(path)) if path is not None else read_log(text=text)
    return to_json(obs, explain_log(obs))


def _count_taken(monkeypatch, name: str) -> list[bool]:
    """Records, for each line `reader.<name>` is asked to read apart, whether it took it."""
    read_apart = getattr(reader, name)
    seen = []

    def counting(line, number, ctx):
        taken = read_apart(line, number, ctx)
        seen.append(taken)
        return taken
    monkeypatch.setattr(reader, name, counting)
    return seen


@pytest.fixture
def counted(monkeypatch):
    """Counts the draws read apart."""
    return _count_taken(monkeypatch, "_bare_draw")


@pytest.fixture
def rows_counted(monkeypatch):
    """Counts the rows read apart."""
    return _count_taken(monkeypatch, "_bare_row")


def _full(monkeypatch):
    monkeypatch.setattr(reader, "_bare_draw", lambda line, number, ctx: False)
    monkeypatch.setattr(reader, "_bare_row", lambda line, number, ctx: False)


@pytest.mark.parametrize("name", sorted(MADE))
def test_a_log_of_bare_draws_says_what_its_full_reading_says(name, counted, monkeypatch):
    apart = _answer(MADE[name])
    assert any(counted), "no draw was read apart"
    _full(monkeypatch)
    assert _answer(MADE[name]) == apart


@pytest.mark.parametrize("path", BARRED, ids=lambda p: p.name)
def test_a_stored_log_with_bars_says_what_its_full_reading_says(path, monkeypatch):
    apart = _answer(path=path)
    _full(monkeypatch)
    assert _answer(path=path) == apart


def test_the_stored_logs_hold_bare_draws(counted):
    for path in BARRED:
        _answer(path=path)
    assert sum(counted) > 100


def test_a_draw_holding_a_gpus_digits_is_read_in_full(counted):
    _answer(_draws(2000, start=1089, stop=1092))  # 1090/2000: `090` names an RTX 3090 or 4090 to the words reader
    assert counted == [True, False, True]


def test_a_draw_with_a_description_or_a_postfix_is_read_in_full(counted):
    _answer(" 50%|█████     | 5/10 [00:05<00:05,  1.00it/s]\nTrain:  50%|█████     | 5/10 [00:05<00:05,  1.00it/s]\n"
            " 50%|█████     | 5/10 [00:05<00:05,  1.00it/s, loss=2.1]\n")
    assert counted == [True, False, False]


def _row(step: int, total: int = 990, **more) -> str:
    pairs = {"current_steps": step, "total_steps": total, "loss": round(2 - step / total, 4), "lr": 1e-05, "epoch": step / 330,
             "percentage": round(step * 100 / total, 2), "elapsed_time": f"0:{step // 60:02d}:{step % 60:02d}",
             "remaining_time": "1 day, 0:08:23", **more}
    return "{" + ", ".join(f'"{k}": ' + ('"' + v + '"' if isinstance(v, str) else "null" if v is None else str(v))
                           for k, v in pairs.items()) + "}\n"


MADE_ROWS = {
    "rows after a Trainer banner": BANNER + "".join(_row(n, 99) for n in range(5, 100, 5)),
    "rows of a second run writing the same file": "".join(_row(n) for n in range(10, 300, 10)) + "".join(_row(n) for n in range(10, 200, 10)),
    "rows whose digits hold a GPU's name": "".join(_row(n, 8100, accuracy=0.5) for n in range(900, 920)),
    "a last row with no loss": "".join(_row(n) for n in range(10, 990, 10)) + _row(990, loss=None, eval_loss=None),
}


@pytest.mark.parametrize("name", sorted(MADE_ROWS))
def test_a_log_of_jsonl_rows_says_what_its_full_reading_says(name, rows_counted, monkeypatch):
    apart = _answer(MADE_ROWS[name])
    assert any(rows_counted), "no row was read apart"
    _full(monkeypatch)
    assert _answer(MADE_ROWS[name]) == apart


@pytest.mark.parametrize("path", ROWS, ids=lambda p: p.name)
def test_a_stored_trainer_log_says_what_its_full_reading_says(path, rows_counted, monkeypatch):
    apart = _answer(path=path)
    assert any(rows_counted), "no row was read apart"
    _full(monkeypatch)
    assert _answer(path=path) == apart


def test_a_row_with_a_key_of_its_own_or_a_gpus_digits_is_read_in_full(rows_counted):
    _answer(_row(10) + _row(20, grad_norm=1.5) + _row(3090) + _row(30, train_runtime=12.5))
    assert rows_counted == [True, False, False, False]


def test_every_needle_of_the_words_reader_made_of_digits_holds_one_the_bare_draw_path_checks():
    from trainsteps.logs import reader, stated

    digit_needles = [needle for needle in stated.NEEDLES + stated.SAID_NEEDLES if needle.isdigit()]
    assert digit_needles  # GPU names such as 4090 and 910B: a draw holding one goes the full way
    assert all(any(short in needle for short in reader.DIGIT_NEEDLES) for needle in digit_needles)
