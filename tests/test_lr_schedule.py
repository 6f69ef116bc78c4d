"""The LR curve of every scheduler equals transformers' own scheduler, step by step (recorded by tools/record_lr.py)."""

import json
import pathlib

import pytest

from trainsteps.frameworks.hf.lr_schedule import SCHEDULERS, LrSchedule

FIXTURES = sorted((pathlib.Path(__file__).parent / "fixtures" / "lr").glob("transformers-*.json"))
CASES = [(f.name, case) for f in FIXTURES for case in json.loads(f.read_text())["cases"]]


@pytest.mark.parametrize("fixture, case", CASES, ids=[f"{f}:{c['name']}:{i}" for i, (f, c) in enumerate(CASES)])
def test_every_step_equals_the_recorded_scheduler(fixture, case):
    schedule = LrSchedule(case["name"], case["warmup"], case["total"], case["learning_rate"], case["kwargs"])
    assert schedule.problem() is None
    ours = [schedule.rate(step) for step in range(len(case["rates"]))]
    assert ours == pytest.approx(case["rates"], rel=1e-9, abs=1e-15)


def test_the_recordings_cover_every_scheduler_with_a_curve():
    assert {case["name"] for _, case in CASES} == set(SCHEDULERS)


def test_a_long_run_is_sampled_with_its_boundaries():
    schedule = LrSchedule("warmup_stable_decay", 1000, 1_000_000, 3e-4, {"num_decay_steps": 100_000})
    steps = [s for s, _ in schedule.curve(points=500)]
    assert steps[0] == 0 and steps[-1] == 1_000_000 and {1000, 900_000} <= set(steps) and len(steps) < 520


def test_settings_transformers_refuses_are_named():
    assert "min_lr" in LrSchedule("cosine_with_min_lr", 0, 10).problem()
    assert "num_decay_steps" in LrSchedule("warmup_stable_decay", 0, 10).problem()
