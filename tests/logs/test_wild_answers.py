"""`explain` answers the poster first, reads RL trainers' timing and start-up crashes, and keeps one JSON shape: each
check on a real stored post of the fresh corpus (tests/fixtures/logs/wild; each item's .json has its source address)."""

import json

from click.testing import CliRunner

from trainsteps.cli.main import cli
from trainsteps.logs import read_log
from trainsteps.logs.rl import RLObserved

from .wild_score import WILD


def rl_read(item_id: str) -> RLObserved:
    rl = RLObserved()
    read_log(str(WILD / f"{item_id}.log"), None, also=rl.feed)
    return rl


def explain(item_id: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["explain", str(WILD / f"{item_id}.log"), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_verl_job_that_dies_before_its_first_step_is_said_to_have_crashed_there():
    for item_id in ("verl-10-actor-died-at-start", "simplerl-80-died-after-rollout"):  # Hydra's `Error executing job`
        rl = rl_read(item_id)
        assert rl.status() == "crashed" and rl.step_reached() == 0, item_id
        assert explain(item_id).splitlines()[0] == "Stopped before the first step: crashed", item_id


def test_verl_timing_lines_give_the_share_of_each_phase_of_the_last_step():
    rl = rl_read("verl-316-step5-timing")  # the line is cut before timing_s/step: the phases printed are summed
    shares = {name: round(share, 2) for name, _, share in rl.timing.shares()}
    assert rl.timing.phases_step == 5 and rl.seconds_per_step()[1] == "phases"
    assert shares["gen"] == round(262.359 / (262.359 + 38.159 + 39.101 + 1.931 + 157.615 + 78.133), 2)
    assert list(shares)[:2] == ["gen", "update_actor"]


def test_a_printed_step_total_is_the_rate_and_nested_agent_loop_timings_are_not_phases():
    rl = rl_read("verlomni-402-timing-breakdown-oom")
    assert rl.seconds_per_step() == (2160.414716919069, "steps")
    assert "agent_loop" not in " ".join(rl.timing.phases) and rl.timing.phases["update_actor"] == 735.3157629490597


def test_the_time_left_runs_to_the_last_step_at_the_measured_rate():
    rl = rl_read("verl-2566-training-progress-bar")  # Training Progress 2/624 at 662.94 s/it
    assert rl.total_steps() == 624 and rl.step_reached() == 2
    assert rl.remaining_seconds() == (624 - 2) * 662.94
    assert explain("verl-2566-training-progress-bar").splitlines()[0] == "Running: 0.3% done (step 2 of 624), 4 d 18 h left"


def test_a_slime_perf_dict_is_read_as_slime_s_rollout():
    rl = rl_read("slime-1837-perf-rollout-line")
    assert rl.framework() == "slime" and rl.slime_rollout == 0 and rl.timing.phases["rollout_time"] == 371.1796889305115


def test_a_step_bar_at_zero_for_minutes_is_answered_as_stuck():
    assert explain("verl-3464-stuck-before-first-step").splitlines()[0] == "Stuck: 4 min 45 s with no first step"


def test_the_first_line_answers_where_and_how_the_run_stopped():
    assert explain("lf-6590-eval-crash").splitlines()[0] == "Stopped at step 500 of 760: crashed in evaluation"
    first = explain("lf-3768-webui-traceback-after-metrics").splitlines()[0]  # train metrics, then the web UI's traceback
    assert first == "Finished; the error that follows came after training ended"


def test_the_answer_is_in_chinese_with_lang_zh():
    assert explain("lf-6590-eval-crash", "--lang", "zh").splitlines()[0] == "停在第 500 步（共 760 步）：在评估中崩溃"


def test_every_explanation_has_the_same_top_level_json_keys_and_says_its_kind():
    shapes = {}
    for item_id, kind in (("lf-6590-eval-crash", "runs"), ("verl-316-step5-timing", "rl"), ("megatron-60-iteration-lines", "pretraining")):
        data = json.loads(explain(item_id, "--format", "json"))
        assert data["kind"] == kind, item_id
        assert data["answer"] == explain(item_id).splitlines()[0], item_id
        shapes[item_id] = {"kind", "answer", "source", "runs", "rl", "pretraining", "stated"} <= set(data)
        assert isinstance(data["runs"], list) and set(data["stated"]) == {"gpus", "failure", "interruption"}, item_id
    assert all(shapes.values())


def test_the_rl_json_holds_the_rate_the_phases_and_the_time_left():
    data = json.loads(explain("verl-2566-training-progress-bar", "--format", "json"))
    assert data["rl"]["total_steps"] == 624 and data["rl"]["remaining_seconds"] == (624 - 2) * 662.94
    timed = json.loads(explain("verlomni-402-timing-breakdown-oom", "--format", "json"))["rl"]["timing"]
    assert timed["seconds_per_step"] == 2160.415 and timed["shares"]["gen"] > timed["shares"]["update_actor"]


def test_bar_redraws_glued_on_one_line_are_read_at_the_last_one():
    from trainsteps.logs.explain import explain_log

    inf = explain_log(read_log(str(WILD / "trldapo-run-terminal-glued-bar.log")))[-1]  # ten redraws, carriage returns lost
    bar = max(inf.run.progress.bars.values(), key=lambda b: b.total)
    assert (bar.total, bar.n) == (29790, 10) and abs(inf.timing.per_step.expected - 8.22) < 1.5


def test_a_failure_the_title_names_ends_an_rl_log_that_shows_no_end_of_its_own():
    output = explain("agentr1-32-wandb-timing-sparklines")  # "successfully run 54 steps then oom": only the title says it
    assert output.splitlines()[0] == ('Stopped at step 54, as the text says ("successfully run 54 steps then oom ,mostly used less than 60% '
                                      'gpu"): crashed; the log itself shows no step and no end')
    assert "the text names a failure at step 54 (line 1:" in output


def test_several_runs_in_one_file_each_get_their_answer_and_the_first_line_is_the_last_run_s():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "corpus" / "unsloth-1140-notebook-bar.log"
    result = CliRunner().invoke(cli, ["explain", str(path)])  # two Unsloth banners: 290 steps, then 580
    lines = result.output.splitlines()
    assert lines[0] == "Run 2 of 2: Started: no step done yet (step 0 of 580)"
    assert any(line.startswith("  = Running: 7.6% done (step 22 of 290), ") and line.endswith(" left") for line in lines)


def test_nemo_2_s_train_step_timing_is_the_rate_of_its_iteration_lines():
    from trainsteps.logs.explain import explain_log

    inf = explain_log(read_log(str(WILD / "bionemo-740-nemo-iterations.log")))[-1]  # `train_step_timing in s: 0.03146` ...
    assert inf.timing is not None and 0.031 <= inf.timing.per_step.expected <= 0.0322  # the printed values span 0.03146-0.03215
    assert explain("bionemo-740-nemo-iterations").splitlines()[0].startswith("Running: 84.6% done (step 126 of 149), ")


def test_metric_records_that_count_epochs_and_no_step_read_are_answered_with_the_epoch_reached():
    # mmcv's log.json: `iter` may count the run or the epoch (the record does not say which runner wrote it)
    first = explain("mmseg-2899-mmcv-json-iter-runner").splitlines()[0]
    assert first.startswith("Running: at epoch 6; no step count was read from the log")
