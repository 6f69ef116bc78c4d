"""Logs without a banner, crashes, nodes, printed releases, launchers, timing: what each kind of line pins down."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trainsteps.cli.main import cli
from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log, render, to_json
from trainsteps.logs.timing import duration

from .conftest import FIXTURES

HF = Path(__file__).resolve().parents[1] / "fixtures" / "hf"
CORPUS = FIXTURES / "corpus"
SEED_001 = (FIXTURES / "seed_001_1047.log").read_text(encoding="utf-8")
BAR_78 = "  2%|▏         | 78/3900 [05:12<4:15:03,  4.00s/it]"


def explain_text(text: str):
    obs = read_log(text=text)
    return obs, explain_log(obs)


def recorded(version: str, case: str) -> dict:
    data = json.loads((HF / f"transformers-{version}.json").read_text())
    return next(r for r in data["runs"] if r["case"] == case)


# ---------------------------------------------------------------- timing (seed 001 on 4.49.0)

def test_seed_001_banner_and_one_bar_line_remaining_time_to_step_3900():
    _, (inf,) = explain_text(SEED_001 + "\n" + BAR_78)
    assert inf.inferred["transformers"].exact == "4.49.0"
    assert inf.best.schedule.run.epochs_completed == 278.6095  # the epochs stop early ...
    assert inf.planned_end_step == 3900  # ... but the run still ends at step 3,900
    t = inf.timing
    assert t.source == "bar" and t.per_step.expected == 4.0 and t.at_step == 78
    assert t.remaining.expected == (3900 - 78) * 4.0 == 15288
    assert t.remaining.low < 15288 < t.remaining.high
    assert t.verdict[0] == "explain.eta.agrees"  # tqdm's 4:15:03 is right here
    assert duration(t.remaining.expected) == "4 h 14 min" and duration(t.remaining.expected, "zh") == "4 小时 14 分"


def test_timing_json_and_both_languages():
    obs, infs = explain_text(SEED_001 + "\n" + BAR_78)
    data = to_json(obs, infs)
    time_ = data["runs"][0]["time"]
    assert time_["remaining_seconds"]["expected"] == 15288.0 and time_["end_step"] == 3900
    assert time_["rate"]["source"] == "bar" and time_["elapsed_seconds"] == 312.0
    assert {"low", "expected", "high"} == set(time_["total_seconds"])
    en, zh = render(obs, infs, "en"), render(obs, infs, "zh")
    assert "15,288 s" in en and "4 h 14 min" in en
    assert "15,288 秒" in zh and "剩余" in zh


def test_a_bar_total_that_is_not_where_the_run_ends_is_called_out():
    """4.46: batches prefetched in chunks of N mod GA are never read; the recorded run planned 3 steps and stopped at 1."""
    run = recorded("4.46.3", "n20_b4_g8_e3")
    assert run["final_global_step"] < run["max_steps"]
    _, (inf,) = explain_text("transformers==4.46.3\n" + "\n".join(run["banner_lines"])
                             + f"\n  0%|          | 0/{run['max_steps']} [00:04<00:08, 4.00s/it]")
    assert inf.planned_end_step == run["final_global_step"]
    assert inf.timing.verdict[0] == "explain.eta.total"
    assert inf.timing.remaining.expected == run["final_global_step"] * 4.0


# ---------------------------------------------------------------- no banner

def test_steps_per_epoch_and_the_only_world_size_that_fits_from_progress_lines():
    """A recorded 4-process run (transformers 4.49.0): 12,877 rows, batch 8, accumulation 8; epoch 1 ended at step 51."""
    run = recorded("4.49.0", "n12877_b8_g8_e3_w4")
    first_epoch_end = run["epoch_end_steps"][0]
    inputs = run["inputs"]
    text = "\n".join([
        "train_dataset: Dataset({", "    features: ['input_ids'],", f"    num_rows: {inputs['num_examples']}", "})",
        f"per_device_train_batch_size={inputs['per_device_train_batch_size']}, gradient_accumulation_steps={inputs['gradient_accumulation_steps']},",
        f" 34%|███▍      | {first_epoch_end}/{run['max_steps']} [02:00<03:52,  2.35s/it]",
        "{'loss': 0.31, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 1.0}",
    ])
    _, (inf,) = explain_text(text)
    assert inf.run.kind == "progress"
    assert inf.inferred["steps_per_epoch"].contains(first_epoch_end)
    assert inf.world_size == inputs["world_size"] == 4
    assert any(f.msg_id == "explain.fact.progress_world" for f in inf.facts)
    assert inf.timing.remaining.expected == (run["max_steps"] - first_epoch_end) * 2.35


def test_llamafactory_trainer_log_jsonl_rate_from_elapsed_time():
    path = next(CORPUS.glob("lf-qwen25-7b-medical-jsonl*.jsonl"))
    (inf,) = explain_log(read_log(str(path)))
    meta = json.loads((CORPUS / "lf-qwen25-7b-medical-jsonl.json").read_text())
    assert inf.run.kind == "progress" and inf.run.finished
    assert inf.run.last_step.value == meta["facts"]["stop_step"]
    assert inf.timing.source == "elapsed"


def _jsonl(steps_and_losses) -> str:
    return "\n".join(json.dumps({"current_steps": step, "total_steps": 200, "loss": loss, "elapsed_time": f"0:{step // 10:02d}:00"})
                     for step, loss in steps_and_losses)


def test_two_trainings_writing_one_trainer_log_jsonl_are_named():
    # srun --ntasks=2 around llamafactory-cli: every step is written by two trainings whose losses differ slightly,
    # and they drift apart, so a step's second line can come a few lines later
    path = next(CORPUS.glob("lf-qwen25-3b-2gpu-dup-jsonl*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    (inf,) = explain_log(read_log(str(path)))
    (fact,) = [f for f in inf.facts if f.msg_id == "explain.fact.second_writer"]
    assert (fact.params["step"], fact.params["before"], fact.params["after"]) == \
        (lines[0]["current_steps"], str(lines[0]["loss"]), str(lines[1]["loss"]))
    assert fact.params["repeats"] * 2 >= 0.9 * fact.params["lines"]
    # one writer's lines alone: nothing to say
    first_writer = [line for i, line in enumerate(lines) if line["current_steps"] not in {x["current_steps"] for x in lines[:i]}]
    (alone,) = explain_log(read_log(text="\n".join(json.dumps(line) for line in first_writer)))
    assert not any(f.msg_id == "explain.fact.second_writer" for f in alone.facts)


def test_a_resumed_run_or_a_doubled_line_is_not_a_second_writer():
    resumed = [(s, 1.0 - s / 1000) for s in range(10, 110, 10)] + [(s, 0.9 - s / 1000) for s in range(60, 210, 10)]
    doubled = [(s, 1.0) for s in range(10, 210, 10) for _ in (0, 1)]  # the same line twice: a copy, not a second training
    for pairs in (resumed, doubled):
        _, (inf,) = explain_text(_jsonl(pairs))
        assert not any(f.msg_id == "explain.fact.second_writer" for f in inf.facts)


def test_notebook_bar_gives_step_epoch_and_rate():
    text = "[ 3230/10000 2:20:47 < 4:55:16, 0.38 it/s, Epoch 11.26/13]"
    _, (inf,) = explain_text(text)
    assert inf.run.last_step.value == 3230 and inf.run.last_epoch.value == 11.26
    assert abs(inf.timing.per_step.expected - 1 / 0.38) < 1e-9
    assert inf.inferred["steps_per_epoch"].contains(3230 / 11.26)


def test_train_metrics_block_is_read_and_its_steps_per_second_explained():
    text = "\n".join(["***** train metrics *****", "  epoch                    =        3.0",
                      "  train_runtime            = 1:02:03.10", "  train_samples_per_second =     84.4",
                      "  train_steps_per_second   =      1.048"])
    _, (inf,) = explain_text(text)
    assert inf.run.finished and inf.run.progress.train_runtime == 3723.1
    fact = next(f for f in inf.facts if f.msg_id.startswith("explain.fact.runtime_steps"))
    assert fact.params["product"] == "3,902"


# ---------------------------------------------------------------- how the run ended

def test_a_crash_at_step_0_is_not_replayed_as_finished():
    obs, (inf,) = explain_text(SEED_001 + "\n  0%|          | 0/3900 [00:00<?, ?it/s]\nTraceback (most recent call last):\n"
                               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert inf.stopped == "crashed"
    crash = inf.facts[0]
    assert crash.msg_id == "explain.fact.crashed" and crash.params["step"] == 0 and crash.params["reason"] == "explain.reason.oom"
    text = render(obs, [inf], "en")
    assert "CRASHED at step 0 of 3,900" in text and "had it not stopped" in text
    assert "崩溃" in render(obs, [inf], "zh")


def test_interrupted_and_finished_are_worded_apart():
    _, (stopped,) = explain_text(SEED_001 + "\n" + BAR_78 + "\nKeyboardInterrupt")
    assert stopped.stopped == "interrupted" and stopped.facts[0].msg_id == "explain.fact.interrupted"
    _, (done,) = explain_text(SEED_001 + "\n{'train_runtime': 15600.0, 'train_samples_per_second': 18.7, 'train_steps_per_second': 0.25, 'epoch': 278.61}")
    assert done.stopped is None and any(f.msg_id == "explain.fact.finished" for f in done.facts)


def test_a_traceback_the_run_survived_is_not_a_crash():
    _, (inf,) = explain_text(SEED_001 + "\n" + BAR_78 + "\nTraceback (most recent call last):\nValueError: a logging hook\n"
                             "  2%|▏         | 79/3900 [05:16<4:15:00,  4.00s/it]")
    assert inf.stopped is None


def test_nccl_timeout_glued_to_the_last_bar_is_a_crash():
    meta = json.loads((CORPUS / "lf-8261-nccl-timeout.json").read_text())
    (inf,) = explain_log(read_log(str(CORPUS / meta["file"])))
    assert inf.stopped == "crashed" and inf.run.last_step.value == meta["facts"]["stop_step"]
    assert inf.facts[0].params["reason"] == "explain.reason.nccl_timeout"


def test_the_same_banner_printed_by_two_nodes_is_one_run():
    lines = [line for line in (FIXTURES / "seed_003_4gpu.log").read_text().splitlines() if line.strip()]
    both = "\n".join(f"{rank}: {line}" for line in lines for rank in (0, 1))
    obs, infs = explain_text(both)
    assert len(infs) == 1 and infs[0].run.copies == 1 and infs[0].world_size == 4
    twice = "\n".join(lines + lines)
    assert len(explain_text(twice)[1]) == 1


def test_a_stream_read_past_one_epoch_counts_its_passes():
    path = FIXTURES / "public" / "llamafactory-7375_streaming_4.49.log"
    text = path.read_text() + "\n{'loss': 1.1, 'learning_rate': 1e-05, 'epoch': 2.4}"
    _, infs = explain_text(text)
    fact = next(f for f in infs[-1].facts if f.msg_id == "explain.fact.stream_passes")
    assert fact.params["passes"] == 3


# ---------------------------------------------------------------- printed releases, launchers, look-alikes

def test_a_printed_release_pins_the_replay():
    plain = "\n".join(line.split(">>", 1)[1] for line in SEED_001.splitlines() if ">>" in line)
    _, (guess,) = explain_text(plain)
    assert guess.inferred["transformers"].to_json() != "4.49.0"
    header = "==((====))==  Unsloth 2025.3.9: Fast Llama patching. Transformers: 4.49.0.\n"
    _, (pinned,) = explain_text(header + plain)
    assert pinned.inferred["transformers"].exact == "4.49.0" and pinned.best.version == "4.49.0"
    for line in ('"transformers_version": "4.49.0",', "transformers==4.49.0", "- `transformers` version: 4.49.0",
                 "Name: transformers\nVersion: 4.49.0"):
        _, (inf,) = explain_text(line + "\n" + plain)
        assert inf.inferred["transformers"].exact == "4.49.0", line


def test_cuda_visible_devices_is_never_the_world_size():
    text = "CUDA_VISIBLE_DEVICES=0,1,2,3\n" + (FIXTURES / "seed_003_4gpu.log").read_text().replace("= 256", "= 2,048")
    _, (inf,) = explain_text(text)
    assert inf.world_size == 32
    assert not any(f.code == "LOG_PROCESSES_DIFFER" for f in inf.facts)
    assert any(f.msg_id == "explain.fact.visible_devices" for f in inf.facts)


def test_deepspeed_launcher_lines_give_the_processes():
    meta = json.loads((CORPUS / "deepspeed-codegen2-3-8-nodes.json").read_text())
    (inf,) = explain_log(read_log(str(CORPUS / meta["file"])))
    assert inf.world_size == meta["facts"]["world_size"]


def test_deepspeed_batch_assertion_says_what_deepspeed_saw():
    text = ("[launch.py:163:main] nnodes=2, num_local_procs=8, node_rank=0\n"
            "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
            "gradient_acc_step * world_size 256 != 4 * 8 * 1")
    _, (inf,) = explain_text(text)
    fact = next(f for f in inf.facts if f.msg_id == "explain.fact.deepspeed_assert")
    assert fact.params["dp"] == 1 and fact.params["product"] == 32 and inf.world_size == 16


def test_paddlenlp_banner_is_named_not_replayed():
    meta = json.loads((CORPUS / "paddlenlp-fewclue-csl-ansi.json").read_text())
    infs = explain_log(read_log(str(CORPUS / meta["file"])))
    assert infs and all(inf.run.kind != "hf" or inf.best is None for inf in infs)
    assert any(f.msg_id == "explain.fact.paddlenlp" for inf in infs for f in inf.facts)


def test_grpo_num_generations_printed_near_the_banner_comes_first():
    text = (FIXTURES / "public" / "open-r1-483_grpo_4.49.log").read_text().split("\n", 1)[1]
    _, (inf,) = explain_text("num_generations=8,\n" + text)
    first = inf.contradictions[0].explanations[0]
    assert first.msg_id == "explain.expl.repeated_printed" and first.params["k"] == 8


def test_packing_from_a_printed_raw_count():
    meta = json.loads((CORPUS / "trl-alignment-handbook-220-packing.json").read_text())
    infs = explain_log(read_log(str(CORPUS / meta["file"])))
    fact = next(f for inf in infs for f in inf.facts if f.code == "LOG_FEWER_EXAMPLES")
    assert fact.params["raw"] == meta["facts"]["raw_examples"] and fact.params["n"] == meta["facts"]["num_examples"]


# ---------------------------------------------------------------- not logs, line bookkeeping, bounds

def test_source_code_and_latex_give_no_phantom_runs():
    for text in ("num_examples = self.num_examples(train_dataloader)\nnum_update_steps_per_epoch = len_dataloader // args.gradient_accumulation_steps",
                 r"\text{Total optimization steps} = 503 \times 3 = 1,509"):
        assert not read_log(text=text).runs


def test_crlf_and_cr_only_files_keep_true_line_numbers(tmp_path):
    lf = SEED_001.replace("\r\n", "\n")
    numbers = {}
    for name, ending in (("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")):
        path = tmp_path / f"{name}.log"
        path.write_bytes(lf.replace("\n", ending).encode())
        run = read_log(str(path)).runs[0]
        numbers[name] = [r.line for r in run.banner.values()]
    assert numbers["lf"] == numbers["crlf"] == numbers["cr"]


def test_no_reference_reads_line_0_and_pasted_text_is_named():
    result = CliRunner().invoke(cli, ["explain", "--text", "Total optimization steps = 3,900\n" + BAR_78])
    assert result.exit_code == 0, result.output
    assert "line 0" not in result.output and "pasted text" in result.output


def test_a_huge_epoch_count_with_three_examples_replays_no_epoch_loop(monkeypatch):
    """`Num Epochs = 128,770` over 3 examples: the closed form shows no rounding prints 1,509 steps, so no candidate
    replays 128,770 epochs (it took 5 s before; bench/bench_explain.py times it)."""
    import trainsteps

    replayed = []
    real = trainsteps.plan

    def counting(spec=None, **kwargs):
        replayed.append(spec.num_train_epochs if spec is not None else kwargs.get("num_train_epochs"))
        return real(spec, **kwargs) if spec is not None else real(**kwargs)

    monkeypatch.setattr(trainsteps, "plan", counting)
    text = (Path(__file__).parent / "data" / "slow_banner.log").read_text()
    (inf,) = explain_log(read_log(text=text))
    assert inf.contradictions and inf.contradictions[0].what.msg_id == "explain.contra.no_rule"
    assert all(e is None or e <= 2000 for e in replayed)


def test_axolotl_packing_efficiency_and_pipeline_config_are_read():
    text = ("[axolotl.utils.samplers.multipack] sample_packing_eff_est across ranks: [0.9783]\n"
            "[axolotl.utils.trainer.calculate_total_num_steps:481] total_num_steps: 14")
    (run,) = read_log(text=text).runs
    assert run.wrapper["axolotl_packing_efficiency"].value == 0.9783 and run.wrapper["axolotl_total_num_steps"].value == 14
    meta = json.loads((CORPUS / "neox-988-pipeline-multinode.json").read_text())
    (inf,) = explain_log(read_log(str(CORPUS / meta["file"])))
    fact = next(f for f in inf.facts if f.msg_id == "explain.fact.pipeline")
    assert (fact.params["mb"], fact.params["size"]) == (meta["facts"]["micro_batches"], meta["facts"]["micro_batch_size"])


def test_the_mfu_a_log_implies_with_a_model_and_a_gpu():
    from trainsteps.timing.gpus import find_gpu

    args = ["explain", "--text", SEED_001 + "\n" + BAR_78, "--params", "7.6e9", "--gpu", "h100-sxm", "--seq-length", "2048",
            "--format", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    mfu = json.loads(result.output)["runs"][0]["time"]["mfu"]
    tokens = 2048 * 80  # seq length x the banner's total batch
    expected = tokens * 6 * 7.6e9 / (find_gpu("h100-sxm").peak("bf16") * 1) / 4.0
    assert abs(mfu["expected"] - expected) < 1e-3
    bad = CliRunner().invoke(cli, ["explain", "--text", BAR_78, "--gpu", "h100-sxm"])
    assert bad.exit_code == 2 and "--model or --params" in bad.output


def test_neox_tokens_per_epoch_are_used_as_printed():
    from trainsteps.logs.pretrain import PretrainObserved, explain_pretrain

    meta = json.loads((CORPUS / "neox-1164-tokens-per-epoch.json").read_text())
    pretrain = PretrainObserved()
    read_log(str(CORPUS / meta["file"]), also=pretrain.feed)
    facts = explain_pretrain(pretrain.finish()).facts
    assert facts["tokens_per_epoch"] == meta["facts"]["tokens_per_epoch"]
    per_epoch = facts["samples_per_epoch_min"]
    assert (meta["facts"]["tokens_per_epoch"] - 1) // meta["facts"]["seq_length"] == per_epoch
    # the thread's train_iters x global batch (micro x GPUs x accumulation) needs more than one epoch: 2 were built
    f = meta["facts"]
    global_batch = f["micro_batch_size"] * f["gpus"] * f["gradient_accumulation_steps"]
    assert f["train_iters_tried"] * global_batch > per_epoch and round(facts["epochs_built"]) == f["epochs_built_at_8064"]


def test_megatron_dataset_target_sizes_are_read():
    from trainsteps.logs.pretrain import PretrainObserved, explain_pretrain

    meta = json.loads((CORPUS / "megatron-516-target-sizes.json").read_text())
    pretrain = PretrainObserved()
    read_log(str(CORPUS / meta["file"]), also=pretrain.feed)
    observed = pretrain.finish()
    f = meta["facts"]
    assert observed["target_sizes"] == {"train": f["train_samples_target"], "validation": f["valid_samples_target"],
                                        "test": f["test_samples_target"]}
    assert explain_pretrain(observed).facts["train_samples_target"] == f["train_samples_target"]


# ---------------------------------------------------------------- Megatron layout, NeMo postfix, Lightning endings

def _pretrain_of(meta_id: str):
    from trainsteps.logs.pretrain import PretrainObserved, explain_pretrain

    meta = json.loads((CORPUS / f"{meta_id}.json").read_text())
    pretrain = PretrainObserved()
    obs = read_log(str(CORPUS / meta["file"]), also=pretrain.feed)
    return meta, obs, explain_pretrain(pretrain.finish())


def test_megatron_using_world_size_line_gives_the_layout_and_the_processes():
    from .corpus_score import expected_world

    for meta_id in ("megatron-184-t5-layout-16gpu", "megatron-109-t5-world2"):
        meta, obs, explanation = _pretrain_of(meta_id)
        f = meta["facts"]
        assert explanation.facts["world_size"] == expected_world(f)  # 2 nodes x 8 GPUs as the thread states; 2 as printed
        assert explanation.facts["data_parallel"] == f["data_parallel_size"]
        assert explanation.facts["tensor_parallel"] == f["tensor_model_parallel_size"]
        assert explanation.facts["pipeline_parallel"] == f["pipeline_model_parallel_size"]
        assert "ptlog.mg_layout_ok_nocp" in [msg for msg, _ in explanation.items]  # v2.6 prints no context-parallel size
        (inf,) = explain_log(obs)
        assert inf.world_size == expected_world(f)
        assert "world size" in "\n".join(explanation.lines("en")) and "世界" not in "\n".join(explanation.lines("zh"))


def test_megatron_layout_cli_shows_the_layout_and_the_world():
    meta = json.loads((CORPUS / "megatron-184-t5-layout-16gpu.json").read_text())
    result = CliRunner().invoke(cli, ["explain", str(CORPUS / meta["file"]), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["facts"]["world_size"] == 16 and data["runs"][0]["inferred"]["world_size"] == 16


MICRO_BATCH_LOGS = ("megatron-lumi-mi300x-tp4pp2-timelimit", "megatron-ds-notes-world1-micro8")


@pytest.mark.parametrize("meta_id", MICRO_BATCH_LOGS)
def test_megatron_micro_batches_are_global_over_micro_times_data_parallel_on_real_logs(meta_id):
    # num_microbatches_calculator.py: micro-batches = global batch / (micro batch x data-parallel size)
    meta, _, explanation = _pretrain_of(meta_id)
    f = meta["facts"]
    assert explanation.facts["micro_batches"] == f["micro_batches"]  # as the log prints it
    assert explanation.facts["micro_batch_size"] == f["micro_batch_size"]
    assert explanation.facts["data_parallel"] == f["data_parallel_size"]
    params = dict(explanation.items)["ptlog.mg_micro_ok"]  # the printed numbers add up, and explain says so
    assert (params["B"], params["m"], params["n"], params["D"]) == (f["global_batch_size"], f["micro_batch_size"],
                                                                     f["micro_batches"], f["data_parallel_size"])
    assert "ptlog.mg_micro_bad" not in dict(explanation.items)


@pytest.mark.parametrize("meta_id", MICRO_BATCH_LOGS)
def test_megatron_target_sizes_follow_from_the_printed_iterations_on_real_logs(meta_id):
    # training.py get_train_valid_test_num_samples: train = train_iters x B; validation = (train_iters // eval_interval
    # + 1) x eval_iters x B; test = eval_iters x B. The log prints both the settings and the sizes.
    meta, _, explanation = _pretrain_of(meta_id)
    f = meta["facts"]
    assert explanation.facts["train_samples_target"] == f["train_samples_target"]
    assert explanation.facts["train_iters_from_target"] == f["train_iters"]
    assert explanation.facts["target_sizes_expected"] == {"train": f["train_samples_target"],
                                                          "validation": f["valid_samples_target"],
                                                          "test": f["test_samples_target"]}
    items = dict(explanation.items)
    assert "ptlog.target_sizes_ok" in items and "ptlog.target_sizes_bad" not in items
    assert items["ptlog.target_sizes_ok"]["I"] == f["eval_interval"] and items["ptlog.target_sizes_ok"]["E"] == f["eval_iters"]


def test_megatron_s_own_global_batch_outranks_the_deepspeed_engine_s():
    # Megatron-DeepSpeed: the engine prints train_batch_size 4 from its ds_config; Megatron samples global batch 32
    meta, obs, explanation = _pretrain_of("megatron-ds-notes-world1-micro8")
    f = meta["facts"]
    assert f["deepspeed_train_batch_size"] != f["global_batch_size"]
    assert dict(explanation.items)["ptlog.target_sizes_iters"]["B"] == f["global_batch_size"]
    (inf,) = explain_log(obs)
    assert inf.world_size == f["world_size"]  # Megatron's world size 1, not the 8 GPUs the launch script announces
    assert inf.stopped == f["stopped"]


def test_megatron_target_sizes_that_the_settings_do_not_give_are_said_to_disagree():
    from trainsteps.logs.pretrain import explain_pretrain, parse_pretrain_log

    meta = json.loads((CORPUS / "megatron-lumi-mi300x-tp4pp2-timelimit.json").read_text())
    text = (CORPUS / meta["file"]).read_text(encoding="utf-8")
    printed = f"  eval_iters ...................................... {meta['facts']['eval_iters']}\n"
    assert printed in text
    changed = text.replace(printed, f"  eval_iters ...................................... {meta['facts']['eval_iters'] + 1}\n")
    explanation = explain_pretrain(parse_pretrain_log(changed.splitlines(keepends=True)))
    items = dict(explanation.items)
    assert "ptlog.target_sizes_bad" in items and "ptlog.target_sizes_ok" not in items
    assert items["ptlog.target_sizes_bad"]["test"] != meta["facts"]["test_samples_target"]
    at = [msg for msg, _ in explanation.items].index("ptlog.target_sizes_bad")
    assert "--start-eval-at-iter" in explanation.lines("en")[at] and "--start-eval-at-iter" in explanation.lines("zh")[at]


def test_nemo_postfix_gives_steps_done_and_the_global_batch():
    from trainsteps.logs.progress import printed_number

    meta, obs, _ = _pretrain_of("nemo-launcher-55-bar")
    (inf,) = explain_log(obs)
    f = meta["facts"]
    step = f["global_step_printed"]
    consumed, error = printed_number(f["consumed_samples_printed"])
    batch = inf.inferred["global_batch_size"]
    # NeMo: consumed_samples = (global_step + 1) x global batch, read within tqdm's 3 significant digits
    assert batch.low * (step + 1) >= consumed - error and batch.low - 1 < (consumed - error) / (step + 1)
    assert batch.high * (step + 1) <= consumed + error and batch.high + 1 > (consumed + error) / (step + 1)
    finding = next(x for x in inf.facts if x.msg_id == "explain.fact.nemo_batch")
    assert finding.params["done"] == f"{step + 1:,}"
    assert inf.run.last_step.value == step  # not the bar's 795 of 77,225 batches


def test_nemo_rounded_global_step_is_read_whole():
    meta, obs, _ = _pretrain_of("nemo-pytorch-118369-nccl")
    (inf,) = explain_log(obs)
    printed = meta["facts"]["global_step_printed"].split("=")[-1]
    assert inf.run.last_step.value == int(float(printed))  # 3.2e+4 is 32,000, not 3
    assert inf.stopped == meta["facts"]["stopped"]
    assert inf.inferred["global_batch_size"].low <= inf.inferred["global_batch_size"].high


def test_lightning_fit_stopped_and_the_bar_without_total():
    meta, obs, _ = _pretrain_of("lightning-rvt-40-maxsteps")
    (inf,) = explain_log(obs)
    stopped = next(x for x in inf.facts if x.msg_id == "explain.fact.lightning_stopped")
    assert stopped.params["limit"] == "max_steps" and stopped.params["n"] == meta["facts"]["max_steps"]
    last_bar = [line for line in (CORPUS / meta["file"]).read_text().splitlines() if "it [" in line][-1]
    bar = next(x for x in inf.facts if x.msg_id == "explain.fact.lightning_itbar")
    assert f"Epoch {bar.params['epoch']}: : {bar.params['batches']}it [{bar.params['elapsed']}," in last_bar
    assert f"{bar.params['rate']}it/s" in last_bar


def test_two_writers_of_one_jsonl_are_timed_on_their_own_clocks():
    """lf-qwen25-3b-2gpu-dup-jsonl: two trainings wrote one trainer_log.jsonl; from step 3,010 their lines interleave
    (3010, 3020, 3010, 3030, 3020, ...), and at line 1047 the file starts over from step 5,010 (a resume: elapsed_time
    back to minutes). Each writer's clock gives the same speed; intervals between consecutive lines mixed the two.
    The expected rate is the log's own: seconds per step of the first writer before the resume, and after it."""
    path = CORPUS / "lf-qwen25-3b-2gpu-dup-jsonl.trainer_log.jsonl"
    from trainsteps.timing.log_rates import clock_seconds
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    points = [(r["current_steps"], clock_seconds(r["elapsed_time"])) for r in rows]
    reset = next(i for i in range(1, len(points)) if points[i][1] < points[i - 1][1] - 3600)
    assert 0 < reset < len(points) - 100
    ((s0, t0), (s1, t1)), ((s2, t2), (s3, t3)) = (points[0], points[reset - 1]), (points[reset], points[-1])
    before, after = (t1 - t0) / (s1 - s0), (t3 - t2) / (s3 - s2)
    assert abs(before - after) < 0.05 * after  # one speed, as each clock tells it
    (inf,) = explain_log(read_log(str(path)))
    assert any(f.msg_id == "explain.fact.second_writer" for f in inf.facts)
    rate = inf.timing.rate.step_seconds
    assert abs(rate.expected - after) < 0.05 * after, (rate, after)
    assert rate.low <= after <= rate.high


def test_runtime_times_steps_per_second_is_a_range_that_names_a_count_only_when_it_excludes_the_other():
    """speed_metrics prints round(runtime, 4) and round(steps/s, 3): in real logs the product misses the steps the bar
    counts to (64358.151 x 0.085 = 5,470 for 5,490), and the range holds them."""
    import re

    from trainsteps.logs.infer_progress import runtime_steps_range
    for name in ("hf-cpt-windows-crlf-evalpauses.log", "lf-phi4-t4-nohup-cr.log"):
        text = (CORPUS / name).read_text(encoding="utf-8", errors="replace")
        runtime = float(re.search(r"'train_runtime': ([\d.]+)", text).group(1))
        per_second = float(re.search(r"'train_steps_per_second': ([\d.]+)", text).group(1))
        total = max(int(t) for _, t in re.findall(r"(\d+)/(\d+) \[", text))  # the training bar (evaluation bars are shorter)
        low, high = runtime_steps_range(runtime, per_second)
        assert low <= total <= high
    issue = ("100%|██████████| 782/782 [2:10:31<00:00,  9.98s/it]\n"
             "{'train_runtime': 7831.2, 'train_samples_per_second': 25.54, 'train_steps_per_second': 0.1, 'epoch': 2.0}")
    _, (inf,) = explain_text(issue)
    ids = {f.msg_id for f in inf.facts}
    assert "explain.fact.runtime_steps_same" in ids  # 783 printed, 779.2-787.0: the 782 steps; never "planned" alone
    _, (inf,) = explain_text(issue.replace("782/782", "781/782"))
    assert "explain.fact.runtime_steps_both" in {f.msg_id for f in inf.facts}  # 781 and 782 both fit: cannot tell
    cut = ("  77%|███████▋  | 3000/3900 [3:20:00<1:00:00,  4.00s/it]\n"
           "{'train_runtime': 12000.0, 'train_steps_per_second': 0.325, 'epoch': 2.31}")
    obs, (inf,) = explain_text(cut)
    fact = next(f for f in inf.facts if f.msg_id.startswith("explain.fact.runtime_steps"))
    assert fact.msg_id == "explain.fact.runtime_steps_planned" and fact.params["planned"] == "3,900"
    assert "planned 3,900 steps, not the 3,000 that ran" in render(obs, [inf], "en")


def test_wording_names_the_evidence_of_a_finish_and_leaves_out_empty_headings():
    obs, (inf,) = explain_text("Num examples = 1,047")
    text = render(obs, [inf], "en")
    assert "Step by step" not in text and "逐步推导" not in render(obs, [inf], "zh")
    assert "(a, b]: a excluded" in text
    path = CORPUS / "lf-qwen25-3b-2gpu-dup-jsonl.trainer_log.jsonl"
    obs = read_log(str(path))
    text = render(obs, explain_log(obs), "en")
    assert "train_runtime / Training completed" not in text
    assert "the run finished (trainer_log.jsonl's final line, written without a loss)" in text
    obs, (inf,) = explain_text(BAR_78)
    for lang, words in (("en", "it was still running when this was written, or the text stops there"),
                        ("zh", "或文本只截到这里")):
        assert words in render(obs, [inf], lang)
    obs, (inf,) = explain_text('{"current_steps": 1, "total_steps": 300, "loss": 2.0, "epoch": 0.06, '
                               '"elapsed_time": "0:01:16", "remaining_time": "6:18:24"}')
    assert "the elapsed_time of the one logged step" in render(obs, [inf], "en")


# ---------------------------------------------------------------- a banner older than every modelled release

def test_a_banner_dated_before_the_oldest_modelled_release_is_replayed_by_the_oldest_rules_and_said_so():
    from trainsteps.frameworks.hf.release_dates import RELEASE_DATES
    from trainsteps.frameworks.hf.releases import OLDEST
    from trainsteps.logs.infer import family_of

    path = CORPUS / "hf-11796-16-nodes-banner.log"
    logged = path.read_text().split()[1]  # `[INFO|trainer.py:1145] 2021-05-20 20:16:39,037 >> ***** Running training *****`
    (inf,) = explain_log(read_log(str(path)))
    (said,) = [f for f in inf.evidence if f.msg_id == "explain.ev.predates_releases"]
    assert said.params == {"date": logged, "oldest": str(OLDEST), "released": RELEASE_DATES[str(OLDEST)]}
    assert logged < RELEASE_DATES[str(OLDEST)]
    assert inf.releases and all(family_of(r) is family_of(str(OLDEST)) for r in inf.releases)


def test_a_banner_dated_after_the_oldest_release_says_nothing_of_it():
    _, (inf,) = explain_text(SEED_001)  # `[INFO|2025-03-22 15:43:25] trainer.py:2405 >> ***** Running training *****`
    assert inf.run.header_date == "2025-03-22"
    assert not any(f.msg_id.startswith("explain.ev.predates") for f in inf.evidence)


def test_every_modelled_release_has_its_pypi_date():
    from trainsteps.frameworks.hf.log_lines import all_releases
    from trainsteps.frameworks.hf.release_dates import RELEASE_DATES

    assert set(all_releases()) <= set(RELEASE_DATES)


def test_an_older_llamafactory_final_line_with_null_values_ends_the_run_and_an_early_end_is_said():
    # LLaMA-Factory releases that write every key (absent ones as null) end trainer_log.jsonl with a line whose loss is
    # null; this run's end line comes at 1664 of 2088
    path = next(CORPUS.glob("lf-neu-flashattn-early-end-jsonl*.jsonl"))
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["loss"] is None
    (inf,) = explain_log(read_log(str(path)))
    assert inf.status == "finished" and inf.end_step == last["current_steps"]
    (early,) = [f for f in inf.facts if f.msg_id == "explain.fact.finished_early"]
    assert early.params["total"] == f"{last['total_steps']:,}"


def test_the_epochs_a_total_covers_allow_the_rounding_of_steps_per_epoch():
    # ms-swift#6260: --num_train_epochs 20 planned 300 steps (15 a epoch: floor of 720-767 micro-batches / GA 48),
    # and the first step logs epoch 0.06 (48 / 767 rounds to 0.06): k / epoch is 15.4-18.2, the planned steps 15
    path = CORPUS / "swift-6260-multinode-crash.log"
    text = path.read_text()
    assert "--num_train_epochs 20" in text and "'global_step/max_steps': '1/300'" in text
    (inf,) = explain_log(read_log(str(path)))
    (epochs,) = [f for f in inf.facts if f.msg_id == "explain.fact.progress_epochs"]
    assert float(epochs.params["low"]) <= 20 <= float(epochs.params["high"])


def test_a_banner_run_that_ends_normally_epochs_before_its_plan_says_so():
    # a LLaMA-Factory web-UI running_log.txt: `Training completed.` at epoch 123.48 of the banner's 1,000
    path = CORPUS / "lf-deepseek7b-running-log.running_log.txt"
    text = path.read_text()
    assert "Num Epochs = 1,000" in text and "'epoch': 123.48}" in text and "Training completed." in text
    (inf,) = explain_log(read_log(str(path)))
    assert inf.status == "finished"
    (early,) = [f for f in inf.facts if f.msg_id == "explain.fact.finished_early_epoch"]
    assert (early.params["epoch"], early.params["epochs"]) == ("123.48", "1,000")
    assert any(f.msg_id == "explain.fact.finished_at_epoch" for f in inf.facts)


def test_a_crash_glued_to_a_bar_is_quoted_from_its_own_words_and_a_cut_quote_says_so():
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB"
    _, (inf,) = explain_text(SEED_001 + "\n" + BAR_78 + oom + " of which 1.2 GiB is free" * 4)
    (crash,) = [f for f in inf.facts if f.msg_id == "explain.fact.crashed"]
    assert crash.params["text"].startswith("torch.OutOfMemoryError") and crash.params["text"].endswith("…")
    assert len(crash.params["text"]) == 100


def test_of_several_attempts_each_killed_the_last_kill_ends_the_run():
    path = CORPUS / "landmark-65-killed.log"
    lines = path.read_text().splitlines()
    kills = [number for number, line in enumerate(lines, 1) if line.strip().endswith("Killed")]
    assert len(kills) >= 2
    (inf,) = explain_log(read_log(str(path)))
    (crash,) = [f for f in inf.facts if f.msg_id == "explain.fact.crashed"]
    assert crash.params["line"] == kills[-1]


def test_a_crash_whose_total_is_unknown_says_so_and_quotes_the_crash_not_the_bar():
    # a NeMo bar's total also counts validation batches, so it is no planned end
    path = next(p for p in CORPUS.glob("nemo*118369*") if p.suffix != ".json")
    (inf,) = explain_log(read_log(str(path)))
    (crash,) = [f for f in inf.facts if f.msg_id == "explain.fact.crashed"]
    text = render(read_log(str(path)), [inf])
    assert "of an unknown total" in text and "of ?" not in text
    assert crash.params["text"].startswith("Watchdog caught collective operation timeout")
