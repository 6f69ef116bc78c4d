"""NeMo Automodel's StepScheduler against its own code, run at 0.5.0 and 0.7.0 (tools/record_automodel.py ->
tests/fixtures/pretrain/automodel.json), and `trainsteps plan` reading its YAML."""

import json
from pathlib import Path

import pytest

from trainsteps.frameworks.automodel import AutomodelSpec, plan_automodel

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "automodel.json").read_text())["releases"]
EXAMPLE = ROOT / "examples" / "automodel" / "llama3_2_1b_squad.yaml"
_YAML_NAMES = {"num_epochs", "max_steps", "ckpt_every_steps", "val_every_steps", "save_checkpoint_every_epoch",
               "validate_on_checkpoint"}


def _cases():
    return [pytest.param(r["version"], c, id=f"{r['version']}-{i}") for r in RECORDED for i, c in enumerate(r["cases"])
            if "not_in_release" not in c]


def _spec(release, case) -> AutomodelSpec:
    keys = case["keys"]
    assert set(keys) <= _YAML_NAMES
    return AutomodelSpec(num_examples=case["rows"], dp=case["dp"], local_batch_size=case["local_batch_size"],
                         global_batch_size=case["global_batch_size"], num_epochs_given="num_epochs" in keys,
                         release=release, **keys)


def test_both_releases_were_recorded():
    assert sorted(r["version"] for r in RECORDED) == ["0.5.0", "0.7.0"]


@pytest.mark.parametrize("release, case", _cases())
def test_steps_epochs_checkpoints_and_validations_match_the_step_scheduler(release, case):
    s = plan_automodel(_spec(release, case))
    assert s.run.batches_per_epoch == case["dataloader_len"]
    assert s.inputs["gradient_accumulation_steps"] == case["grad_acc_steps"]
    assert (s.run.optimizer_steps, s.run.max_steps, s.run.epochs_planned) == (case["steps_run"], case["max_steps"], case["num_epochs"])
    assert s.run.save_steps == case["ckpt_steps"]
    assert s.run.eval_steps == case["val_steps"]
    assert f"- Checkpoint every steps: {case['ckpt_every_steps']}" in s.banner_lines


@pytest.mark.parametrize("release", ["0.5.0", "0.7.0"])
def test_max_steps_alone_is_capped_by_the_default_ten_epochs_and_warned(release):
    case = next(c for r in RECORDED if r["version"] == release for c in r["cases"] if c["keys"] == {"max_steps": 5000})
    assert case["steps_run"] < case["max_steps"]  # the real scheduler stops early
    s = plan_automodel(_spec(release, case))
    assert [t.code for t in s.warnings] == ["AUTOMODEL_DEFAULT_EPOCHS_CAP"]
    assert "- Max train steps: 5000" in s.banner_lines


def test_validate_on_checkpoint_false_is_refused_before_0_7_0():
    from trainsteps.errors import InputError

    with pytest.raises(InputError):
        plan_automodel(AutomodelSpec(num_examples=100, validate_on_checkpoint=False, release="0.5.0"))


def test_plan_reads_the_example_yaml(run_cli):
    code, out, err = run_cli("plan", "--framework", "automodel", str(EXAMPLE), "--num-examples", "20000", "--gpus", "8",
                             "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["framework"] == "automodel"
    assert data["inputs"]["from"]["max_steps"].startswith("llama3_2_1b_squad.yaml")
    assert [w["code"] for w in data["warnings"]] == ["AUTOMODEL_DEFAULT_EPOCHS_CAP"]


def test_num_epochs_null_in_an_override_runs_max_steps(run_cli):
    code, out, err = run_cli("plan", "--framework", "automodel", str(EXAMPLE), "--num-examples", "20000", "--gpus", "8",
                             "--set", "step_scheduler.num_epochs=null", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["run"]["optimizer_steps"] == 5000 and data["warnings"] == []


def test_a_global_batch_automodel_refuses_gets_one_line(run_cli):
    code, out, err = run_cli("plan", "--framework", "automodel", "--num-examples", "1000", "--gpus", "3")
    assert code == 2 and out == "" and err.count("\n") == 1 and "32" in err


def test_gpu_hours_count_every_gpu_not_only_the_data_parallel_ranks(run_cli):
    code, out, err = run_cli("plan", "--framework", "automodel", "--num-examples", "1000", "--gpus", "8", "--tensor-parallel-size", "2",
                             "--step-time", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["inputs"]["dp"] == 4 and data["time"]["gpus"] == 8
