"""`trainsteps plan config.yaml` against real LLaMA-Factory 0.9.5 runs on CPU (tiny Llama, tiny tokenizer), recorded by
`tools/record_wrappers.py llamafactory` into tests/fixtures/wrappers/lf_e2e/<case>/expected_lf<release>.json."""

import json

import pytest

from trainsteps.frameworks import llamafactory as lf

from .conftest import FIXTURES

RECORDINGS = sorted((FIXTURES / "wrappers" / "lf_e2e").glob("*/expected_lf*.json"))
PACKED = {"sft_packing", "pt_blocks"}


def name(path):
    return f"{path.parent.name}-{path.stem.removeprefix('expected_')}"


def plan_json(run_cli, recording):
    recorded = json.loads(recording.read_text())
    launch = []
    if recorded.get("nproc_per_node", 1) > 1:  # the run was started the way users start several ranks
        launch = ["--launch", f"FORCE_TORCHRUN=1 NPROC_PER_NODE={recorded['nproc_per_node']} llamafactory-cli train config.yaml"]
    code, out, err = run_cli("plan", "config.yaml", "--transformers", recorded["transformers"], "--framework-version", recorded["llamafactory"],
                             "--format", "json", *launch, cwd=recording.parent)
    assert code == 0, err
    return recorded, json.loads(out)


@pytest.mark.parametrize("recording", [r for r in RECORDINGS if r.parent.name not in PACKED], ids=name)
def test_the_plan_prints_the_banner_llamafactory_printed(run_cli, recording):
    pytest.importorskip("numpy")  # replaying the seeded split / interleave draw needs numpy (the `data` extra); without it: a range
    recorded, planned = plan_json(run_cli, recording)
    banner = recorded["banner"]
    assert planned["banner"]["Num examples"] == banner["Num examples"]
    assert planned["banner"]["Total optimization steps"] == banner["Total optimization steps"]
    assert planned["banner"]["Num Epochs"] == banner["Num Epochs"]
    assert planned["config"]["estimate"] is None  # no packing: the count does not depend on token lengths


@pytest.mark.parametrize("recording", [r for r in RECORDINGS if r.parent.name in PACKED], ids=name)
def test_packed_counts_are_reported_as_estimates_without_a_tokenizer(run_cli, recording):
    recorded, planned = plan_json(run_cli, recording)
    assert planned["config"]["estimate"] is not None
    assert recorded["banner"]["Num examples"] == f"{recorded['pipeline']['train_rows']:,}"


@pytest.mark.parametrize("recording", sorted((FIXTURES / "wrappers" / "lf_e2e" / "sft_packing").glob("expected_lf*.json")), ids=name)
def test_sft_packing_on_llamafactorys_own_lengths_gives_its_packed_count(recording):
    recorded = json.loads(recording.read_text())
    cap = lf.pack_capacity(recorded["llamafactory"], 96, packing_set_explicitly=True)
    assert lf.sft_packed_rows(recorded["unpacked"]["train_lengths"], cap) == recorded["pipeline"]["train_rows"]


@pytest.mark.parametrize("recording", sorted((FIXTURES / "wrappers" / "lf_e2e" / "pt_blocks").glob("expected_lf*.json")), ids=name)
def test_pretraining_blocks_on_llamafactorys_own_lengths_give_its_block_count(recording):
    recorded = json.loads(recording.read_text())
    block = lf.pt_block_size(recorded["llamafactory"], 128, packing_set_explicitly=False)
    lengths = recorded["unpacked"]["train_lengths"]
    assert lf.pt_blocks(lengths, block, batch_size=250) == recorded["pipeline"]["train_rows"]
    assert lf.pt_blocks(lengths, block, batch_size=1000) != recorded["pipeline"]["train_rows"]  # preprocessing_batch_size matters


@pytest.mark.parametrize("recording", sorted((FIXTURES / "wrappers" / "lf_e2e" / "sft_eval_dataset").glob("expected_lf*.json")), ids=name)
def test_the_eval_dataset_has_the_rows_llamafactory_kept_and_each_evaluation_is_costed_over_them(run_cli, recording):
    recorded, planned = plan_json(run_cli, recording)
    assert planned["config"]["eval_examples"] == recorded["pipeline"]["eval_rows"]  # max_samples cap, less the dropped rows
    code, out, err = run_cli("plan", "config.yaml", "--transformers", recorded["transformers"], "--framework-version",
                             recorded["llamafactory"], "--params", "1e9", "--gpu", "h100-sxm", "--seq-length", "128",
                             cwd=recording.parent)
    assert code == 0, err
    assert f"evaluation set: {recorded['pipeline']['eval_rows']:,} rows, read from the config's eval_dataset" in out
    assert "evaluations" in out and "left out" not in out.split("evaluations", 1)[1].splitlines()[0]
