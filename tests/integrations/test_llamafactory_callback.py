"""`TrainstepsCallback` inside real LLaMA-Factory SFT runs: `run_exp(args, callbacks=[TrainstepsCallback()])`.

Recorded by tools/record_lf_callback.py (LLaMA-Factory 0.9.5, transformers 5.6.0, CPU, one process and two torchrun
ranks) into tests/fixtures/integrations/llamafactory_callback.json. `counted_in_forward` is the recorder's own count,
made inside `LlamaForCausalLM.forward` on every rank for training forwards only; the callback never sees it.
"""

from __future__ import annotations

import re

import pytest

import trainsteps

from ..conftest import load_fixture

RECORDING = load_fixture("integrations", "llamafactory_callback.json")
RUNS = RECORDING["runs"]


def run_id(run):
    return f"{run['world_size']}rank"


def logged(run):
    """The Trainer's log entries that carry the callback's values."""
    entries = [e for e in run["log_history"] if "samples_seen" in e]
    assert entries, "the callback added nothing to LLaMA-Factory's logs"
    return entries


def dataset_size(run):
    return int(run["banner"]["Num examples"].replace(",", ""))


def planned(run):
    config = RECORDING["config"]
    return trainsteps.plan(
        num_examples=dataset_size(run),
        per_device_train_batch_size=config["per_device_train_batch_size"],
        gradient_accumulation_steps=config["gradient_accumulation_steps"],
        world_size=run["world_size"],
        num_train_epochs=config["num_train_epochs"],
        transformers=RECORDING["transformers"],
    )


def test_the_recording_covers_one_process_and_two_ranks_and_says_how_to_regenerate():
    assert [run["world_size"] for run in RUNS] == [1, 2]
    assert RECORDING["llamafactory"] == "0.9.5"
    assert "tools/record_lf_callback.py" in RECORDING["generated_by"]


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_the_final_counts_equal_what_the_model_received(run):
    final, counted = logged(run)[-1], run["counted_in_forward"]
    assert counted["rows"] > 0
    assert final["samples_seen"] == counted["rows"]
    assert final["tokens_seen"] == counted["non_pad_tokens"] == counted["attention_mask_sum"]
    for rank in run["callback_last"]:  # every rank holds the sum over all ranks
        assert (rank["samples_seen"], rank["tokens_seen"]) == (counted["rows"], counted["non_pad_tokens"])


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_every_log_entry_counts_the_training_forwards_up_to_its_step_and_no_evaluation(run):
    by_step = {s["step"]: s for s in run["counted_in_forward"]["per_step"]}
    entries = logged(run)
    assert any(any(k.startswith("eval_") for k in e) for e in entries), "the recorded run evaluated"
    for entry in entries:
        counted = by_step[entry["step"]]
        assert (entry["samples_seen"], entry["tokens_seen"]) == (counted["rows"], counted["non_pad_tokens"]), entry


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_equivalent_epoch_is_samples_seen_over_the_dataset_size(run):
    size = dataset_size(run)
    assert all(rank["dataset_size"] == size for rank in run["callback_last"])
    for entry in logged(run):
        assert entry["equivalent_epoch"] == pytest.approx(entry["samples_seen"] / size, abs=1e-6)


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_the_plan_for_the_recorded_settings_prints_llamafactorys_banner(run):
    schedule = planned(run)
    for key, value in run["banner"].items():
        assert schedule.banner[key] == value, key


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_the_plan_gives_the_steps_and_rows_of_the_run(run):
    run_facts = planned(run).run
    assert run_facts.optimizer_steps == logged(run)[-1]["step"] == run["counted_in_forward"]["per_step"][-1]["step"]
    assert run_facts.samples_seen == run["counted_in_forward"]["rows"]


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_the_callback_logged_the_plan_once_and_without_warnings(run):
    lines = run["trainsteps_lines"]
    assert len(lines) == 1, lines  # rank 0 only
    match = re.search(r"trainsteps: (\d+) optimizer steps planned \(transformers ([\d.]+),.*samples ([\d,]+)", lines[0])
    assert match, lines[0]
    assert int(match.group(1)) == int(run["banner"]["Total optimization steps"].replace(",", ""))
    assert match.group(2) == RECORDING["transformers"]
    assert int(match.group(3).replace(",", "")) == run["counted_in_forward"]["rows"]
