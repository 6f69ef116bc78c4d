"""Reading the user's files: provenance, flags over files, conflicts, ignored keys, launch lines, checkpoints."""

import json
import shutil

import pytest

from trainsteps.configs import import_run
from trainsteps.configs.launch import parse_launch

from .conftest import ROOT

EX = ROOT / "examples"


def test_every_value_says_which_file_and_line_set_it():
    run = import_run([EX / "hf" / "training_args.yaml"], flags={"num_examples": 1000})
    assert run.settings.origin("per_device_train_batch_size") == "training_args.yaml:3"
    assert run.settings.origin("num_examples") == "--num-examples"
    assert run.spec.per_device_train_batch_size == 16


def test_a_flag_the_user_typed_overrides_the_file_and_is_reported(run_cli):
    code, out, _ = run_cli("plan", EX / "hf" / "training_args.yaml", "--num-examples", 1000, "--per-device-train-batch-size", 4,
                           "--transformers", "4.56.2", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert data["banner"]["Instantaneous batch size per device"] == "4"
    overridden = data["config"]["overridden_by_flags"]
    assert overridden == [{"key": "per_device_train_batch_size", "flag": "--per-device-train-batch-size", "file_value": 16, "file": "training_args.yaml:3"}]


def test_click_defaults_do_not_override_the_file(run_cli):
    code, out, _ = run_cli("plan", EX / "hf" / "training_args.yaml", "--num-examples", 1000, "--transformers", "4.56.2", "--format", "json")
    assert json.loads(out)["banner"]["Gradient Accumulation steps"] == "2"  # the file's value, not the option default 1


def test_a_number_in_the_deepspeed_file_that_disagrees_stops_the_plan_in_transformers_words(tmp_path):
    # HfTrainerDeepSpeedConfig.trainer_config_finalize raises on any explicit value that differs from TrainingArguments
    from trainsteps.frameworks.framework_error import FrameworkRuleError

    for name in ("training_args.yaml", "ds_zero2.json"):
        shutil.copy(EX / "hf" / name, tmp_path / name)
    ds = json.loads((tmp_path / "ds_zero2.json").read_text())
    ds["gradient_accumulation_steps"] = 4
    (tmp_path / "ds_zero2.json").write_text(json.dumps(ds))
    with pytest.raises(FrameworkRuleError) as caught:
        import_run([tmp_path / "training_args.yaml"], flags={"num_examples": 1000})
    assert "- ds gradient_accumulation_steps=4 vs hf gradient_accumulation_steps=2" in caught.value.framework_error
    assert caught.value.framework_error.startswith("Please correct the following DeepSpeed config values that mismatch")


def test_auto_values_in_the_deepspeed_file_are_not_conflicts(tmp_path):
    for name in ("training_args.yaml", "ds_zero2.json"):
        shutil.copy(EX / "hf" / name, tmp_path / name)
    ds = json.loads((tmp_path / "ds_zero2.json").read_text())
    ds["train_batch_size"] = "auto"
    (tmp_path / "ds_zero2.json").write_text(json.dumps(ds))
    run = import_run([tmp_path / "training_args.yaml"], flags={"num_examples": 1000})
    assert run.settings.conflicts == []


def test_unknown_keys_are_listed_as_ignored(tmp_path):
    cfg = tmp_path / "args.json"
    cfg.write_text(json.dumps({"per_device_train_batch_size": 4, "num_train_epochs": 2, "learning_rate": 1e-4, "gradient_acumulation_steps": 8}))
    run = import_run([cfg], flags={"num_examples": 100})
    assert [k for k, _ in run.settings.ignored] == ["gradient_acumulation_steps"]
    assert "learning_rate" in [k for k, _ in run.settings.unused]


@pytest.mark.parametrize("line, world", [
    ("torchrun --nproc_per_node 4 --nnodes 2 train.py", 8),
    ("torchrun --nproc-per-node=8 train.py", 8),
    ("accelerate launch --num_processes 16 --num_machines 2 train.py", 16),
    ("deepspeed --num_gpus 4 --num_nodes 2 train.py --deepspeed ds.json", 8),
    ("FORCE_TORCHRUN=1 NNODES=2 NPROC_PER_NODE=4 llamafactory-cli train cfg.yaml", 8),
    ("CUDA_VISIBLE_DEVICES=0,1,2 llamafactory-cli train cfg.yaml", 3),
    ("python train.py", 1),
])
def test_the_process_count_of_a_launch_line(line, world):
    assert parse_launch(line).world_size == world


def test_a_launch_count_that_is_not_a_number(run_cli):
    code, _, err = run_cli("plan", EX / "hf" / "training_args.yaml", "--launch", "torchrun --nproc_per_node gpu train.py", "--num-examples", 10)
    assert code == 2 and "--gpus N" in err


def test_an_accelerate_config_gives_the_world_size():
    run = import_run([EX / "axolotl" / "lora_chat.yml", EX / "axolotl" / "accelerate_2gpu.yaml"])
    assert run.spec.world_size == 2
    assert run.settings.origin("world_size") == "accelerate_2gpu.yaml:5"


def test_a_checkpoint_state_resumes_and_is_checked_against_the_plan(run_cli, tmp_path):
    state = json.loads((EX / "hf" / "trainer_state.json").read_text())
    state["max_steps"] = 999
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    code, out, _ = run_cli("plan", EX / "hf" / "training_args.yaml", tmp_path / "trainer_state.json", "--num-examples", 26280, "--gpus", 4,
                           "--transformers", "4.56.2", "--format", "json")
    data = json.loads(out)
    assert data["inputs"]["resume_from_step"] == state["global_step"]
    assert data["config"]["trainer_state_mismatch"]["state_max_steps"] == 999


def test_the_example_checkpoint_agrees_with_its_config(run_cli):
    code, out, _ = run_cli("plan", EX / "hf" / "training_args.yaml", EX / "hf" / "trainer_state.json", "--num-examples", 26280, "--gpus", 4,
                           "--transformers", "4.56.2", "--format", "json")
    assert json.loads(out)["config"]["trainer_state_mismatch"] is None


def test_a_swift_command_line_is_read_as_the_config():
    run = import_run([], launch="NPROC_PER_NODE=2 swift sft --model m --dataset d.jsonl --per_device_train_batch_size 4 --max_epochs 1",
                     flags={"num_examples": 1001})
    assert run.framework == "swift"
    assert run.spec.world_size == 2 and run.spec.per_device_train_batch_size == 4
    assert run.spec.gradient_accumulation_steps == 2  # ms-swift's default: ceil(16 / 4 / 2)
    assert run.spec.num_examples == 1000 and run.banner_num_examples == 1001


@pytest.mark.parametrize("dump", sorted((ROOT / "tests" / "fixtures" / "wrappers" / "training_args").glob("*.json")), ids=lambda p: p.stem)
def test_a_training_args_json_written_by_transformers_is_read_without_conflicts(dump):
    """Files written by `TrainingArguments.to_json_string()` (tools/record_wrappers.py training-args)."""
    version = dump.stem.removeprefix("training_args_")
    run = import_run([dump], flags={"num_examples": 1000, "transformers": version})
    assert run.settings.conflicts == [] and run.settings.ignored == []
    assert (run.spec.per_device_train_batch_size, run.spec.gradient_accumulation_steps, run.spec.num_train_epochs) == (4, 2, 2)
    assert run.spec.logging_steps == 10
