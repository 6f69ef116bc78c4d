"""Keys a framework does not have: a did-you-mean and the framework's own reaction, as a warning at the top."""

import json

import pytest

from tests.conftest import ROOT

LF_YAML = """stage: sft
do_train: true
finetuning_type: lora
template: qwen
dataset: demo_alpaca
dataset_dir: {data}
cutoff_len: 256
per_device_train_batch_size: 4
gradient_acumulation_steps: 4
num_train_epochs: 3
output_dir: out
"""


@pytest.fixture
def typo_yaml(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text(LF_YAML.format(data=ROOT / "examples" / "llamafactory" / "data"))
    return path


def test_a_typo_is_a_warning_at_the_top_with_a_did_you_mean(typo_yaml, run_cli):
    code, out, _ = run_cli("plan", typo_yaml)
    assert code == 0
    lines = out.splitlines()
    assert "the launch stops on unknown key gradient_acumulation_steps" in lines[0]
    warning = lines[2]
    assert warning.startswith("WARNING:") and "did you mean gradient_accumulation_steps?" in warning
    assert "LLaMA-Factory refuses unknown keys" in warning and "sft.yaml:9" in warning
    assert "ignored (unknown) keys" not in out  # not repeated as a line among the settings


def test_json_lists_unknown_keys(typo_yaml, run_cli):
    code, out, _ = run_cli("plan", typo_yaml, "--format", "json")
    unknown = json.loads(out)["config"]["unknown_keys"]
    assert unknown == [{"key": "gradient_acumulation_steps", "from": "sft.yaml:9", "did_you_mean": "gradient_accumulation_steps",
                        "launch_stops": True, "message": unknown[0]["message"]}]


def test_training_arguments_files_are_refused_by_hfargumentparser(tmp_path, run_cli):
    path = tmp_path / "args.yaml"
    path.write_text("per_device_train_batch_size: 4\nnum_train_epoch: 2\noutput_dir: out\n")
    code, out, _ = run_cli("plan", path, "--num-examples", "100", "--format", "json")
    unknown = json.loads(out)["config"]["unknown_keys"]
    assert unknown[0]["did_you_mean"] == "num_train_epochs" and unknown[0]["launch_stops"] is True
