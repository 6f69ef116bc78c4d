"""A TRL YAML with `beta` and nothing else of a trainer's own is TRL's `trl dpo --config` example: it is costed as
DPO, and says so."""

import json

DPO_DOCS_EXAMPLE = """\
model_name_or_path: Qwen/Qwen2-0.5B-Instruct
dataset_name: trl-lib/ultrafeedback_binarized
learning_rate: 5.0e-7
beta: 0.1
num_train_epochs: 1
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
max_length: 1024
output_dir: Qwen2-0.5B-DPO
"""
"""The settings of TRL's DPO documentation example (`trl dpo --config`), beta included."""

TIME = ("--num-examples", 62135, "--gpus", 8, "--gpu", "a100", "--params", "5e8", "--seq-length", 1024, "--format", "json")


def _plan(run_cli, path, *extra):
    code, out, err = run_cli("plan", path, *TIME, *extra)
    assert code == 0, err
    return json.loads(out)


def _wall(data):
    return data["time"]["wall_seconds"]["expected"]


def test_a_yaml_with_beta_is_costed_as_dpo_as_its_launch_line_would_say(run_cli, tmp_path):
    path = tmp_path / "dpo.yaml"
    path.write_text(DPO_DOCS_EXAMPLE)
    alone = _plan(run_cli, path)
    launched = _plan(run_cli, path, "--launch", f"trl dpo --config {path}")
    assert _wall(alone) == _wall(launched)
    assert alone["run"]["optimizer_steps"] == launched["run"]["optimizer_steps"] == 486
    assert "TRL_BETA_AS_DPO" in [n["code"] for n in alone["config"]["notes"]]


def test_a_launch_line_naming_another_trainer_keeps_its_trainer_and_says_nothing_of_dpo(run_cli, tmp_path):
    path = tmp_path / "orpo.yaml"
    path.write_text(DPO_DOCS_EXAMPLE)
    orpo = _plan(run_cli, path, "--launch", f"trl orpo --config {path}")
    dpo = _plan(run_cli, path, "--launch", f"trl dpo --config {path}")
    assert _wall(orpo) < _wall(dpo)  # ORPO has no reference model
    assert "TRL_BETA_AS_DPO" not in [n["code"] for n in orpo["config"]["notes"]]
