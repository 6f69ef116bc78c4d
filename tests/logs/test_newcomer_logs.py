"""Real public logs of the kinds people paste most (tests/fixtures/logs/newcomer, each with its source and the facts
its thread states): what `explain` answers from each, checked against those facts."""

import json

import pytest

from ..conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "logs" / "newcomer"


def _facts(name: str) -> dict:
    return json.loads((LOGS / f"{name}.json").read_text())["facts"]


@pytest.fixture
def explained(run_cli):
    def run(name: str, *extra) -> dict:
        code, out, err = run_cli("explain", LOGS / f"{name}.log", "--format", "json", *extra)
        assert code == 0, err
        return json.loads(out)

    return run


def _run(data: dict) -> dict:
    assert len(data["runs"]) == 1
    return data["runs"][0]


def test_every_log_here_names_its_source_and_states_facts():
    for meta in sorted(LOGS.glob("*.json")):
        item = json.loads(meta.read_text())
        assert item["source"].startswith("https://github.com/") and (LOGS / item["file"]).is_file()
        assert item["facts"] and set(item["facts"]) == set(item["fact_sources"])


def test_a_trainer_bar_pasted_with_carriage_returns_gives_the_step_of_its_total_and_the_time_left(explained):
    facts, data = _facts("h2ogpt-86-tqdm-dicts"), explained("h2ogpt-86-tqdm-dicts")
    run = _run(data)
    assert data["answer"].startswith("Running:") and f"step {facts['step']:,} of {facts['total_steps']:,}" in data["answer"]
    # 2 steps between the clocks 11:38 and 11:39 are no rate: the bar's own 1.90 it/s is
    assert run["time"]["rate"]["seconds_per_step"]["expected"] == pytest.approx(1 / facts["bar_rate_it_per_s"], rel=0.01)
    eta = 5 * 3600 + 6 * 60 + 7  # the bar's own <5:06:07
    assert run["time"]["remaining_seconds"]["expected"] == pytest.approx(eta, rel=0.01)


@pytest.mark.parametrize("name", ["modal-82-metric-dicts", "lf-3529-metric-dicts"])
def test_metric_dicts_alone_give_the_epoch_reached_and_say_that_no_step_count_was_read(explained, name):
    data = explained(name)
    assert data["answer"].startswith(f"Running: at epoch {_facts(name)['last_epoch']:g};")


def test_a_torchrun_failure_report_is_a_crash_and_its_own_words_are_not_read_as_the_posters(explained):
    data = explained("insightface-2182-torchrun-failure")
    assert _run(data)["status"] == _facts("insightface-2182-torchrun-failure")["stopped"]
    assert data["stated"]["failure"] is None  # `traceback : ... errors.html`, `Root Cause (first observed failure):` are torchrun's


def test_megatron_iteration_lines_give_the_iteration_of_its_total_and_the_time_per_iteration(explained):
    facts, data = _facts("megatron-llm-11-iterations"), explained("megatron-llm-11-iterations")
    run = _run(data)
    assert f"step {facts['step']} of {facts['total_steps']:,}" in data["answer"]
    assert 139 <= run["time"]["rate"]["seconds_per_step"]["expected"] <= 140.4  # elapsed time per iteration (ms): 139113-140347
    left = run["time"]["remaining_seconds"]["expected"]
    assert left == pytest.approx((facts["total_steps"] - facts["step"]) * run["time"]["rate"]["seconds_per_step"]["expected"], rel=1e-3)


def test_openrlhf_episode_bars_among_vllm_bars_give_the_finished_run_and_its_step_time(explained):
    facts, data = _facts("openrlhf-350-episode-bars"), explained("openrlhf-350-episode-bars")
    run = _run(data)
    assert (run["status"], run["end_step"], run["planned_end_step"]) == (facts["stopped"], facts["step"], facts["total_steps"])
    assert run["time"]["rate"]["seconds_per_step"]["expected"] == pytest.approx(19.27)


def test_a_grpo_bar_after_its_first_step_gives_the_time_the_poster_states(explained):
    facts, data = _facts("open-r1-161-grpo-bar"), explained("open-r1-161-grpo-bar")
    run = _run(data)
    assert f"step {facts['step']} of {facts['total_steps']:,}" in data["answer"]
    assert run["time"]["rate"]["seconds_per_step"]["expected"] == pytest.approx(facts["bar_seconds_per_step"])
    assert run["time"]["remaining_seconds"]["expected"] / 3600 == pytest.approx(facts["stated_hours"], rel=0.01)


def test_a_slime_perf_line_gives_its_rollout_time(explained):
    facts, data = _facts("slime-1837-perf"), explained("slime-1837-perf")
    timing = data["rl"]["timing"]
    assert (data["rl"]["framework"], timing["step"]) == ("slime", facts["rollout"])
    assert timing["phases"]["rollout_time"] == pytest.approx(facts["rollout_time_seconds"], abs=0.01)


def test_verl_timings_pasted_as_a_list_give_the_step_time_and_shares_that_count_each_second_once(explained):
    facts, data = _facts("verl-3727-timing-list"), explained("verl-3727-timing-list")
    timing = data["rl"]["timing"]
    assert timing["seconds_per_step"] == pytest.approx(facts["step_seconds"], abs=0.01)
    assert "generate_sequences" not in timing["shares"]  # timed inside gen
    assert sum(timing["shares"].values()) <= 1
    assert timing["shares"]["update_actor"] == pytest.approx(facts["update_actor_seconds"] / facts["step_seconds"], abs=1e-4)
    assert not any("?" in line for line in data["rl"]["explanation"])


def test_the_deit_family_last_line_training_time_ends_a_run_whose_epoch_lines_give_no_step(explained):
    data = explained("llama2-accessory-48-epoch-lines")
    assert _run(data)["status"] == _facts("llama2-accessory-48-epoch-lines")["stopped"]
    assert data["answer"].startswith("Finished")


@pytest.mark.parametrize("text", ["Training time 5:47:14 was too long for us", "the training time 5:47:14 looks slow"])
def test_prose_that_mentions_a_training_time_ends_no_run(run_cli, text):
    code, out, _ = run_cli("explain", "--text", "[07:15:39] Epoch: [2]  [1480/1504]  lr: 0.000005  closs: 0.8662 (0.8558)  time: 4.3713\n"
                           + text, "--format", "json")
    assert code == 0 and json.loads(out)["runs"][0]["status"] != "finished"


def test_a_post_comparing_a_slime_step_with_a_verl_step_gives_the_first_runs_step_not_their_median(explained):
    facts, data = _facts("slime-385-beside-verl"), explained("slime-385-beside-verl")
    assert data["rl"]["framework"] == "slime"
    assert data["rl"]["timing"]["seconds_per_step"] == pytest.approx(facts["slime_step_seconds"], abs=0.01)


@pytest.mark.parametrize("name, first", [("verl-3727-timing-list", "One step takes 5 h 13 min;"),
                                         ("slime-1837-perf", "One step takes at least 6 min 11 s (the phases printed")])
def test_rl_timings_without_a_step_of_a_known_total_still_answer_first_with_the_step_time(explained, name, first):
    assert explained(name)["answer"].startswith(first)
