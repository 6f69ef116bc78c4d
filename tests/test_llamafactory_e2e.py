"""`trainsteps plan config.yaml` against real LLaMA-Factory 0.9.5 runs on CPU (tiny Llama, tiny tokenizer), recorded by
`tools/record_wrappers.py llamafactory` into tests/fixtures/wrappers/lf_e2e/<case>/expected.json."""

import json

import pytest

from conftest import FIXTURES
from trainsteps.frameworks import llamafactory as lf

CASES = sorted(p for p in (FIXTURES / "wrappers" / "lf_e2e").iterdir() if (p / "expected.json").is_file())
PACKED = {"sft_packing", "pt_blocks"}


def plan_json(run_cli, case):
    recorded = json.loads((case / "expected.json").read_text())
    code, out, err = run_cli("plan", "config.yaml", "--transformers", recorded["transformers"], "--format", "json", cwd=case)
    assert code == 0, err
    return recorded, json.loads(out)


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in PACKED], ids=lambda c: c.name)
def test_the_plan_prints_the_banner_llamafactory_printed(run_cli, case):
    recorded, planned = plan_json(run_cli, case)
    banner = recorded["banner"]
    assert planned["banner"]["Num examples"] == banner["Num examples"]
    assert planned["banner"]["Total optimization steps"] == banner["Total optimization steps"]
    assert planned["banner"]["Num Epochs"] == banner["Num Epochs"]
    assert planned["config"]["estimate"] is None  # no packing: the count does not depend on token lengths


@pytest.mark.parametrize("case", [c for c in CASES if c.name in PACKED], ids=lambda c: c.name)
def test_packed_counts_are_reported_as_estimates_without_a_tokenizer(run_cli, case):
    recorded, planned = plan_json(run_cli, case)
    assert planned["config"]["estimate"] is not None
    assert recorded["banner"]["Num examples"] == f"{recorded['pipeline']['train_rows']:,}"


def test_sft_packing_on_llamafactorys_own_lengths_gives_its_packed_count():
    recorded = json.loads((FIXTURES / "wrappers" / "lf_e2e" / "sft_packing" / "expected.json").read_text())
    cap = lf.pack_capacity("0.9.5", 96, packing_set_explicitly=True)
    assert lf.sft_packed_rows(recorded["unpacked"]["train_lengths"], cap) == recorded["pipeline"]["train_rows"]


def test_pretraining_blocks_on_llamafactorys_own_lengths_give_its_block_count():
    recorded = json.loads((FIXTURES / "wrappers" / "lf_e2e" / "pt_blocks" / "expected.json").read_text())
    block = lf.pt_block_size("0.9.5", 128, packing_set_explicitly=False)
    lengths = recorded["unpacked"]["train_lengths"]
    assert lf.pt_blocks(lengths, block, batch_size=250) == recorded["pipeline"]["train_rows"]
    assert lf.pt_blocks(lengths, block, batch_size=1000) != recorded["pipeline"]["train_rows"]  # preprocessing_batch_size matters
