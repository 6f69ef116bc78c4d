"""The note beside a measured rate gives the usual MFU range as the Time section's own MFU line does: two decimals."""

import re

import pytest

PLAN = ("plan", "--num-examples", 15806, "--per-device-train-batch-size", 2, "--gradient-accumulation-steps", 8,
        "--seq-length", 2048, "--gpu", "4090", "--params", "7.6e9")


@pytest.mark.parametrize("step_time", ["4s", "18s", "400s"])  # above, within and below the usual range
def test_the_usual_mfu_range_beside_a_measured_rate_is_written_with_two_decimals(run_cli, step_time):
    code, out, err = run_cli(*PLAN, "--step-time", step_time)
    assert code == 0, err
    note = next(line for line in out.splitlines() if "this speed is an MFU of" in line)
    assert re.search(r"the usual \d\.\d\d-\d\.\d\d(:|$)", note), note


@pytest.mark.parametrize("lang, unknown", [("en", "stack not known"), ("zh", "训练栈未知")])
def test_a_stack_nobody_named_is_said_in_words_not_as_a_question_mark(run_cli, lang, unknown):
    # a Trainer plan from flags alone: no config says FSDP or DeepSpeed (a torchtitan plan is fsdp, said)
    code, out, err = run_cli(*PLAN, "--lang", lang)
    assert code == 0, err
    line = next(line for line in out.splitlines() if "docs/time.md" in line and ("stack" in line or "训练栈" in line))
    assert unknown in line and "?" not in line
