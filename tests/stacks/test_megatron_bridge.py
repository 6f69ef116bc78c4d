"""Megatron-Bridge's iteration arithmetic against its own code, run at 0.5.1 and 0.6.0 (tools/record_megatron_bridge.py ->
tests/fixtures/pretrain/megatron_bridge.json), and `trainsteps plan` reading its YAML, overrides and launch line."""

import json
from pathlib import Path

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.megatron_bridge import BridgeSpec, plan_megatron_bridge

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "megatron_bridge.json").read_text())["releases"]
EXAMPLE = ROOT / "examples" / "megatron_bridge" / "sft.yaml"
SCHEDULER = {"lr_warmup_iters": "lr_warmup_iters", "lr_warmup_fraction": "lr_warmup_fraction", "max_steps": "scheduler_max_steps"}


def _spec(release, case) -> BridgeSpec:
    rows, gbs, micro, dp, horizon = case["case"]
    scheduler = {SCHEDULER[k]: v for k, v in case.get("scheduler", {}).items()}
    drop_last = case.get("drop_last", True) if "num_epochs" not in horizon else True
    return BridgeSpec(num_examples=rows, global_batch_size=gbs, micro_batch_size=micro, dp=dp, drop_last=drop_last,
                      eval_interval=case.get("eval_interval"), eval_iters=case.get("eval_iters", 0), release=release, **horizon, **scheduler)


def _cases(kind):
    return [pytest.param(r["version"], c, id=f"{r['version']}-{i}") for r in RECORDED for i, c in enumerate(r["cases"])
            if (kind == "ran") == ("train_iters" in c)]


def test_both_releases_were_recorded():
    assert sorted(r["version"] for r in RECORDED) == ["0.5.1", "0.6.0"]


@pytest.mark.parametrize("release, case", _cases("ran"))
def test_iterations_batches_padding_lr_and_targets_match_megatron_bridge(release, case):
    s = plan_megatron_bridge(_spec(release, case))
    assert s.run.optimizer_steps == case["train_iters"]
    assert s.run.batches_per_epoch == case["global_batches_per_epoch"]
    assert (s.inputs["padded_samples"], s.run.samples_seen) == (case["padded_samples"], case["real_samples"])
    assert (s.inputs["lr_decay_steps"], s.inputs["lr_warmup_steps"]) == (case["lr_decay_steps"], case["lr_warmup_steps"])
    assert (s.inputs["target_train_samples"], s.inputs["target_valid_samples"]) == (case["target_train_samples"], case["target_valid_samples"])
    assert [line for line in s.banner_lines if line.startswith("Setting training")] == case["printed"]
    assert ("MB_WARMUP_CAPPED" in [t.code for t in s.warnings]) == bool(case["warned"])


@pytest.mark.parametrize("release, case", _cases("refused"))
def test_what_megatron_bridge_refuses_is_refused(release, case):
    assert case.get("not_in_release") or case.get("refused")
    with pytest.raises(InputError):
        plan_megatron_bridge(_spec(release, case))


def test_num_epochs_pads_the_last_batch_and_iterates_past_n_times_epochs_over_gbs():
    case = next(c for r in RECORDED if r["version"] == "0.6.0" for c in r["cases"] if c["case"][4] == {"num_epochs": 3})
    assert case["train_iters"] == 48 > 1000 * 3 // 64  # ceil(3 x ceil(1000 / 64)), not 46
    assert case["padded_samples"] == 72 and case["distinct_rows"] == 1000
    assert "MB_PADDED_LAST_BATCH" in [t.code for t in plan_megatron_bridge(_spec("0.6.0", case)).warnings]


def test_train_iters_with_drop_last_never_trains_the_rows_past_the_last_whole_batch():
    case = next(c for r in RECORDED if r["version"] == "0.6.0" for c in r["cases"] if c["case"][4] == {"train_iters": 47})
    assert case["distinct_rows"] == 960  # 40 of 1000 rows never come, however long it cycles (#2391)
    codes = [t.code for t in plan_megatron_bridge(_spec("0.6.0", case)).warnings]
    assert "MB_DROPPED_ROWS" in codes and "MB_CYCLES" in codes


def test_plan_reads_the_example_yaml(run_cli):
    code, out, err = run_cli("plan", "--framework", "megatron-bridge", str(EXAMPLE), "--num-examples", "7144", "--gpus", "8",
                             "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["run"]["optimizer_steps"] == 2 * -(-7144 // 64)
    assert data["inputs"]["dp"] == 4 and data["inputs"]["from"]["num_epochs"].startswith("sft.yaml")


def test_a_launch_line_with_overrides_is_read(run_cli):
    line = f"torchrun --nproc-per-node=8 scripts/training/run_recipe.py --config-file {EXAMPLE} train.num_epochs=null train.train_iters=500"
    code, out, err = run_cli("plan", "--launch", line, "--num-examples", "7144", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["framework"], data["run"]["optimizer_steps"], data["inputs"]["dp"]) == ("megatron-bridge", 500, 4)


def test_num_epochs_before_0_6_0_gets_one_line(run_cli):
    code, out, err = run_cli("plan", "--framework", "megatron-bridge", "--num-examples", "1000", "--global-batch-size", "64",
                             "--num-train-epochs", "2", "--framework-version", "0.5.1")
    assert code == 2 and out == "" and err.count("\n") == 1 and "num_epochs" in err


def test_gpu_hours_count_every_gpu_not_only_the_data_parallel_ranks(run_cli):
    code, out, err = run_cli("plan", "--framework", "megatron-bridge", str(EXAMPLE), "--num-examples", "7144", "--gpus", "8",
                             "--step-time", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["inputs"]["dp"] == 4 and data["inputs"]["world_size"] == 8
    assert data["time"]["gpu_hours"]["expected"] == pytest.approx(data["time"]["wall_seconds"]["expected"] * 8 / 3600, rel=0.01)
