"""LLaMA-Factory v1 (USE_V1=1) against its own BatchGenerator and BaseTrainer horizon, run at 0.9.5
(tools/record_lf_v1.py -> tests/fixtures/llamafactory_v1/batching_0.9.5.json), and `trainsteps plan` reading its YAML."""

import json
from pathlib import Path

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.lf_v1 import LfV1Spec, plan_lf_v1

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "llamafactory_v1" / "batching_0.9.5.json").read_text())
EXAMPLE = ROOT / "examples" / "llamafactory_v1" / "sft.yaml"


def _spec(case) -> LfV1Spec:
    return LfV1Spec(num_examples=case["rows"], dp=case["dp"], micro_batch_size=case["micro_batch_size"],
                    global_batch_size=case["global_batch_size"], num_train_epochs=case["num_train_epochs"],
                    max_steps=case["max_steps"], save_epochs=case["save_epochs"])


def test_the_recording_is_of_the_release_that_ships_v1():
    assert RECORDED["version"] == "0.9.5"


@pytest.mark.parametrize("case", [c for c in RECORDED["cases"] if "error" not in c and c["per_rank"][0]["len"]],
                         ids=lambda c: f"{c['rows']}x{c['dp']}")
def test_steps_per_epoch_horizon_and_save_steps_match_the_recorded_code(case):
    s = plan_lf_v1(_spec(case))
    assert {r["len"] for r in case["per_rank"]} == {s.run.batches_per_epoch} == {r["batches"] for r in case["per_rank"]}
    assert s.inputs["gradient_accumulation_steps"] == case["num_micro_batch"]
    assert s.run.optimizer_steps == case["num_training_steps"]
    if case["save_steps"]:
        assert s.run.save_steps[0] == case["save_steps"]


@pytest.mark.parametrize("case", [c for c in RECORDED["cases"] if "error" in c or not c["per_rank"][0]["len"]],
                         ids=lambda c: f"{c['rows']}x{c['dp']}")
def test_what_v1_refuses_or_cannot_train_is_refused(case):
    with pytest.raises(InputError):
        plan_lf_v1(_spec(case))


def test_max_steps_past_the_epochs_runs_more_epochs_and_is_warned():
    case = next(c for c in RECORDED["cases"] if c["max_steps"])
    assert case["num_training_steps"] > case["num_train_epochs"] * case["per_rank"][0]["len"]  # the recorded horizon
    s = plan_lf_v1(_spec(case))
    assert "LF_V1_EXTRA_EPOCHS" in [t.code for t in s.warnings]
    assert s.run.epochs_completed > case["num_train_epochs"]


def test_plan_reads_the_example_yaml(run_cli):
    code, out, err = run_cli("plan", "--framework", "llamafactory-v1", str(EXAMPLE), "--num-examples", "5000", "--gpus", "4",
                             "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["run"]["optimizer_steps"] == 500 and data["inputs"]["from"]["max_steps"].startswith("sft.yaml")
    assert data["banner_lines"][0].startswith("Init unified data loader with global batch size 32, micro batch size 2, num micro batch 4")


def test_a_token_packing_strategy_is_refused_in_one_line(run_cli, tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("micro_batch_size: 2\nbatching_strategy: dynamic_batching\nmax_steps: 10\n")
    code, out, err = run_cli("plan", "--framework", "llamafactory-v1", str(path), "--num-examples", "100")
    assert code == 2 and out == "" and err.count("\n") == 1 and "dynamic_batching" in err


def test_a_use_v1_launch_line_plans_v1_with_its_file_and_gpus(run_cli):
    code, out, err = run_cli("plan", "--launch", f"USE_V1=1 NPROC_PER_NODE=4 llamafactory-cli sft {EXAMPLE}",
                             "--num-examples", "5000", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["framework"] == "llamafactory-v1" and data["inputs"]["dp"] == 4
    assert data["run"]["optimizer_steps"] == 500
