"""LLaMA-Factory v1 (USE_V1=1) against its own BatchGenerator, BaseTrainer horizon and epoch loop, run at 0.9.5 and at
main ff6d4d1 (tools/record_lf_v1.py -> tests/fixtures/llamafactory_v1/batching_*.json), and `trainsteps plan` reading its YAML."""

import json
import math
from pathlib import Path

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.lf_v1 import LfV1Spec, plan_lf_v1

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "llamafactory_v1"
RECORDINGS = {"0.9.5": json.loads((FIXTURES / "batching_0.9.5.json").read_text()),
              "main": json.loads((FIXTURES / "batching_main-ff6d4d1.json").read_text())}
RECORDED = RECORDINGS["0.9.5"]
EXAMPLE = ROOT / "examples" / "llamafactory_v1" / "sft.yaml"


def _spec(case, release: str = "0.9.5", **extra) -> LfV1Spec:
    return LfV1Spec(num_examples=case["rows"], dp=case["dp"], micro_batch_size=case["micro_batch_size"],
                    global_batch_size=case["global_batch_size"], num_train_epochs=case["num_train_epochs"],
                    max_steps=case.get("max_steps"), save_epochs=case.get("save_epochs"), release=release, **extra)


def _cases(kind: str, keep):
    return [pytest.param(release, case, id=f"{release}-{case['rows']}x{case['dp']}")
            for release, recorded in RECORDINGS.items() for case in recorded[kind] if keep(case)]


def test_the_recordings_are_of_the_release_that_ships_v1_and_of_a_named_commit_of_main():
    assert RECORDINGS["0.9.5"]["version"] == "0.9.5" and RECORDINGS["main"]["version"] == "main@ff6d4d1"


@pytest.mark.parametrize(("release", "case"), _cases("cases", lambda c: "error" not in c and c["per_rank"][0]["len"]))
def test_steps_per_epoch_horizon_and_save_steps_match_the_recorded_code(release, case):
    s = plan_lf_v1(_spec(case, release))
    assert {r["len"] for r in case["per_rank"]} == {s.run.batches_per_epoch} == {r["batches"] for r in case["per_rank"]}
    assert s.inputs["gradient_accumulation_steps"] == case["num_micro_batch"]
    assert s.run.optimizer_steps == case["num_training_steps"]
    if case["save_steps"]:
        assert s.run.save_steps[0] == case["save_steps"]


@pytest.mark.parametrize(("release", "case"), _cases("cases", lambda c: "error" in c or not c["per_rank"][0]["len"]))
def test_what_v1_refuses_or_cannot_train_is_refused(release, case):
    with pytest.raises(InputError):
        plan_lf_v1(_spec(case, release))


@pytest.mark.parametrize(("release", "case"), _cases("drop_cases", lambda c: True))
def test_unsupervised_rows_cost_main_an_extra_epoch_as_recorded_and_095_none(release, case):
    s = plan_lf_v1(_spec(case, release, unsupervised_rows=case["unsupervised_rows"], cutoff_len=case["cutoff_len"]))
    recorded = case["steps_per_loop_epoch"]
    assert s.run.optimizer_steps == case["num_training_steps"] == sum(recorded)  # the horizon never moves
    assert len(s.run.epoch_end_steps) == len(recorded)  # epochs the loop starts
    codes = [t.code for t in s.warnings]
    if release == "main":
        assert len(recorded) > case["num_train_epochs"] and "LF_V1_EXTRA_EPOCH_DROPS" in codes
        estimate, batch = s.run.epoch_end_steps[0], case["global_batch_size"] // case["dp"]
        used = case["rows"] // case["dp"] // batch * batch
        share = case["unsupervised_rows"] / case["rows"]
        spread = 3 * math.sqrt(used * share * (1 - share)) / batch  # which rows a rank keeps follows the shuffle
        assert all(abs(steps - estimate) <= 1 + spread for steps in recorded[:-1])
    else:
        assert recorded == [case["len"]] * case["num_train_epochs"] and "LF_V1_ZERO_LOSS_ROWS" in codes
        assert list(s.run.epoch_end_steps) == [case["len"] * (i + 1) for i in range(len(recorded))]


def test_main_warns_of_its_drop_rule_until_the_unsupervised_rows_are_given_and_095_does_not():
    case = RECORDINGS["main"]["drop_cases"][0]
    assert "LF_V1_DROPS_UNSUPERVISED" in [t.code for t in plan_lf_v1(_spec(case, "main")).warnings]
    assert "LF_V1_DROPS_UNSUPERVISED" not in [t.code for t in plan_lf_v1(_spec(case, "main", unsupervised_rows=0)).warnings]
    assert not [t for t in plan_lf_v1(_spec(case, "0.9.5")).warnings if "UNSUPERVISED" in t.code]


def test_an_epoch_that_main_cannot_fill_after_drops_is_refused_since_its_loop_never_ends():
    case = RECORDINGS["main"]["drop_cases"][-1]
    with pytest.raises(InputError) as refused:
        plan_lf_v1(_spec(case, "main", unsupervised_rows=case["rows"] - 3))
    assert refused.value.msg_id == "lfv1.error.never_ends"


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


def test_the_release_is_chosen_with_framework_version_and_an_unknown_one_is_refused(run_cli):
    base = ("plan", "--framework", "llamafactory-v1", "--num-examples", "1000", "--unsupervised-rows", "100", "--format", "json")
    code, out, err = run_cli(*base, "--framework-version", "v0.9.5")
    assert code == 0, err
    assert json.loads(out)["version"] == "0.9.5"
    code, out, err = run_cli(*base, "--framework-version", "0.9.3")
    assert code == 2 and out == "" and err.count("\n") == 1 and "0.9.3" in err
