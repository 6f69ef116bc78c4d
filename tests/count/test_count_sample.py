"""`--sample N`: estimates from random rows read by seeking, whose 95% intervals cover the truth about 95% of the time."""

import io

from trainsteps.data.count import CountOptions, count
from trainsteps.data.sample import estimate, line_at

from .conftest import TINY_TOKENIZER, alpaca_rows, text_rows, write_jsonl


def test_the_line_containing_an_offset_is_found_from_either_side():
    data = b'{"a": 1}\n{"bb": 22}\n{"c": 3}'
    f = io.BytesIO(data)
    assert line_at(f, 0) == (0, b'{"a": 1}\n')
    assert line_at(f, 8) == (0, b'{"a": 1}\n')  # the newline belongs to its line
    assert line_at(f, 9) == (9, b'{"bb": 22}\n')
    assert line_at(f, 15) == (9, b'{"bb": 22}\n')
    assert line_at(f, len(data) - 1) == (20, b'{"c": 3}')  # last line without a newline


def _coverage(path, seeds, n, **kw):
    truth = count(CountOptions([str(path)], str(TINY_TOKENIZER), progress=False, **kw))
    true = {"examples": truth.examples, "tokens": int(truth.lengths.tokens.sum()),
            "supervised_tokens": int(truth.lengths.supervised.sum())}
    hits = {key: 0 for key in true}
    for seed in seeds:
        _, summary = estimate(CountOptions([str(path)], str(TINY_TOKENIZER), progress=False, **kw), n, seed)
        for key, value in true.items():
            hits[key] += summary[key]["low"] <= value <= summary[key]["high"]
    return {key: h / len(seeds) for key, h in hits.items()}


def test_stated_95_percent_intervals_cover_the_true_counts_about_95_percent_of_the_time(tmp_path):
    # 300 seeds: a true coverage of 95% lands in [0.91, 0.985] with probability > 0.999
    path = write_jsonl(tmp_path / "corpus.jsonl", text_rows(4000, seed=11, high=60))
    coverage = _coverage(path, range(300), 300)
    assert all(0.91 <= c <= 0.985 for c in coverage.values()), coverage


def test_chat_rows_estimate_supervised_tokens_with_the_same_coverage(tmp_path):
    path = write_jsonl(tmp_path / "alpaca.jsonl", alpaca_rows(2000, seed=4))
    coverage = _coverage(path, range(100), 300)
    assert all(0.88 <= c <= 0.99 for c in coverage.values()), coverage  # 100 seeds: 100/100 would be too wide


def test_a_sample_reads_only_a_small_part_of_the_file(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "corpus.jsonl", text_rows(20000, seed=1, high=50))
    read = []
    import builtins

    real_open = builtins.open

    class Spy:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            block = self.f.read(n)
            read.append(len(block))
            return block

        def __getattr__(self, name):
            return getattr(self.f, name)

    def spy_open(file, mode="r", *a, **kw):
        f = real_open(file, mode, *a, **kw)
        return Spy(f) if str(file) == str(path) and "b" in mode else f

    monkeypatch.setattr(builtins, "open", spy_open)
    from trainsteps.data.sample import draw_lines

    draws = draw_lines([str(path)], 50, seed=0)
    assert len(draws) == 50
    assert sum(read) < path.stat().st_size / 2  # seeks, not a scan
