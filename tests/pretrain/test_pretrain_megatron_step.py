"""--step-batch-size-schedule against Megatron-LM core_v0.19.0 run for real (tests/fixtures/pretrain/mcore_step.json)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainsteps.errors import InputError
from trainsteps.frameworks.megatron import BATCH_SCHEDULE, MegatronSpec, plan_megatron
from trainsteps.frameworks.megatron_step import parse_schedule, walk

from .conftest import load

STEP = load("mcore_step")
SCHEDULED = [c for c in STEP["cases"] if c["schedule"] is not None]
RAN = [c for c in SCHEDULED if "error" not in c]
FAILED = [c for c in SCHEDULED if "error" in c]


def _spec(case, **overrides) -> MegatronSpec:
    kwargs = dict(world_size=case["dp"], micro_batch_size=case["mbs"], seq_length=case["S"], train_samples=case.get("train_samples"),
                  train_iters=case.get("train_iters") if case.get("train_samples") is None else None, step_batch_size_schedule=case["schedule"], global_batch_size=case.get("gbs"),
                  decrease_batch_size_if_needed=case.get("decrease", False), rampup_batch_size=tuple(case["rampup"]) if case.get("rampup") else None,
                  train_tokens=10**16, eval_interval=None)
    return MegatronSpec(**{**kwargs, **overrides})


def _name(case) -> str:
    return f"{case['schedule']!r}-S{case['S']}-{case.get('train_samples') or case.get('train_iters')}"


def test_the_recording_is_of_a_release_that_has_the_step_schedule():
    assert BATCH_SCHEDULE.at(STEP["version"].removeprefix("core_v")) == "step"


@pytest.mark.parametrize("case", [c for c in SCHEDULED if "schedule_samples" in c and c["schedule_samples"]], ids=_name)
def test_thresholds_become_the_samples_megatron_parses(case):
    assert [[e.threshold, e.batch] for e in parse_schedule(case["schedule"], case["S"])] == case["schedule_samples"]


@pytest.mark.parametrize("case", RAN, ids=_name)
def test_iterations_and_samples_consumed_match_megatron(case):
    schedule = plan_megatron(_spec(case))
    assert schedule.run.optimizer_steps == case["train_iters"]
    assert schedule.run.samples_seen == case["consumed"]
    assert schedule.run.tokens_seen == case["consumed"] * case["S"]


@pytest.mark.parametrize("case", RAN, ids=_name)
def test_the_batch_changes_at_the_iterations_megatron_changes_it(case):
    d = plan_megatron(_spec(case)).derivation
    changes = [{"iteration": s.value - 1, "consumed": s.params["consumed"], "batch": s.params["batch"], "num_microbatches": s.params["micro"]}
               for s in d.steps if s.key.endswith(".first_iteration")]
    assert changes == case["changes"]


@pytest.mark.parametrize("case", RAN, ids=_name)
def test_printed_lines_match_megatron(case):
    lines = plan_megatron(_spec(case)).banner_lines
    assert lines[1:1 + len(case["log"])] == case["log"]
    for printed in case["printed"]:
        assert printed in lines
    assert f"global batch size: {case['last_batch']:5d}" in lines[-1]


@pytest.mark.parametrize("case", FAILED, ids=_name)
def test_megatron_errors_are_quoted_in_its_words(case):
    with pytest.raises(InputError) as info:
        plan_megatron(_spec(case))
    assert info.value.framework_error == case["error"]["text"]
    if case["stage"] in ("calculator", "setup", "train") and case["error"]["kind"] != "ValueError":
        assert info.value.params["kind"] == case["error"]["kind"]
    if case["stage"] == "train":
        assert info.value.params["iteration"] == case["iteration"] + 1


def test_rampup_is_ignored_from_the_step_release_on():
    case = next(c for c in STEP["cases"] if c["schedule"] is None)
    schedule = plan_megatron(_spec(case, release=STEP["version"].removeprefix("core_v")))
    assert schedule.run.optimizer_steps == case["train_iters"]
    assert schedule.run.samples_seen == case["consumed"]
    assert "MEGATRON_RAMPUP_IGNORED" in [t.code for t in schedule.warnings]


def test_rampup_still_ramps_before_the_step_release():
    case = next(c for c in STEP["cases"] if c["schedule"] is None)
    schedule = plan_megatron(_spec(case, release="0.17.1"))
    assert schedule.run.optimizer_steps != case["train_iters"]
    assert "MEGATRON_RAMPUP_IGNORED" not in [t.code for t in schedule.warnings]


def test_the_step_schedule_does_not_exist_before_its_release():
    with pytest.raises(InputError) as info:
        plan_megatron(_spec(RAN[0], release="0.17.1"))
    assert info.value.msg_id == "mega.error.step_release"
    with pytest.raises(InputError):
        plan_megatron(_spec(RAN[0], code="legacy"))


def test_an_entry_a_batch_jumps_over_and_entries_never_reached_are_flagged():
    skipped = next(c for c in RAN if c["schedule"] == "0:16 150:32 160:48")
    assert "MEGATRON_STEP_SKIPPED" in [t.code for t in plan_megatron(_spec(skipped)).warnings]
    short = next(c for c in RAN if c["schedule"] == "0:64 1M:128")
    assert "MEGATRON_STEP_NOT_REACHED" in [t.code for t in plan_megatron(_spec(short)).warnings]


def test_overshooting_train_samples_and_iteration_based_targets_are_flagged():
    over = next(c for c in RAN if c.get("train_samples") and c["consumed"] > c["train_samples"])
    assert "MEGATRON_STEP_OVERSHOOT" in [t.code for t in plan_megatron(_spec(over)).warnings]
    iters = next(c for c in RAN if c.get("train_samples") is None)
    assert "MEGATRON_STEP_ITERS_TARGET" in [t.code for t in plan_megatron(_spec(iters)).warnings]


def test_the_plan_command_walks_the_schedule_and_quotes_megatron():
    import json

    from click.testing import CliRunner

    from trainsteps.cli.main import cli

    case = RAN[0]
    base = ["plan", "--framework", "megatron", "--step-batch-size-schedule", case["schedule"], "--micro-batch-size", str(case["mbs"]),
            "--world-size", str(case["dp"]), "--seq-length", str(case["S"]), "--train-tokens", str(10**14)]
    result = CliRunner().invoke(cli, [*base, "--train-samples", str(case["train_samples"]), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["run"]["optimizer_steps"], data["run"]["samples_seen"]) == (case["train_iters"], case["consumed"])
    refused = CliRunner().invoke(cli, [*base, "--train-samples", "10", "--global-batch-size", "64"])
    conflict = next(c for c in FAILED if c["stage"] == "validate_args")
    assert refused.exit_code == 2 and conflict["error"]["text"] in refused.output


@given(st.lists(st.tuples(st.integers(1, 5_000), st.integers(1, 300)), min_size=0, max_size=5),
       st.integers(1, 300), st.integers(0, 20_000), st.booleans())
def test_walking_by_stretches_equals_walking_iteration_by_iteration(steps, first, amount, by_samples):
    entries = parse_schedule(" ".join([f"0:{first}"] + [f"{t}:{b}" for t, b in steps]), None)
    if len({e.threshold for e in entries}) != len(entries):
        return
    segments = walk(entries, train_samples=amount, train_iters=None) if by_samples else walk(entries, train_iters=amount % 500)
    consumed = iteration = 0
    batches = []
    while (consumed < amount) if by_samples else (iteration < amount % 500):
        batch = max((e for e in entries if e.threshold <= consumed), key=lambda e: e.threshold).batch
        batches.append(batch)
        consumed += batch
        iteration += 1
    assert [b for s in segments for b in [s.batch] * s.iterations] == batches
