"""`trainsteps plan --framework neox|megatron|deepspeed|lightning` end to end."""

import json

import pytest
from click.testing import CliRunner

from trainsteps.cli.main import cli

from .conftest import load


def run(*args):
    return CliRunner().invoke(cli, ["plan", *args])


def test_megatron_plans_from_an_idx_file(tmp_path):
    pytest.importorskip("numpy")
    from trainsteps.data.idx import write_idx_from_lengths

    lengths = load("mcore")["datasets"]["L1000"]
    prefix = write_idx_from_lengths(str(tmp_path / "corpus"), lengths)
    result = run("--framework", "megatron", "--data-prefix", prefix, "--seq-length", "128", "--global-batch-size", "1000",
                 "--micro-batch-size", "1", "--world-size", "8", "--train-samples", "1139", "--eval-interval", "1", "--eval-iters", "1",
                 "--eval-global-batch-size", "25", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    recorded = load("mcore")["cases"][2]["splits"][0]
    assert f"> total number of samples: {recorded['len']}" in data["banner_lines"]  # the train target 1139 needs 2 epochs
    assert f"> total number of epochs: {recorded['epochs']}" in data["banner_lines"]
    assert data["run"]["optimizer_steps"] == 1
    assert recorded["tokens_per_epoch"] == next(s["value"] for s in data["derivation"] if s["key"] == "train.tokens_per_epoch")


def test_neox_seed004_in_chinese():
    result = run("--framework", "neox", "--train-tokens", "32017905665", "--seq-length", "2048", "--train-batch-size", "1000",
                 "--micro-batch-size", "1000", "--train-iters", "24000", "--lang", "zh")
    assert result.exit_code == 0, result.output
    assert "    total number of samples: 31267487" in result.output
    assert "实际训练的 epoch 数" in result.output


def test_deepspeed_triple_and_its_error():
    ok = run("--framework", "deepspeed", "--train-batch-size", "1024", "--micro-batch-size", "4", "--world-size", "32")
    assert ok.exit_code == 0 and "gradient_accumulation_steps .. 8" in ok.output
    bad = run("--framework", "deepspeed", "--train-batch-size", "16", "--micro-batch-size", "4", "--world-size", "8")
    assert bad.exit_code == 2
    assert "Gradient accumulation steps: 0 has to be greater than 0" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


def test_lightning_needs_the_dataset_size():
    result = run("--framework", "lightning", "--per-device-train-batch-size", "4")
    assert result.exit_code == 2 and "--num-examples" in result.output


def test_hf_path_is_untouched_by_the_pretraining_options():
    result = run("--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
                 "--num-train-epochs", "3", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["framework"] == "hf"


def test_planning_imports_neither_numpy_nor_torch():
    import subprocess
    import sys

    code = ("import sys; import trainsteps.cli.plan, trainsteps.frameworks.neox, trainsteps.frameworks.megatron, "
            "trainsteps.frameworks.lightning, trainsteps.logs.pretrain; print([m for m in ('numpy', 'torch') if m in sys.modules])")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_deepspeed_config_with_auto_values_under_the_hf_trainer(tmp_path):
    case = load("deepspeed")["hf_auto"]["cases"][-1]  # explicit train_batch_size 100 vs 2 x 4 x 8
    config = tmp_path / "ds_config.json"
    config.write_text(json.dumps(case["config"]))
    result = run("--framework", "deepspeed", "--deepspeed-config", str(config), "--per-device-train-batch-size", str(case["bs"]),
                 "--gradient-accumulation-steps", str(case["ga"]), "--world-size", str(case["world"]))
    assert result.exit_code == 2
    assert case["mismatches"][0] in result.output
    config.write_text(json.dumps({k: "auto" for k in case["config"]}))
    ok = run("--framework", "deepspeed", "--deepspeed-config", str(config), "--per-device-train-batch-size", "4",
             "--gradient-accumulation-steps", "8", "--world-size", "4", "--format", "json")
    assert json.loads(ok.output)["batch"]["train_batch_size"] == load("deepspeed")["hf_auto"]["cases"][0]["filled"]["train_batch_size"]


def test_lightning_ddp_plan_matches_the_two_rank_run():
    case = next(c for c in load("lightning")["cases"] if c.get("world") == 2 and not c.get("drop_last"))
    result = run("--framework", "lightning", "--num-examples", str(case["n"]), "--per-device-train-batch-size", str(case["bs"]),
                 "--gradient-accumulation-steps", str(case["acc"]), "--world-size", "2",
                 *(["--max-epochs", str(case["max_epochs"])] if case["max_epochs"] is not None else []),
                 "--max-steps", str(case["max_steps"]), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["run"]["optimizer_steps"] == case["global_step"]
    assert data["run"]["batches_per_epoch"] == case["num_training_batches"]


def test_megatron_split_reaches_the_plan():
    base = ["--framework", "megatron", "--seq-length", "2048", "--global-batch-size", "64", "--micro-batch-size", "4",
            "--world-size", "16", "--train-iters", "100", "--train-tokens", "100000000", "--format", "json"]
    default, train_only = run(*base), run(*base, "--split", "100,0,0")
    assert default.exit_code == train_only.exit_code == 0
    assert json.loads(default.output) != json.loads(train_only.output)


@pytest.mark.parametrize("args", [
    ["--framework", "neox", "--train-iters", "-3", "--seq-length", "2048", "--train-batch-size", "64", "--world-size", "8"],
    ["--framework", "megatron", "--train-tokens", "0", "--seq-length", "8", "--global-batch-size", "4", "--micro-batch-size", "1",
     "--world-size", "4", "--train-iters", "5"],
    ["--framework", "megatron", "--rampup-batch-size", "16", "0", "1000", "--megatron-version", "0.17.0", "--global-batch-size", "64",
     "--micro-batch-size", "1", "--world-size", "4", "--train-samples", "100000", "--seq-length", "8", "--train-tokens", "10000000"],
])
def test_impossible_pretraining_settings_are_one_line_errors(run_cli, args):
    code, _, err = run_cli("plan", *args)
    assert code == 2 and "internal error" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_deepspeed_config_with_a_word_for_a_batch_size_is_an_input_error(tmp_path):
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"train_batch_size": "lots", "train_micro_batch_size_per_gpu": 4}))
    result = run("--framework", "deepspeed", "--deepspeed-config", str(config), "--world-size", "4")
    assert result.exit_code == 2 and "train_batch_size is 'lots'" in result.output
    config.write_text("[1, 2]")
    result = run("--framework", "deepspeed", "--deepspeed-config", str(config), "--world-size", "4")
    assert result.exit_code == 2 and "must hold a mapping" in result.output


@pytest.mark.parametrize("split", ["0,0,0", "...", "a,b"])
def test_a_split_megatron_cannot_read_is_one_line_in_chinese_too(run_cli, split):
    args = ["plan", "--framework", "megatron", "--micro-batch-size", "1", "--train-iters", "100", "--train-tokens", "100000000",
            "--split", split, "--lang", "zh"]
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and err.startswith("错误：划分") and err.count("\n") == 1
