"""`explain` on logs gathered after the reader was built (tests/fixtures/logs/wild): the rates of the held-out half
stay at least where docs/explain.md reports them, and each family of lines the reader learned from the tuning half
is checked on a real stored log (its source address is in the item's .json)."""

import json

from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log

from .wild_score import WILD, items, score


def explained(item_id: str):
    inferences = explain_log(read_log(str(WILD / f"{item_id}.log")))
    assert inferences, item_id
    return inferences[-1]


def test_the_split_is_kept_and_covers_every_item_once():
    split = json.loads((WILD / "split.json").read_text(encoding="utf-8"))
    on_disk = {p.stem for p in WILD.glob("*.log")}
    assert not set(split["tune"]) & set(split["held_out"])
    assert set(split["tune"]) | set(split["held_out"]) == on_disk
    assert abs(len(split["tune"]) - len(split["held_out"])) <= 1


def test_every_item_names_its_source_and_its_in_text_facts_are_facts():
    for meta in items():
        assert meta["source"].startswith("https://github.com/"), meta["id"]
        assert set(meta["in_text"]) <= set(meta["facts"]), meta["id"]
        assert set(meta["facts"]) <= set(meta["fact_sources"]), meta["id"]


def test_the_held_out_half_keeps_the_rates_docs_explain_md_reports():
    s = score(items("held_out"))
    assert s.rate() == (90, 108)
    assert s.rate(in_text_only=True) == (46, 54)


def test_the_tuning_half_keeps_its_rates():
    s = score(items("tune"))
    assert s.rate() == (99, 105)
    assert s.rate(in_text_only=True) == (47, 48)


def test_torchtitan_step_lines_give_the_step_reached_even_when_every_rank_prints_them():
    assert explained("torchtitan-2389-moe-gate-ranks").run.last_step.value == 5
    assert explained("torchtitan-3393-checkpoint-steps").run.last_step.value == 21


def test_litgpt_lines_count_optimizer_steps_not_micro_batch_iterations():
    assert explained("litgpt-689-iter-step-lines").run.last_step.value == 49
    assert explained("litgpt-1224-epoch-iter-lines").run.last_step.value == 1


def test_a_step_line_that_prints_its_total_gives_the_total_and_the_time_per_step():
    inf = explained("nanochat-147-step-of-total")
    assert inf.run.last_step.value == 11 and inf.planned_end_step == 21400
    assert inf.timing is not None and abs(inf.timing.per_step.expected - 0.99) < 0.02  # `dt: 989.44ms` .. `996.81ms`


def test_mlx_iterations_are_steps_and_its_validation_lines_are_not():
    inf = explained("mlx-examples-1209-dpo-iter")
    assert inf.run.last_step.value == 4
    assert inf.run.progress.step_lines == 4  # `Iter 1: Val loss ...` is an evaluation


def test_the_deepspeed_launchers_kill_and_exit_code_lines_end_the_run_as_a_crash():
    for item_id in ("deepspeed-4000-kill-2080ti", "deepspeed-5302-kill-after-checkpoint", "deepspeed-1581-kill-eight"):
        inf = explained(item_id)
        assert inf.status == "crashed", item_id
        assert inf.run.progress.stop[4] == "launcher_exit", item_id


def test_torchruns_death_signal_and_forwarded_sigint_are_an_interruption_not_a_crash():
    inf = explained("lerobot-3818-ctrl-c-sigint")
    assert inf.status == "interrupted" and inf.run.progress.stop[4] == "sigint"


def test_a_traceback_after_the_train_metrics_is_named_as_coming_after_training_not_a_crash_of_it():
    inf = explained("lf-3768-webui-traceback-after-metrics")
    assert inf.status == "finished"
    assert "explain.fact.error_after_end" in [f.msg_id for f in inf.facts]


def test_a_cause_named_after_a_bare_sigterm_mention_is_the_end():
    inf = explained("axolotl-1670-nccl-watchdog")
    assert inf.status == "crashed" and inf.run.progress.stop[4] == "nccl_timeout"


def test_accelerates_defaults_notice_gives_the_processes_and_its_advice_line_does_not():
    assert explained("axolotl-889-accelerate-default-processes").world_size == 4


def test_a_loop_that_prints_its_step_limit_but_no_bar_gets_that_limit_as_its_total():
    assert explained("primerl-1360-signal-15-at-step-0").planned_end_step == 100


def test_a_bar_first_drawn_after_running_evaluation_is_the_evaluations_and_a_stop_inside_it_is_said():
    inf = explained("lf-6590-eval-crash")
    bars = inf.run.progress.bars
    assert bars[17].kind == "evaluation" and bars[760].kind == "bar"
    assert inf.status == "crashed" and inf.end_step == 500
    said = [f for f in inf.facts if f.msg_id == "explain.fact.stopped_in_evaluation"]
    assert said and said[0].params["n"] == 2 and said[0].params["total"] == 17
