"""The callbacks' ETA in real CPU training on transformers 5.23.0, as recorded by tools/record_eta.py
(tests/fixtures/timing/eta_live.json): how far from the time that really followed, next to the Trainer's tqdm ETA."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORD = json.loads((ROOT / "tests" / "fixtures" / "timing" / "eta_live.json").read_text())


def test_recorded_on_transformers_5_23_0_with_every_scenario_three_times():
    assert RECORD["transformers"] == "5.23.0"
    names = [r["name"] for r in RECORD["runs"]]
    assert {n: names.count(n) for n in set(names)} == {
        "slow_evaluations": 3, "slow_first_step": 3, "resume": 3, "all_together": 3}


@pytest.mark.parametrize("share", ["10", "25", "50"])
def test_the_eta_is_known_at_10_25_and_50_percent(share):
    assert RECORD["overall"][share]["trainsteps_unknown"] == 0


@pytest.mark.parametrize("share", ["10", "25", "50"])
def test_overall_the_eta_is_closer_than_the_progress_bar(share):
    overall = RECORD["overall"][share]
    assert overall["trainsteps_median_abs_error"] < overall["tqdm_median_abs_error"]


def test_the_recorded_median_errors():
    overall = RECORD["overall"]
    assert [overall[s]["trainsteps_median_abs_error"] for s in ("10", "25", "50")] == [0.2445, 0.0306, 0.0328]
    assert [overall[s]["tqdm_median_abs_error"] for s in ("10", "25", "50")] == [0.7368, 0.4987, 0.1801]


def test_the_interval_holds_the_real_time_once_an_evaluation_has_been_timed():
    for run in RECORD["runs"]:
        for share in ("25", "50"):
            assert run["points"][share]["inside_interval"], (run["name"], share)


def test_after_25_percent_the_eta_is_within_a_tenth_in_the_median_of_every_scenario():
    for scenario in RECORD["summary"].values():
        for share in ("25", "50"):
            assert scenario[share]["trainsteps_median_abs_error"] < 0.10


def test_a_slow_first_step_does_not_inflate_the_eta():
    first = RECORD["summary"]["slow_first_step"]["10"]
    assert first["trainsteps_median_abs_error"] < 0.15
    assert first["tqdm_median_abs_error"] > 1.0  # the bar's rate still carries the 3 s first step


def test_after_a_resume_the_eta_counts_the_steps_left_not_the_bar_s_view():
    resumed = RECORD["summary"]["resume"]
    for share in ("10", "25", "50"):
        assert resumed[share]["trainsteps_median_abs_error"] < 0.10
        assert resumed[share]["tqdm_median_abs_error"] > 0.9  # the bar divides by steps it never ran here


def test_evaluation_pauses_are_measured_and_kept_out_of_the_step_rate():
    for run in RECORD["runs"]:
        if run["scenario"].get("eval_every"):
            # every evaluation between two steps; the last one follows the last step, when nothing is left to predict
            evals_here = (run["scenario"]["max_steps"] - run["scenario"].get("resume_at", 0)) // run["scenario"]["eval_every"]
            assert len(run["eval_pauses"]) == evals_here - 1
            assert min(run["eval_pauses"]) > 4 * run["scenario"]["eval_sleep"]  # 4 batches of sleep each
        assert run["logged_keys"] == ["eta_seconds", "tokens_per_second"]
        assert run["global_step"] == run["scenario"]["max_steps"]
