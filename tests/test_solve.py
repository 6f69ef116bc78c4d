"""`trainsteps solve`: the max_steps for a target, checked against the plan engine itself."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainsteps
from trainsteps.errors import InputError
from trainsteps.solver import coverage, covers, layouts, solve
from trainsteps.spec import RunSpec

RELEASES = ["4.44.2", "4.49.0", "4.52.4", "5.23.0"]


def stream(**kw) -> RunSpec:
    return RunSpec(streaming=True, **kw)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), bs=st.integers(1, 16), ga=st.integers(1, 8), world=st.integers(1, 4),
       epochs=st.sampled_from([0.5, 1, 2, 3, 2.5]), version=st.sampled_from(RELEASES), streaming=st.booleans())
def test_ceil_is_the_least_max_steps_that_reaches_the_epochs(n, bs, ga, world, epochs, version, streaming):
    spec = RunSpec(num_examples=n, per_device_train_batch_size=bs, gradient_accumulation_steps=ga, world_size=world,
                   streaming=streaming, transformers=version)
    try:
        s = solve(spec, "epochs", epochs)
    except InputError as exc:
        assert exc.msg_id == "solve.error.never_steps"
        assert trainsteps.plan(replace(spec, max_steps=1)).run.batches_per_epoch < ga  # a pass is shorter than one window
        return
    assert s.ceil.epochs >= epochs - 1e-9
    if s.ceil.max_steps > 1:
        assert coverage(spec, s.ceil.max_steps - 1).epochs < epochs
    if s.floor:
        assert s.floor.max_steps == s.ceil.max_steps - 1 and s.floor.epochs < epochs
    assert s.exact == (abs(s.ceil.epochs - epochs) < 1e-9)


def test_a_stream_of_tokens_is_solved_in_packed_rows():
    spec = stream(dataset_tokens=10_000_000, seq_length=2048, per_device_train_batch_size=4, gradient_accumulation_steps=8, world_size=8)
    s = solve(spec, "epochs", 1)
    rows = 10_000_000 // 2048
    assert s.ceil.samples_seen >= rows > s.floor.samples_seen
    assert s.ceil.tokens_seen == s.ceil.samples_seen * 2048


def test_examples_and_tokens_targets_agree_for_packed_rows():
    spec = stream(num_examples=5000, seq_length=512, per_device_train_batch_size=4, gradient_accumulation_steps=2, world_size=2)
    by_rows = solve(spec, "examples", 1600)
    by_tokens = solve(spec, "tokens", 1600 * 512)
    assert by_rows.ceil.max_steps == by_tokens.ceil.max_steps == 100 and by_rows.exact


def test_map_style_epochs_show_what_num_train_epochs_would_do_on_the_early_stop_release():
    spec = RunSpec(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, transformers="4.49.0")
    s = solve(spec, "epochs", 3)
    planned = trainsteps.plan(spec)  # num_train_epochs defaults to 3
    assert s.by_epochs.max_steps == planned.run.max_steps
    assert s.by_epochs.epochs == planned.run.epochs_completed < 3
    assert s.exact and s.ceil.epochs == 3 and s.ceil.max_steps > planned.run.max_steps


def test_the_inverse_reads_the_plan():
    spec = stream(num_examples=300, per_device_train_batch_size=4, gradient_accumulation_steps=2, world_size=2, transformers="5.23.0")
    cov, schedule = covers(spec, 20)
    assert cov.samples_seen == schedule.run.samples_seen and cov.epochs == schedule.run.equivalent_epochs
    assert cov.logged_epoch == schedule.run.epochs_completed


@pytest.mark.parametrize("g, w", [(64, 8), (128, 6), (7, 8), (1, 1), (96, 4)])
def test_layouts_reach_the_global_batch_or_the_nearest_ones(g, w):
    result = layouts(g, w)
    if g % w == 0:
        assert result.exact and all(x.global_batch == g for x in result.exact)
        assert {x.per_device_train_batch_size for x in result.exact} == {b for b in range(1, g // w + 1) if (g // w) % b == 0}
        assert not result.nearest
    else:
        totals = {x.global_batch for x in result.nearest}
        assert totals == {t for t in (w * (g // w), w * (g // w + 1)) if t}


def test_layouts_respect_the_memory_cap():
    assert [x.per_device_train_batch_size for x in layouts(128, 8, max_per_device=4).exact] == [4, 2, 1]


@pytest.mark.parametrize("spec, target, value, msg_id", [
    (stream(num_examples=100), "epochs", 0, "solve.error.target_positive"),
    (stream(num_examples=100), "epochs", -2, "solve.error.target_positive"),
    (stream(), "epochs", 1, "solve.error.epochs_need_size"),
    (stream(num_examples=100), "tokens", 1000, "solve.error.tokens_need_length"),
    (stream(num_examples=28, per_device_train_batch_size=4, gradient_accumulation_steps=8), "epochs", 1, "solve.error.never_steps"),
])
def test_targets_that_cannot_be_met_are_refused(spec, target, value, msg_id):
    with pytest.raises(InputError) as caught:
        solve(spec, target, value)
    assert caught.value.msg_id == msg_id


@pytest.mark.parametrize("args", [
    ["solve", "--streaming", "--epochs", "2"],
    ["solve", "--streaming", "--num-examples", "0", "--epochs", "1"],
    ["solve", "--streaming", "--num-examples", "100", "--epochs", "0"],
    ["solve", "--streaming", "--num-examples", "100", "--epochs", "1", "--examples", "5"],
    ["solve", "--num-examples", "100"],
    ["solve", "--global-batch", "0", "--gpus", "2"],
    ["solve", "--streaming", "--num-examples", "28", "--per-device-train-batch-size", "4", "--gradient-accumulation-steps", "8", "--epochs", "1"],
    ["solve", "--streaming", "--dataset-tokens", "100", "--epochs", "1"],
    ["solve", "--streaming", "--num-examples", "10", "--examples", "1e15"],
    ["solve", "--streaming", "--num-examples", "10", "--max-steps", "100000000000"],
    ["solve", "--streaming", "--num-examples", "10", "--epochs", "inf"],
    ["plan", "--streaming", "--max-steps", "20"],
    ["plan", "--streaming", "--max-steps", "20", "--num-examples", "0"],
    ["plan", "--streaming", "--max-steps", "20", "--dataset-tokens", "10", "--seq-length", "2048"],
])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_input_is_one_line_and_exit_2(run_cli, args, lang):
    code, out, err = run_cli(*args, "--lang", lang)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_json_carries_the_choice_and_the_derivation(run_cli):
    code, out, _ = run_cli("solve", "--streaming", "--num-examples", "1047", "--epochs", "3", "--per-device-train-batch-size", "10",
                           "--gradient-accumulation-steps", "8", "--format", "json", "--transformers", "5.23.0")
    data = json.loads(out)
    assert code == 0 and data["max_steps"] == data["ceil"]["max_steps"] == data["floor"]["max_steps"] + 1
    assert data["ceil"]["epochs"] >= 3 > data["floor"]["epochs"]
    assert any(step["key"] == "max_steps_ceil" for step in data["derivation"])


def test_cli_human_output_in_both_languages(run_cli):
    args = ("solve", "--streaming", "--num-examples", "1047", "--epochs", "3", "--per-device-train-batch-size", "10",
            "--gradient-accumulation-steps", "8", "--explain")
    _, en, _ = run_cli(*args)
    _, zh, _ = run_cli(*args, "--lang", "zh")
    assert "Set --max_steps 40" in en and "HF_STREAM_EPOCH_MISLEADING" in en
    assert "请设置 --max_steps 40" in zh and "HF_STREAM_EPOCH_MISLEADING" in zh


def test_cli_inverse_and_layouts(run_cli):
    code, out, _ = run_cli("solve", "--streaming", "--num-examples", "300", "--max-steps", "20", "--per-device-train-batch-size", "4",
                           "--gradient-accumulation-steps", "2", "--world-size", "2", "--format", "json")
    assert code == 0 and json.loads(out)["covers"]["samples_seen"] == trainsteps.plan(
        streaming=True, num_examples=300, per_device_train_batch_size=4, gradient_accumulation_steps=2, world_size=2, max_steps=20).run.samples_seen
    code, out, _ = run_cli("solve", "--global-batch", "128", "--gpus", "6", "--format", "json")
    assert code == 0 and json.loads(out)["exact"] == []


@pytest.mark.parametrize("args, words", [
    (["--global-batch", "128", "--gpus", "4", "--transformers", "4.49.0"], "--transformers is not used when listing batch layouts"),
    (["--global-batch", "128", "--step-time", "4"], "--step-time is not used when listing batch layouts"),
    (["--num-examples", "1047", "--epochs", "3", "--max-per-device-batch", "8"], "--max-per-device-batch caps the batch layouts"),
    (["--num-examples", "1047", "--epochs", "3", "--safety-margin", "0.2"], "--safety-margin refines --time-budget"),
    (["--num-examples", "1047", "--epochs", "3", "--mfu", "0.3"], "--mfu refines the FLOPs model"),
])
def test_solve_refuses_what_its_question_does_not_use(run_cli, args, words):
    code, out, err = run_cli("solve", *args)
    assert code == 2 and out == "" and words in err


def test_solve_gives_the_time_of_a_max_steps_it_covers(run_cli):
    code, out, _ = run_cli("solve", "--streaming", "--num-examples", "1047", "--max-steps", "40",
                           "--per-device-train-batch-size", "10", "--step-time", "4", "--format", "json")
    assert code == 0 and json.loads(out)["time"]["wall_seconds"]["expected"] == 160


def test_a_solution_covering_exactly_one_epoch_says_epoch_and_more_say_epochs():
    from trainsteps.solve_report import _covered
    from trainsteps.solver import Coverage

    one = Coverage(max_steps=10, optimizer_steps=10, samples_seen=100, epochs=1, tokens_seen=None, logged_epoch=None, warnings=())
    assert "1 epoch" in _covered(one, "en") and "epochs" not in _covered(one, "en")
    assert "2.5 epochs" in _covered(Coverage(25, 25, 250, 2.5, None, None, ()), "en")
