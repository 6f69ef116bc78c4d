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
