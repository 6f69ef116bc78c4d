"""`plan` and `solve` with a rate or a FLOPs model: the Time section, the `time` JSON object, and bad input."""

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "tests" / "assets" / "models" / "qwen2.5-7b"
NO_CONFIG = ROOT / "tests" / "assets" / "models" / "no-config"
SEED_001 = ["plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
            "--num-train-epochs", "300", "--transformers", "4.49.0"]
PACKED_8_GPUS = ["plan", "--num-examples", "100000", "--per-device-train-batch-size", "4", "--gradient-accumulation-steps",
                 "8", "--gpus", "8", "--num-train-epochs", "1", "--seq-length", "2048"]


def plan_json(run_cli, *args):
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# ---- seed 001 -----------------------------------------------------------------------------------

def test_seed_001_with_step_time_4_is_3900_steps_times_4_seconds(run_cli):
    data = plan_json(run_cli, *SEED_001, "--step-time", "4")
    time = data["time"]
    assert data["run"]["optimizer_steps"] == 3900  # from the engine, checked against recorded 4.49.0 runs
    assert time["parts"]["train"]["expected"] == 15600
    assert time["wall_seconds"]["expected"] == 15600  # only a step time: exactly steps x step time
    assert time["source"] == "measured"
    assert time["step_seconds"]["expected"] == 4
    assert time["parts"]["save"] is None and time["parts"]["prepare"] is None  # no rate for them: left out, and said
    assert time["left_out"] == ["save", "prepare"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_part_left_out_names_the_option_that_times_it(run_cli, lang):
    code, out, err = run_cli(*SEED_001, "--step-time", "4", "--eval-strategy", "epoch", "--lang", lang)
    from trainsteps.i18n import label

    assert code == 0, err
    section = out[out.rindex("\n\n"):].splitlines()
    for row, option in (("time.row.eval", "--eval-time"), ("time.row.save", "--save-time"), ("time.row.prepare", "--prepare-time")):
        line = next(line for line in section if line.strip().startswith(label(row, lang)))
        assert option in line, line


def test_seed_001_human_output_says_4_h_20_min_in_both_languages(run_cli):
    _, out, _ = run_cli(*SEED_001, "--step-time", "4s")
    assert "Time (measured: --step-time 4s)" in out
    assert "3,900 × 4 s = 4 h 20 min" in out
    _, out, _ = run_cli(*SEED_001, "--step-time", "4", "--lang", "zh")
    assert "3,900 × 4 s = 4 小时 20 分" in out


def test_the_time_object_has_every_documented_key(run_cli):
    time = plan_json(run_cli, *SEED_001, "--step-time", "4", "--price-per-gpu-hour", "2")["time"]
    assert {"wall_seconds", "parts", "gpu_hours", "cost", "step_seconds", "tokens_per_second", "source", "mfu"} <= set(time)
    assert set(time["parts"]) == {"train", "eval", "save", "prepare"}
    assert time["gpu_hours"]["expected"] == pytest.approx(15600 / 3600, abs=1e-3)
    assert time["cost"]["expected"] == pytest.approx(2 * 15600 / 3600, abs=1e-3)
    assert time["cost"]["currency"] == "USD"


def test_no_time_section_without_a_rate_or_a_model(run_cli):
    data = plan_json(run_cli, *SEED_001)
    assert "time" not in data


# ---- measured rates -----------------------------------------------------------------------------

def test_tokens_per_second_is_total_unless_written_per_gpu(run_cli):
    total = plan_json(run_cli, *PACKED_8_GPUS, "--tokens-per-second", "80000")["time"]
    per_gpu = plan_json(run_cli, *PACKED_8_GPUS, "--tokens-per-second", "10000/gpu")["time"]
    assert total["step_seconds"]["expected"] == pytest.approx(per_gpu["step_seconds"]["expected"])
    assert any("10,000 x 8 GPUs = 80,000" in note for note in per_gpu["notes"])
    # 100,000 rows, 4 x 8 x 8 = 256 rows a step of 2,048 tokens, at 80,000 tokens/s
    steps = plan_json(run_cli, *PACKED_8_GPUS)["run"]["optimizer_steps"]
    assert total["parts"]["train"]["expected"] == pytest.approx(100000 * 2048 / 80000, rel=1e-6) or steps


def test_samples_per_second_is_the_rows_really_fed_over_the_rate(run_cli):
    data = plan_json(run_cli, *SEED_001, "--samples-per-second", "20")
    # a step feeds up to 10 x 8 rows; each epoch's last step feeds fewer, so the rows really fed count
    assert data["time"]["parts"]["train"]["expected"] == pytest.approx(data["run"]["samples_seen"] / 20, rel=1e-6)
    assert data["time"]["step_seconds"]["expected"] < 80 / 20


def test_a_measured_rate_and_a_model_together_use_the_rate_and_say_so(run_cli):
    time = plan_json(run_cli, *PACKED_8_GPUS, "--step-time", "8", "--model", QWEN, "--gpu", "h100-sxm")["time"]
    assert time["source"] == "measured"
    assert time["step_seconds"]["expected"] == 8
    assert any("measured rate (--step-time 8) is used" in note for note in time["notes"])
    assert time["mfu"]["expected"] == pytest.approx(256 * 2048 * 4.365e10 / (8 * 989.4e12 * 8), rel=0.01)


def test_a_measured_rate_and_a_model_without_a_gpu_use_the_rate_and_the_models_size_for_saves_and_the_load(run_cli):
    with_model = plan_json(run_cli, *PACKED_8_GPUS, "--step-time", "8", "--model", QWEN, "--save-steps", "100")["time"]
    rate_only = plan_json(run_cli, *PACKED_8_GPUS, "--step-time", "8", "--save-steps", "100")["time"]
    assert with_model["source"] == rate_only["source"] == "measured"
    assert with_model["parts"]["train"] == rate_only["parts"]["train"]
    assert with_model["parts"]["save"]["expected"] > 0 and with_model["parts"]["prepare"]["expected"] > 0
    assert rate_only["parts"]["save"] is None and with_model.get("mfu") is None
    assert any("model without a GPU" in note for note in with_model["notes"])


def test_timing_from_a_notebook_bar_of_a_public_log(run_cli):
    log = ROOT / "tests" / "fixtures" / "logs" / "public" / "unsloth-1140_two_runs.log"
    # [ 22/290 02:50 < 38:04, 0.12 it/s, Epoch 0.36/5]: 467 rows, batch 2 x accumulation 4 -> 290 steps over 5 epochs
    data = plan_json(run_cli, "plan", "--num-examples", "467", "--per-device-train-batch-size", "2",
                     "--gradient-accumulation-steps", "4", "--num-train-epochs", "5", "--transformers", "4.45.2",
                     "--timing-from", log)
    time = data["time"]
    assert data["run"]["optimizer_steps"] == 290  # the bar's own total
    assert time["rate_from"]["origin"] == "log"
    assert "notebook bar 22/290 8.33s/it" in time["rate_from"]["detail"]
    assert time["step_seconds"]["expected"] == pytest.approx(1 / 0.12, rel=1e-5)
    assert time["parts"]["train"]["expected"] == pytest.approx(290 / 0.12, rel=1e-5)


# ---- the FLOPs model ----------------------------------------------------------------------------

def test_the_flops_model_gives_an_interval_from_the_fitted_mfu(run_cli):
    time = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100")["time"]
    assert time["source"] == "model"
    mfu, step = time["mfu"], time["step_seconds"]
    assert mfu["low"] < mfu["expected"] < mfu["high"]
    assert step["high"] / step["low"] == pytest.approx(mfu["high"] / mfu["low"], rel=1e-3)
    assert any("--stack" in note for note in time["notes"])  # the stack is unknown: the range covers every stack


def test_saying_the_stack_narrows_the_mfu_and_moves_it_to_that_stacks_fitted_level(run_cli):
    from trainsteps.timing.efficiency_fit import COEFFICIENTS

    unknown = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100")["time"]["mfu"]
    megatron = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100", "--stack", "megatron")["time"]["mfu"]
    trainer = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100", "--stack", "hf")["time"]["mfu"]
    level_ratio = math.exp(COEFFICIENTS["stack_megatron"] - COEFFICIENTS["stack_hf"])
    assert megatron["expected"] / trainer["expected"] == pytest.approx(level_ratio, rel=1e-3)
    assert megatron["high"] / megatron["low"] < unknown["high"] / unknown["low"]
    # the Trainer's own sources spread as widely as every stack's together (119 sources): never wider than unknown
    assert trainer["high"] / trainer["low"] <= unknown["high"] / unknown["low"]


def test_a_given_mfu_range_replaces_the_default(run_cli):
    time = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100", "--mfu", "0.3-0.5")["time"]
    assert time["mfu"] == {"low": 0.3, "expected": 0.4, "high": 0.5}


def test_evaluations_cost_forward_only_flops(run_cli):
    data = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100", "--eval-strategy", "steps",
                     "--eval-steps", "100", "--eval-examples", "1000")
    time, run = data["time"], data["run"]
    train_per_token = time["parts"]["train"]["expected"] / (run["samples_seen"] * 2048)
    # each evaluation: 1,000 rows x 2,048 tokens, forward only: a third of the training FLOPs per token (2N vs 6N,
    # attention 1 vs 3 passes)
    per_eval_token = time["parts"]["eval"]["expected"] / (len(run["eval_steps"]) * 1000 * 2048)
    assert per_eval_token / train_per_token == pytest.approx(1 / 3, rel=1e-3)


def test_lora_runs_cost_4n_not_6n_per_token(run_cli):
    full = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100", "--mfu", "0.3")["time"]
    lora = plan_json(run_cli, *PACKED_8_GPUS, "--model", QWEN, "--gpu", "h100", "--mfu", "0.3", "--training", "lora")["time"]
    ratio = lora["step_seconds"]["expected"] / full["step_seconds"]["expected"]
    assert 4 / 6 < ratio < 0.72  # 4N + attention over 6N + attention


# ---- solve --------------------------------------------------------------------------------------

def test_solve_time_budget_fits_max_steps_at_the_slow_end_of_the_rate(run_cli):
    code, out, err = run_cli("solve", "--time-budget", "12h", "--step-time", "4", "--num-examples", "1047",
                             "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8", "--format", "json")
    data = json.loads(out)
    assert code == 0, err
    usable = 12 * 3600 * 0.9
    assert data["max_steps"] == int(usable // (4 * 1.10))  # the high end of a measured 4 s: 4.4 s
    assert data["time"]["wall_seconds"]["high"] <= usable
    assert data["time_budget"]["save_steps"] == int(12 * 3600 / 10 // 4.4)


def test_solve_time_budget_with_a_target_says_whether_it_fits(run_cli):
    code, out, _ = run_cli("solve", "--time-budget", "1h", "--epochs", "300", "--step-time", "4", "--num-examples", "1047",
                           "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8")
    assert code == 0
    assert "the target does not fit" in out


def test_solve_with_a_target_and_a_rate_prints_the_time(run_cli):
    code, out, _ = run_cli("solve", "--epochs", "3", "--streaming", "--num-examples", "1047", "--step-time", "4",
                           "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8", "--format", "json")
    data = json.loads(out)
    assert data["time"]["parts"]["train"]["expected"] == data["ceil"]["optimizer_steps"] * 4


# ---- bad input: one line, exit 2 ----------------------------------------------------------------

@pytest.mark.parametrize(("args", "says"), [
    (["--step-time", "0"], "--step-time must be a positive duration"),
    (["--step-time", "-4"], "--step-time must be a positive duration"),
    (["--step-time", "fast"], "cannot read the duration"),
    (["--tokens-per-second", "0"], "--tokens-per-second must be a positive number"),
    (["--samples-per-second", "-3"], "--samples-per-second must be a positive number"),
    (["--model", str(QWEN), "--gpu", "h100x"], 'unknown GPU "h100x"'),
    (["--model", str(NO_CONFIG), "--gpu", "h100"], "no config.json in the model folder"),
    (["--model", str(QWEN), "--gpu", "h100", "--mfu", "1.5"], "MFU must be in (0, 1]"),
    (["--model", str(QWEN), "--gpu", "h100", "--mfu", "0"], "MFU must be in (0, 1]"),
    (["--model", str(QWEN), "--gpu", "h100", "--mfu", "0.5-0.3"], "MFU must be in (0, 1]"),
    (["--model", str(QWEN)], "the FLOPs model also needs --gpu"),
    (["--step-time", "4", "--tokens-per-second", "9000"], "give one measured rate"),
    (["--params", "-7e9", "--gpu", "h100"], "--params must be a positive parameter count"),
])
def test_bad_time_input_is_one_line_and_exit_2(run_cli, args, says):
    code, out, err = run_cli(*PACKED_8_GPUS, *args)
    assert code == 2
    assert says in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_an_unknown_gpu_lists_the_known_ones_with_a_did_you_mean(run_cli):
    _, _, err = run_cli(*PACKED_8_GPUS, "--model", QWEN, "--gpu", "a100-80")
    assert "did you mean a100-80g?" in err
    assert "h100-sxm" in err and "ascend-910b" in err


def test_unknown_gpu_in_chinese(run_cli):
    code, _, err = run_cli(*PACKED_8_GPUS, "--model", QWEN, "--gpu", "h1000", "--lang", "zh")
    assert code == 2
    assert "未知的 GPU" in err


# ---- fuzz -----------------------------------------------------------------------------------------

TEXT = st.one_of(st.text(max_size=12), st.from_regex(r"-?[0-9]{0,4}(\.[0-9]{0,3})?(ms|s|m|h|d|/gpu|%)?", fullmatch=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(option=st.sampled_from(["--step-time", "--tokens-per-second", "--samples-per-second", "--mfu", "--gpu",
                               "--params", "--eval-time", "--save-time", "--prepare-time"]), value=TEXT)
def test_any_value_of_a_time_option_is_an_answer_or_one_line_error(run_cli, option, value):
    extra = ["--model", str(QWEN), "--gpu", "h100"] if option in ("--mfu",) else []
    extra = ["--gpu", "h100"] if option == "--params" else extra
    extra = ["--params", "7e9"] if option == "--gpu" else extra
    extra = extra or (["--step-time", "4"] if option in ("--eval-time", "--save-time", "--prepare-time") else [])
    if value.startswith("-") or not value.strip():
        value = " " + value if value.startswith("-") else value
    code, out, err = run_cli(*PACKED_8_GPUS, *extra, option, value, "--format", "json")
    assert code in (0, 2), err
    if code == 0:
        time = json.loads(out)["time"]
        wall = time["wall_seconds"]
        assert 0 <= wall["low"] <= wall["expected"] <= wall["high"]
    else:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "internal" not in err.lower()


# ---- every form of plan -------------------------------------------------------------------------

def test_megatron_plans_take_tokens_per_step_from_the_plan_and_evaluations_from_eval_iters(run_cli):
    data = plan_json(run_cli, "plan", "--framework", "megatron", "--micro-batch-size", "2", "--global-batch-size", "512",
                     "--gpus", "8", "--nodes", "4", "--train-iters", "1000", "--seq-length", "4096",
                     "--tensor-parallel-size", "2", "--train-tokens", "10000000000", "--eval-interval", "200",
                     "--model", QWEN, "--gpu", "h100")
    time = data["time"]
    assert time["gpus"] == 32
    assert not any("--stack" in note for note in time["notes"])  # a Megatron plan says its stack
    args = ["plan", "--framework", "megatron", "--micro-batch-size", "2", "--global-batch-size", "512", "--gpus", "8",
            "--nodes", "4", "--train-iters", "1000", "--seq-length", "4096", "--tensor-parallel-size", "2",
            "--train-tokens", "10000000000", "--eval-interval", "200", "--model", QWEN, "--gpu", "h100"]
    assert time["mfu"] == plan_json(run_cli, *args, "--stack", "megatron")["time"]["mfu"]
    assert time["mfu"] != plan_json(run_cli, *args, "--stack", "hf")["time"]["mfu"]
    tokens_per_step = 512 * 4096
    assert time["tokens_per_second"]["expected"] * time["step_seconds"]["expected"] == pytest.approx(tokens_per_step)
    evals = len(data["run"]["eval_steps"])
    # each evaluation: eval_iters 100 x 512 x 4,096 tokens, forward only
    per_token_train = time["parts"]["train"]["expected"] / (1000 * tokens_per_step)
    per_token_eval = time["parts"]["eval"]["expected"] / (evals * 100 * 512 * 4096)
    assert per_token_eval / per_token_train == pytest.approx(1 / 3, rel=1e-3)


def test_plan_from_a_config_file_gets_the_time_section(run_cli):
    config = ROOT / "examples" / "llamafactory" / "sft_lora.yaml"
    code, out, err = run_cli("plan", config, "--step-time", "3")
    assert code == 0, err
    assert "Time (measured: --step-time 3)" in out


def test_a_lora_config_is_modelled_at_4n(run_cli):
    config = ROOT / "examples" / "llamafactory" / "sft_lora.yaml"  # finetuning_type: lora
    time = plan_json(run_cli, "plan", config, "--params", "8e9", "--gpu", "a100", "--seq-length", "1024")["time"]
    assert any("(lora:" in note for note in time["notes"])
    assert any("stack hf" in note for note in time["notes"])  # a Trainer-family config: the Trainer's stack
    assert not any("--stack" in note for note in time["notes"])


@pytest.mark.parametrize(("packing", "length"), [("packing", "max_length"), ("packing", "max_seq_length"),
                                                ("sample_packing", "sequence_len")])
def test_a_config_that_packs_its_rows_to_a_named_length_is_costed_at_that_length(run_cli, tmp_path, packing, length):
    """TRL's SFT `packing` with `max_length` (or the older `max_seq_length`), Axolotl's `sample_packing` with
    `sequence_len`: every packed row is that long, so the FLOPs model needs no --seq-length; without packing it does."""
    config = tmp_path / "sft.yaml"
    config.write_text(f"{packing}: true\n{length}: 2048\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 4\n"
                      "num_train_epochs: 1\n")
    time = plan_json(run_cli, "plan", config, "--num-examples", "10000", "--params", "7e9", "--gpu", "h100-sxm")["time"]
    assert any(note.startswith("tokens per step: 16 packed rows x 2048 tokens") and length in note for note in time["notes"])
    config.write_text(config.read_text().replace(f"{packing}: true", f"{packing}: false"))
    code, _, err = run_cli("plan", config, "--num-examples", "10000", "--params", "7e9", "--gpu", "h100-sxm")
    assert code == 2 and "tokens per step are unknown" in err


def test_counted_data_is_costed_with_its_padding_not_the_maximum_length(run_cli):
    pytest.importorskip("tokenizers")
    data_file = ROOT / "examples" / "llamafactory" / "data" / "demo_alpaca.json"
    tokenizer = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
    code, out, err = run_cli("plan", "--data", data_file, "--tokenizer", tokenizer, "--per-device-train-batch-size", "4",
                             "--params", "1e9", "--gpu", "rtx4090", "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    run, note = plan["run"], next(n for n in plan["time"]["notes"] if n.startswith("tokens per step"))
    per_step = float(note.split(": ")[1].split(" (")[0].replace(",", ""))
    assert per_step == pytest.approx(run["padded_tokens_seen"] / run["optimizer_steps"], rel=1e-3)
    code, out, _ = run_cli("count", data_file, "--tokenizer", tokenizer, "--format", "json")
    lengths = json.loads(out)["lengths"]
    rows_per_step = 4  # batch 4, accumulation 1, one process
    # padded to the longest of 4 rows: above the mean length, below the longest row of the data
    assert lengths["mean"] < per_step / rows_per_step < lengths["max"]


def test_the_answer_line_ends_with_the_expected_wall_time(run_cli):
    code, out, _ = run_cli("plan", "--num-examples", "1047", "--per-device-train-batch-size", "10",
                           "--gradient-accumulation-steps", "8", "--num-train-epochs", "300", "--transformers", "4.49.0",
                           "--step-time", "4")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("3,900 optimizer steps") and first.endswith(" · ~4 h 20 min")


def test_counted_data_keeps_the_attention_term_at_the_padded_row_length(run_cli):
    pytest.importorskip("tokenizers")
    data_file = ROOT / "examples" / "llamafactory" / "data" / "demo_alpaca.json"
    tokenizer = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
    plan = plan_json(run_cli, "plan", "--data", data_file, "--tokenizer", tokenizer, "--per-device-train-batch-size", "4",
                     "--model", QWEN, "--gpu", "h100", "--mfu", "0.4")
    run = plan["run"]
    row = run["padded_tokens_seen"] / run["samples_seen"]
    note = next(n for n in plan["time"]["notes"] if "FLOPs per token" in n)
    assert "with the attention term" in note
    same = plan_json(run_cli, *PACKED_8_GPUS[:1], "--num-examples", "1000", "--per-device-train-batch-size", "4",
                     "--seq-length", str(round(row)), "--model", QWEN, "--gpu", "h100", "--mfu", "0.4")
    flops = float(note.split(" FLOPs")[0])
    flops_seq = float(next(n for n in same["time"]["notes"] if "FLOPs per token" in n).split(" FLOPs")[0])
    assert flops == pytest.approx(flops_seq, rel=2e-3)  # the same as --seq-length at the mean padded row


def counted_plan(run_cli, *extra):
    pytest.importorskip("tokenizers")
    data_file = ROOT / "examples" / "llamafactory" / "data" / "demo_alpaca.json"
    tokenizer = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
    return plan_json(run_cli, "plan", "--data", data_file, "--tokenizer", tokenizer, "--per-device-train-batch-size", "4",
                     "--step-time", "2", *extra)["time"]


def test_counted_data_puts_its_tokenization_in_the_preparation_at_the_rate_its_count_took(run_cli):
    time = counted_plan(run_cli)
    note = next(n for n in time["notes"] if n.startswith("tokenization: "))
    tokens, seconds = note.split(" tokens took ")
    counted_seconds = float(seconds.split(" s ")[0].replace(",", ""))
    prepare = time["parts"]["prepare"]
    assert float(tokens.split(": ")[1].replace(",", "")) > 100_000  # the whole file, not a sample
    assert prepare["low"] == pytest.approx(prepare["expected"] * 0.5, rel=1e-3)
    assert prepare["high"] == pytest.approx(prepare["expected"] * 3.0, rel=1e-3)
    assert prepare["expected"] == pytest.approx(counted_seconds, abs=0.06)  # the note rounds to 0.1 s
    assert "prepare" not in time["left_out"]
    assert any(n.startswith("preparation is the tokenization only") for n in time["notes"])


def test_a_count_read_from_the_cache_measured_no_tokenization_and_says_so(run_cli):
    counted_plan(run_cli)  # fills the cache
    time = counted_plan(run_cli)
    assert not any(n.startswith("tokenization: ") for n in time["notes"])
    assert any("counted from the cache" in n for n in time["notes"])
    assert "prepare" in time["left_out"]


def test_a_measured_preparation_replaces_the_tokenization_estimate(run_cli):
    time = counted_plan(run_cli, "--prepare-time", "5m")
    assert time["parts"]["prepare"] == {"low": 300.0, "expected": 300.0, "high": 300.0}
    assert not any(n.startswith("tokenization: ") for n in time["notes"])


def test_with_a_model_the_preparation_is_the_load_and_the_tokenization(run_cli):
    time = counted_plan(run_cli, "--params", "1e9", "--gpu", "h100")
    assert any(n.startswith("preparation is the model load") and n.endswith("and the data's tokenization")
               for n in time["notes"])


# ---- the evaluation set a config states -----------------------------------------------------------

AXOLOTL_LORA = [str(ROOT / "examples" / "axolotl" / "lora_chat.yml"), str(ROOT / "examples" / "axolotl" / "accelerate_2gpu.yaml")]


def test_an_axolotl_val_set_size_is_the_evaluation_set_the_flops_model_costs(run_cli):
    data = plan_json(run_cli, "plan", *AXOLOTL_LORA, "--params", "8e9", "--gpu", "rtx4090", "--seq-length", "1024")
    time = data["time"]
    # val_set_size 0.05 of 2,500 rows: train_test_split holds out ceil(0.05 x 2,500) = 125, and 2,375 train
    assert data["inputs"]["num_examples"] == 2375 and len(data["run"]["eval_steps"]) > 0
    assert time["parts"]["eval"] is not None and "eval" not in time["left_out"]
    assert any("125 rows" in note and "val_set_size" in note for note in time["notes"])


# ---- activation checkpointing said on the command line ----------------------------------------------

def test_activation_checkpointing_given_by_flag_narrows_the_fitted_mfu_and_is_no_longer_asked_for(run_cli):
    base = [*PACKED_8_GPUS, "--params", "7e9", "--gpu", "h100-sxm", "--stack", "hf"]
    open_ = plan_json(run_cli, *base)["time"]
    assert any("--activation-checkpointing" in note for note in open_["notes"])  # the note names the way to say it
    for value in ("none", "full"):
        said = plan_json(run_cli, *base, "--activation-checkpointing", value)["time"]
        assert said["mfu"]["high"] / said["mfu"]["low"] < open_["mfu"]["high"] / open_["mfu"]["low"]
        assert not any("checkpointing" in note and "narrows" in note for note in said["notes"])


def test_activation_checkpointing_without_a_flops_model_is_refused(run_cli):
    code, out, err = run_cli(*SEED_001, "--step-time", "4", "--activation-checkpointing", "full")
    assert code == 2 and out == "" and "--activation-checkpointing" in err


def test_a_lora_over_an_8_bit_base_says_it_is_planned_as_lora_without_the_int8_cost(run_cli, tmp_path):
    # examples/axolotl/lora_chat.yml: adapter lora over load_in_8bit: true; the fit holds no 8-bit base
    time = plan_json(run_cli, "plan", *AXOLOTL_LORA, "--params", "8e9", "--gpu", "rtx4090", "--seq-length", "1024")["time"]
    assert any("8-bit" in note and "lora" in note for note in time["notes"])
    plain = tmp_path / "lora.yml"
    plain.write_text(Path(AXOLOTL_LORA[0]).read_text(encoding="utf-8").replace("load_in_8bit: true", "load_in_8bit: false"))
    data_dir = Path(AXOLOTL_LORA[0]).parent
    plain.write_text(plain.read_text(encoding="utf-8").replace("../llamafactory/", str(data_dir.parent / "llamafactory") + "/"))
    time = plan_json(run_cli, "plan", str(plain), AXOLOTL_LORA[1], "--params", "8e9", "--gpu", "rtx4090", "--seq-length", "1024")["time"]
    assert not any("8-bit" in note for note in time["notes"])


def test_a_lora_save_says_it_writes_the_adapter_at_its_assumed_share_of_the_parameters(run_cli):
    from trainsteps.timing.overheads import ADAPTER_SHARE

    lora = plan_json(run_cli, *PACKED_8_GPUS, "--params", "8e9", "--gpu", "h100-sxm", "--training", "lora", "--save-steps", "100")["time"]
    full = plan_json(run_cli, *PACKED_8_GPUS, "--params", "8e9", "--gpu", "h100-sxm", "--save-steps", "100")["time"]
    assert any("adapter" in note and f"{ADAPTER_SHARE:.0%}" in note for note in lora["notes"])
    assert not any("adapter" in note for note in full["notes"])
