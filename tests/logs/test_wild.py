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
    first_three = [item for item in items() if item["batch"] < 4]
    tune = {item["id"] for item in first_three} & set(split["tune"])
    assert abs(len(tune) - (len(first_three) - len(tune))) <= 1
    assert all(item["id"] in split["tune"] for item in items() if item["batch"] >= 4)  # tuning batches only


def test_every_item_names_its_source_and_its_in_text_facts_are_facts():
    for meta in items():
        assert meta["source"].startswith("https://github.com/"), meta["id"]
        assert set(meta["in_text"]) <= set(meta["facts"]), meta["id"]
        assert set(meta["facts"]) <= set(meta["fact_sources"]), meta["id"]


def test_the_held_out_half_keeps_the_rates_docs_explain_md_reports():
    s = score(items("held_out"))
    assert s.rate() == (101, 108)
    assert s.rate(in_text_only=True) == (51, 54)


def test_the_tuning_half_keeps_its_rates():
    s = score([item for item in items("tune") if item["batch"] < 4])
    assert s.rate() == (100, 105)
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


def test_basicsr_iteration_lines_give_the_step_its_declared_iters_the_total_and_its_end_line_the_finish():
    assert explained("smfanet-21-basicsr-epoch-iter").run.last_step.value == 1700  # `iter:   1,700,`
    assert explained("retinexformer-6-basicsr-iter-validation").run.last_step.value == 3500
    inf = explained("hat-114-basicsr-end-of-training")
    assert inf.run.last_step.value == 135100 and inf.planned_end_step == 500000  # `Total epochs: 14; iters: 500000.`
    assert inf.status == "finished" and inf.run.finished_by[0] == "loop_end"
    assert inf.world_size == 1  # `World size (gpu number): 1`


def test_an_mmcv_batch_counter_is_a_step_counted_from_epoch_one():
    assert explained("mmpretrain-408-epoch-bracket-iter").run.last_step.value == 800  # `Epoch [1][800/5005]`
    assert explained("mmdet-2672-epoch-bracket-iter").run.last_step.value == 1450


def test_a_batch_counter_of_a_colon_epoch_is_a_step_in_epoch_zero_only():
    assert explained("dino-69-epoch-of-epochs-bracket").run.last_step.value == 2300  # `Epoch: [0/100]  [2300/2502]`
    assert explained("minimind-26-epoch-paren-step").run.last_step.value == 1900  # `Epoch:[0/19](1900/24681)`
    inf = explained("higherhrnet-47-epoch-bracket-sigkill")  # `Epoch: [19][300/7922]`: epochs from 0 or 1, the log cannot say
    assert inf.run.last_step is None and inf.run.progress.step_lines == 1
    assert inf.status == "crashed"


def test_step_lines_with_a_train_loss_give_the_total_and_their_step_avg_is_the_rate():
    inf = explained("paramgolf-839-step-colon-total")
    assert inf.run.last_step.value == 5750 and inf.planned_end_step == 20000  # `step:5800/20000 trai` is cut: not read
    assert inf.timing is not None and abs(inf.timing.per_step.expected - 0.0435) < 0.001  # `step_avg:43.49ms` .. `43.51ms`


def test_steps_per_second_and_seconds_per_step_are_rates_of_the_step_lines():
    inf = explained("hiertext-6-train-step-steps-per-sec")
    assert inf.run.last_step.value == 180
    assert inf.timing is not None and abs(inf.timing.per_step.expected - 10.0) < 0.01  # `steps/sec:    0.1`
    inf = explained("psenet-16-step-seconds-per-step")
    assert inf.run.last_step.value == 20
    assert inf.timing is not None and 5.0 < inf.timing.per_step.expected < 93.0  # `5.59` .. `92.09 seconds/step`


def test_an_iteration_counter_with_its_total_in_brackets_is_a_step_of_that_total():
    inf = explained("scepter-48-stage-train-iter")
    assert inf.run.last_step.value == 10 and inf.planned_end_step == 500  # `Stage [train] iter: [10/500]`


def test_torch_distributed_runs_command_quoted_as_a_python_list_gives_the_processes():
    assert explained("ultralytics-19574-ddp-list-ray-tune").world_size == 2  # `'--nproc_per_node', '2'`
    assert explained("ultralytics-3173-ddp-command-list").world_size == 2


def test_json_step_records_give_the_step_with_any_prefix_and_any_nesting():
    assert explained("stablepretrain-201-json-step-lines").run.last_step.value == 1740  # `"train/lr": ..., "step": 1740`
    assert explained("caikit-208-jsonl-nested-step").run.last_step.value == 2  # `{"name": "loss", "data": {..., "step": 2, ...}}`
    assert explained("detectron-918-json-stats-quoted-values").run.last_step.value == 29260  # `json_stats: {... "iter": 29260,`


def test_a_json_records_average_iteration_time_is_the_time_of_a_step():
    inf = explained("detectron-610-json-stats-iter")
    assert inf.run.last_step.value == 55080
    assert inf.timing is not None and abs(inf.timing.per_step.expected - 0.266505) < 1e-6  # `"time": 0.266505`


def test_fairseqs_num_updates_are_steps_and_its_valid_record_is_not():
    inf = explained("fairseq-fsdp-readme-json-train-inner")
    assert inf.run.last_step.value == 10  # `"num_updates": "10"`; `"valid_num_updates": "10"` is the evaluation's
    assert inf.run.progress.step_lines == 11  # ten train_inner records and the end-of-epoch train record
    assert explained("fairseq-2493-json-epoch-summaries").run.last_step.value == 674  # `"train_num_updates": "674"`


def test_an_iteration_record_that_names_its_epoch_is_a_step_in_the_first_epoch_only():
    assert explained("dfft-4-mmcv-json-epoch-one").run.last_step.value == 100  # `"mode": "train", "epoch": 1, "iter": 100`
    inf = explained("mmseg-2899-mmcv-json-iter-runner")  # `"epoch": 6, "iter": 16050`: whole run or within epoch 6
    assert inf.run.last_step is None and inf.run.progress.step_lines == 3


def test_a_signal_after_the_training_bar_reached_its_total_ends_a_finished_run():
    inf = explained("instructlab-505-sigterm-after-epoch-bar")  # `13/13 [10:07<00:00, 46.70s/it]`, then `Sending SIGTERM.`
    assert inf.status == "finished" and inf.end_step == 13
    said = [f for f in inf.facts if f.msg_id == "explain.fact.signal_after_end"]
    assert said and said[0].params["reason"] == "explain.reason.sigterm"


def test_the_lines_of_a_continued_launch_command_are_read_even_when_they_name_nothing_the_reader_looks_for():
    # `CUDA_VISIBLE_DEVICES=0,...,7 \`, `NPROC_PER_NODE=8 \`, `nohup swift sft \`, `--model ... \`: the launcher is on a
    # line with no keyword of its own, and the command ends on a line with none either (`train.jsonl`)
    assert explained("msswift-8476-dict-5-of-17144-nproc8").world_size == 8


def test_a_workers_own_exit_code_after_a_sigterm_makes_the_run_a_crash_not_an_interruption():
    inf = explained("pytorch-88251-sigterm-then-exitcode-1")  # `I get thrown an error SIGTERM`, then `failed (exitcode: 1) local_rank: 5`
    assert inf.status == "crashed" and inf.run.progress.stop[4] == "child_failed"
    assert explained("lerobot-3818-ctrl-c-sigint").status == "interrupted"  # a death signal's exit codes are negative


def test_mxnets_speedometer_lines_are_steps_in_the_first_epoch():
    inf = explained("insightface-663-two-runs-batch-counter-falls-back")
    assert inf.run.last_step.value == 3100  # `Epoch[0] Batch [3080-3100]  Speed: 113.57 samples/sec`
    assert explained("mxnet-8289-three-runs-batch-counter-restarts").run.last_step.value == 99  # `Epoch[0] Batch [99]`


def test_a_step_counter_that_falls_back_far_starts_another_run_and_says_so():
    inferences = explain_log(read_log(str(WILD / "insightface-663-two-runs-batch-counter-falls-back.log")))
    assert [inf.run.last_step.value for inf in inferences] == [15980, 3100]  # a 2-GPU run, then a 1-GPU run
    assert inferences[1].run.notes == [("explain.note.counter_fell_back", {"line": 13, "before": "15,980", "step": "3,060"})]
    assert len(explain_log(read_log(str(WILD / "tfmodels-3000-global-step-fluctuating.log")))) == 1  # 677, then 676: one run


def test_runs_pasted_back_to_back_each_keep_their_own_launch_command():
    # `python image_classification.py ... --gpus 2`, then `--gpus 1,2`, then `--gpus 0,1,2,3`, each followed by its lines
    inferences = explain_log(read_log(str(WILD / "mxnet-8289-three-runs-batch-counter-restarts.log")))
    assert [inf.world_size for inf in inferences] == [1, 2, 4]  # a single `--gpus 2` is a device id, not a count


def test_the_sixth_tuning_batch_keeps_its_rates():
    s = score(items("tune", batch=6))
    assert s.rate() == (49, 49)
    assert s.rate(in_text_only=True) == (33, 33)


def test_an_end_the_poster_s_words_state_is_the_end_when_the_pasted_text_shows_none():
    from .wild_score import read

    said = {"msswift-3771-grpo-errors-partway-nproc4": "报错",          # `训练到一部分会报错断掉`
            "qwenvl-507-killed-partway-torchrun-8": "Killed",           # `# [BUG] <title>训练到一段出现Killed`
            "paddledet-6597-errors-after-a-while-epoch-11": "报错",     # `# 训练一段时间报错`
            "verl-4104-ppo-quickstart-errors-midway-1gpu": "报错"}      # `在训练中途，会报错，请问我该怎么定位与解决？`
    for item_id, word in said.items():
        meta = json.loads((WILD / f"{item_id}.json").read_text(encoding="utf-8"))
        assert read(meta).stopped == "crashed", item_id
        assert read_log(str(WILD / meta["file"])).stated["stated_failure"].value == word, item_id


def test_a_negated_failure_word_is_passed_over_for_the_plain_statement_beside_it():
    stated = read_log(str(WILD / "llamafactory-6687-killed-no-error-one-device.log")).stated
    assert stated["stated_failure"].value == "被killed"  # `# 自动被killed且无任何报错信息`: not the negated 报错
    inf = explained("verl-1334-dapo-terminate-unexpectedly-199-of-1119")  # title: `..., with no error being found.`
    assert inf.run.wrapper["stated_failure"].value == "suddenly terminate" and inf.run.wrapper["stated_failure"].line == 3
    assert inf.status == "crashed" and inf.end_step == 199


def test_the_log_s_own_end_outranks_the_words_and_a_loss_that_fails_to_converge_states_no_end():
    inf = explained("seco-2-bar-569-of-2975-killed-glued")  # `# Why does the train_src.py file kill itself ...`, then `]Killed`
    assert inf.status == "crashed" and inf.facts[0].msg_id == "explain.fact.crashed"
    assert explained("trl-475-stops-at-epoch-049-train-runtime").status == "finished"  # `without showing any error`, then train_runtime
    inf = explained("processq-7-fails-to-converge-bar-482-of-532")  # `# Training loss fails to converge in train_main.py`
    assert "stated_failure" not in inf.run.wrapper and inf.status == "running"


def test_the_seventh_tuning_batch_keeps_its_rates():
    s = score(items("tune", batch=7))
    assert s.rate() == (38, 40)
    assert s.rate(in_text_only=True) == (17, 18)


def test_the_step_a_title_puts_the_failure_at_is_said_as_the_words_when_the_log_shows_none():
    from .wild_score import read

    meta = json.loads((WILD / "agentr1-32-wandb-timing-sparklines.json").read_text(encoding="utf-8"))
    assert read(meta).step_reached == 54  # `# successfully run 54 steps then oom ...`: the wandb summary shows no step


def test_a_metric_dict_the_terminal_wrapped_inside_a_key_is_read_joined():
    inf = explained("msswift-3399-dict-wrapped-in-key-600-of-22156-val-oom")  # `..., 'elapsed_tim` / `e': '3h 14m 25s', ...}`
    step, elapsed = inf.run.progress.elapsed_points[-1][:2]
    assert (step, elapsed) == (600, 3 * 3600 + 14 * 60 + 25)
    assert inf.status == "crashed" and inf.end_step == 600


def _progress_of(text: str):
    run = read_log(text=text).runs[-1]
    return run.last_step.value, run.progress.step_total[:2], [point[:3] for point in run.progress.elapsed_points]


def test_a_swift_dict_wrapped_anywhere_reads_as_the_whole_line_does():
    # a real line (ms-swift#8476) broken at every place a terminal could: inside a key, inside `'5/17144'`, after a comma
    line = (WILD / "msswift-8476-dict-5-of-17144-nproc8.log").read_text(encoding="utf-8").splitlines()[18]
    whole = _progress_of(line + "\n")
    assert whole[0] == 5
    for cut in range(2, len(line) - 1):
        assert _progress_of(line[:cut] + "\n" + line[cut:] + "\n") == whole, line[:cut]
    third = len(line) // 3
    assert _progress_of(line[:third] + "\n" + line[third:2 * third] + "\n" + line[2 * third:] + "\n") == whole


def test_a_dict_cut_where_the_paste_ends_still_gives_its_step():
    inf = explained("msswift-9885-quoted-dicts-one-line-80-of-135")  # the last of six dicts on one line, cut after `'memory(GiB)':`
    assert inf.run.last_step.value == 80 and inf.run.progress.step_total[:2] == (80, 135)
