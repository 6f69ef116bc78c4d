"""ms-swift's Megatron iterations against its own init_iters (4.6.0) and _get_iters (3.12.6) (tools/record_swift_megatron.py ->
tests/fixtures/pretrain/swift_megatron.json), and `trainsteps plan` reading its launch line."""

import json
from pathlib import Path

import pytest

from trainsteps.frameworks.swift_megatron import SwiftMegatronSpec, plan_swift_megatron

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "swift_megatron.json").read_text())["releases"]
EXAMPLE = ROOT / "examples" / "swift_megatron" / "sft.sh"


def _spec(release, case) -> SwiftMegatronSpec:
    rows, micro, dp, gbs, epochs, strategy, rlhf, generations = case["case"]
    return SwiftMegatronSpec(num_examples=rows, dp=dp, micro_batch_size=micro, global_batch_size=gbs, epochs=epochs,
                             save_strategy=strategy, rlhf_type=rlhf, num_generations=generations, release=release)


@pytest.mark.parametrize("release, case", [pytest.param(r["version"], c, id=f"{r['version']}-{i}") for r in RECORDED
                                           for i, c in enumerate(r["cases"])])
def test_iterations_and_epoch_intervals_match_ms_swift(release, case):
    s = plan_swift_megatron(_spec(release, case))
    assert s.run.optimizer_steps == case["train_iters"]
    assert (s.inputs["save_every"], s.inputs["eval_every"]) == (case["save_steps"], case["eval_steps"])


def test_both_releases_were_recorded():
    assert sorted(r["version"] for r in RECORDED) == ["3.12.6", "4.6.0"]


def test_the_7381_packed_rows_give_its_26_iterations_and_the_rounding_is_warned():
    case = next(c for c in RECORDED[-1]["cases"] if c["case"][0] == 1700)
    assert case["train_iters"] == 26
    assert [t.code for t in plan_swift_megatron(_spec("4.6.0", case)).warnings] == ["SWIFT_MEGATRON_ROUNDED"]


def test_grpo_counts_each_prompt_num_generations_times():
    case = next(c for c in RECORDED[-1]["cases"] if c["case"][6] == "grpo")
    assert case["train_iters"] == 500 * 8 * 2 // 32
    assert "SWIFT_MEGATRON_GENERATIONS" in [t.code for t in plan_swift_megatron(_spec("4.6.0", case)).warnings]


def test_the_example_launch_line_is_planned(run_cli):
    line = EXAMPLE.read_text().split("\n", 1)[1]
    code, out, err = run_cli("plan", "--launch", line, "--num-examples", "1700", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["framework"], data["run"]["optimizer_steps"], data["run"]["save_steps"]) == ("swift-megatron", 26, [26])


@pytest.mark.parametrize("release, name", [("4.6.0", "max_epochs"), ("3.12.6", "num_train_epochs")])
def test_the_epochs_option_of_the_other_release_gets_one_line(run_cli, release, name):
    code, out, err = run_cli("plan", "--launch", f"megatron sft --{name} 2", "--num-examples", "1000", "--framework-version", release)
    assert code == 2 and out == "" and err.count("\n") == 1 and name in err


def test_train_iters_given_with_epochs_is_replaced_as_init_iters_does_and_warned():
    for release in RECORDED:
        case = next(c for c in release["cases"] if c["train_iters_given"])
        assert case["train_iters"] != case["train_iters_given"]  # ms-swift's own code replaced it
        spec = _spec(release["version"], case)
        s = plan_swift_megatron(SwiftMegatronSpec(**{**{k: getattr(spec, k) for k in spec.__slots__}, "train_iters": case["train_iters_given"]}))
        assert s.run.optimizer_steps == case["train_iters"]
        assert "SWIFT_MEGATRON_TRAIN_ITERS_REPLACED" in [t.code for t in s.warnings]


def test_fractional_epochs_get_ms_swift_s_own_one_line(run_cli):
    code, out, err = run_cli("plan", "--framework", "swift-megatron", "--num-examples", "300", "--num-train-epochs", "1.5")
    assert code == 2 and out == "" and err.count("\n") == 1 and "ms-swift" in err


END = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "swift_megatron_end.json").read_text())["releases"]
"""Where the run stops: ms-swift's cyclic iterator driven by its training loop (tools/record_swift_megatron_end.py)."""


def _end_spec(release, case) -> SwiftMegatronSpec:
    return SwiftMegatronSpec(num_examples=case["rows"], dp=case["dp"], micro_batch_size=case["micro_batch_size"],
                             global_batch_size=case["global_batch_size"], epochs=case["epochs"], train_iters=case["train_iters_given"],
                             streaming=case["streamed"], release=release)


@pytest.mark.parametrize("release, case", [pytest.param(r["version"], c, id=f"{r['version']}-{i}") for r in END
                                           for i, c in enumerate(r["cases"])])
def test_the_iterations_trained_match_where_ms_swift_stops(release, case):
    s = plan_swift_megatron(_end_spec(release, case))
    assert s.run.optimizer_steps == case["iterations_trained"]
    extra = "SWIFT_MEGATRON_EXTRA_STEP" in [t.code for t in s.warnings]
    assert extra == (case["streamed"] and case["iterations_trained"] < case["train_iters_given"])


def test_a_streamed_run_trains_at_least_one_step_more_than_the_same_rows_with_a_length_which_stop_at_the_floor():
    for release in END:
        by_shape = {}
        for case in release["cases"]:
            by_shape.setdefault((case["rows"], case["micro_batch_size"], case["dp"], case["global_batch_size"], case["epochs"]),
                                {})[case["streamed"]] = case["iterations_trained"]
        pairs = [(shape, runs) for shape, runs in by_shape.items() if len(runs) == 2]
        assert pairs and all(runs[True] >= runs[False] + 1 for _, runs in pairs)  # the stream also keeps its short micro-batch
        assert all(c["iterations_trained"] == c["train_iters_before"] for c in release["cases"] if not c["streamed"])


def test_a_streamed_run_without_train_iters_is_refused_in_one_line(run_cli):
    code, out, err = run_cli("plan", "--framework", "swift-megatron", "--num-examples", "1000", "--num-train-epochs", "2", "--streaming")
    assert code == 2 and out == "" and err.count("\n") == 1 and "train_iters" in err


def test_plan_streaming_flag_stops_one_iteration_after_the_epochs(run_cli):
    code, out, err = run_cli("plan", "--framework", "swift-megatron", "--num-examples", "1001", "--micro-batch-size", "2", "--gpus", "2",
                             "--global-batch-size", "8", "--num-train-epochs", "1", "--train-iters", "100000", "--streaming",
                             "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    recorded = next(c for c in END[-1]["cases"] if c["streamed"] and c["rows"] == 1001)
    assert data["run"]["optimizer_steps"] == recorded["iterations_trained"] == 126
    assert "SWIFT_MEGATRON_EXTRA_STEP" in [w["code"] for w in data["warnings"]]


def test_a_launch_line_with_streaming_true_plans_the_streamed_stop(run_cli):
    line = "NPROC_PER_NODE=2 megatron sft --micro_batch_size 2 --global_batch_size 8 --num_train_epochs 1 --train_iters 100000 --streaming true"
    code, out, err = run_cli("plan", "--launch", line, "--num-examples", "1001", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run"]["optimizer_steps"] == 126
