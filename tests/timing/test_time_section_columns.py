"""The Time section's values stand in one column in Chinese as in English (a CJK character takes two columns)."""

import re

import pytest

from trainsteps.report import display_width

PLAN = ("plan", "--num-examples", 15806, "--per-device-train-batch-size", 2, "--gradient-accumulation-steps", 8,
        "--seq-length", 2048, "--gpu", "4090", "--params", "7.6e9")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_values_of_the_time_section_start_in_one_column(run_cli, lang):
    code, out, err = run_cli(*PLAN, "--lang", lang)
    assert code == 0, err
    section = next(block for block in out.split("\n\n") if block.startswith(("Time", "时间"))).splitlines()[1:]
    columns = set()
    for line in section:
        row = re.match(r"  (\S.*?)( {2,})(\S.*)$", line)  # a label, its padding, its value (notes start with "  - ")
        if row and not line.startswith("  - ") and display_width(row.group(1)) < 18:
            columns.add(display_width(line[:row.start(3)]))
    assert len(columns) == 1 and len(section) > 5, (columns, section)


@pytest.mark.parametrize("lang, words", [("en", "a single measured rate is given a range of -5% to +10%"), ("zh", "单次实测的速率取 -5% 到 +10% 的范围")])
def test_the_range_around_a_measured_step_time_says_where_it_comes_from(run_cli, lang, words):
    code, out, err = run_cli(*PLAN[:9], "--step-time", 4, "--lang", lang)
    assert code == 0, err
    assert "(3.8 – 4.4)" in out and words in out
