"""ms-swift's train sampler, against its own BatchSamplerShard (tools/record_wrappers.py swift)."""

import pytest

import trainsteps
from trainsteps.derivation import Derivation
from trainsteps.frameworks import swift

from .conftest import load_fixture

RECORDED = load_fixture("wrappers", "swift_sampler.json")


@pytest.mark.parametrize("case", RECORDED["sampler"], ids=lambda c: f"n{c['n']}-bs{c['batch_size']}-w{c['world_size']}-drop{c['drop_last']}")
def test_the_trainer_sees_the_loader_length_of_swifts_sampler(case):
    rows = swift.loader_rows(Derivation(), case["n"], case["world_size"])
    s = trainsteps.plan(num_examples=rows, per_device_train_batch_size=case["batch_size"], world_size=case["world_size"],
                        dataloader_drop_last=case["drop_last"], num_train_epochs=1)
    assert s.run.batches_per_epoch == case["len"]


def test_the_remainder_of_n_over_world_size_is_dropped_not_padded():
    hf = trainsteps.plan(num_examples=10, per_device_train_batch_size=1, world_size=4, num_train_epochs=1)
    ms = trainsteps.plan(num_examples=swift.loader_rows(Derivation(), 10, 4), per_device_train_batch_size=1, world_size=4, num_train_epochs=1)
    assert ms.run.batches_per_epoch < hf.run.batches_per_epoch


def test_split_ratio_default_changed_in_3_6():
    assert swift.SPLIT_RATIO_DEFAULT.at("3.5.0") == 0.01
    assert swift.SPLIT_RATIO_DEFAULT.at("3.6.0") == 0.0


ARGS = load_fixture("wrappers", "swift_args.json")


@pytest.mark.parametrize("case", ARGS["default_gradient_accumulation"], ids=lambda c: f"bs{c['per_device_train_batch_size']}")
def test_the_default_accumulation_aims_at_a_global_batch_of_16(case):
    got = swift.default_gradient_accumulation(Derivation(), case["per_device_train_batch_size"], case["world_size"])
    assert got == case["gradient_accumulation_steps"]


@pytest.mark.parametrize("case", ARGS["split"], ids=lambda c: f"n{c['rows']}-s{c['sample']}-r{c['ratio']}")
def test_split_dataset_ratio_takes_a_floor_share_of_each_dataset(case):
    assert swift.split_rows(Derivation(), "d", case["rows"], case["sample"], case["ratio"]) == case["train"]


def test_dataset_hash_n_takes_whole_copies_then_a_draw_without_replacement(tmp_path, run_cli):
    """ms-swift sample_dataset (read from its source): N = floor(N / len) copies + N mod len rows drawn without
    replacement; the derivation gives each source's rows, copies and passes per epoch."""
    import json

    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"query": f"q{i}", "response": "r"}) + "\n" for i in range(10)))
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"query": f"q{i}", "response": "r"}) + "\n" for i in range(40)))
    line = (f"swift sft --model m --dataset {tmp_path / 'a.jsonl'}#25 {tmp_path / 'b.jsonl'}#30 "
            "--per_device_train_batch_size 5 --split_dataset_ratio 0")
    code, out, err = run_cli("plan", "--launch", line, "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["inputs"]["num_examples"] == 55
    steps = {s["key"]: s for s in plan["config"]["derivation"]}
    a, b = steps[f"rows_sampled[{tmp_path / 'a.jsonl'}]"], steps[f"rows_sampled[{tmp_path / 'b.jsonl'}]"]
    assert a["value"] == 25 and a["substituted"] == "2 x 10 + 5" and "2.5 times" in a["why"]
    assert b["value"] == 30 and b["substituted"] == "0 x 40 + 30" and "0.75 times" in b["why"]
