"""A preference trainer's plan is costed per example: LLaMA-Factory `stage: dpo|kto|rm` and TRL's DPO / KTO / ORPO
configs make the time model count the policy's rows and the reference forwards (timing.flops.PREFERENCE_TRAINERS),
and the Time section says so."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "examples" / "trl" / "data" / "pairs.jsonl"
MODEL = ["--params", "8e9", "--gpu", "h100-sxm", "--seq-length", "1024", "--mfu", "0.3"]
"""--params has no attention term and --mfu is fixed, so step times are in the ratio of the FLOPs per row token."""

LF_BASE = """do_train: true
finetuning_type: {method}
dataset: demo_alpaca
dataset_dir: {data}
template: llama3
cutoff_len: 1024
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
num_train_epochs: 1.0
"""


def step_seconds(run_cli, *args) -> tuple[float, dict]:
    code, out, err = run_cli("plan", *args, *MODEL, "--format", "json")
    assert code == 0, err
    time = json.loads(out)["time"]
    return time["step_seconds"]["expected"], time


def lf_config(tmp_path, name: str, method: str = "lora", **keys) -> Path:
    text = LF_BASE.format(method=method, data=ROOT / "examples" / "llamafactory" / "data")
    text += "".join(f"{key}: {value}\n" for key, value in keys.items())
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("keys, times, trainer", [
    ({"stage": "dpo"}, (2 * 4 + 2 * 2) / 4, "dpo"),                        # chosen + rejected trained, both scored by the reference
    ({"stage": "dpo", "pref_loss": "orpo"}, 2, "orpo"),                     # LLaMA-Factory: no reference model for orpo / simpo
    ({"stage": "dpo", "pref_loss": "simpo"}, 2, "simpo"),
    ({"stage": "kto"}, (4 + 3 * 2) / 4, "kto"),                             # one completion, its KL completion, two reference forwards
    ({"stage": "rm"}, 2, "reward"),
])
def test_a_llamafactory_preference_stage_costs_its_passes_over_the_same_rows_trained_once(run_cli, tmp_path, keys, times, trainer):
    sft, _ = step_seconds(run_cli, lf_config(tmp_path, "sft", stage="sft"))
    preference, time = step_seconds(run_cli, lf_config(tmp_path, "pref", **keys))
    assert preference / sft == pytest.approx(times, rel=1e-3)
    assert any(f"preference training ({trainer}, from LLaMA-Factory stage: {keys['stage']}" in note for note in time["notes"])


def test_a_trl_dpo_script_costs_a_pair_as_two_rows_trained_and_two_reference_forwards(run_cli, tmp_path):
    sft = tmp_path / "sft.py"
    sft.write_text("from trl import SFTConfig\nargs = SFTConfig(output_dir='o', per_device_train_batch_size=4, "
                   "gradient_accumulation_steps=2, num_train_epochs=1)\n")
    dpo = tmp_path / "dpo.py"
    dpo.write_text("from trl import DPOConfig\nargs = DPOConfig(output_dir='o', per_device_train_batch_size=4, "
                   "gradient_accumulation_steps=2, num_train_epochs=1, beta=0.1)\n")
    rows = ("--num-examples", "1000")
    one_row, _ = step_seconds(run_cli, sft, *rows)
    pair, time = step_seconds(run_cli, dpo, *rows)
    assert pair / one_row == pytest.approx((2 * 6 + 2 * 2) / 6, rel=1e-3)
    assert any("from TRL DPOConfig" in note for note in time["notes"])


def trl_yaml(tmp_path, **keys) -> Path:
    path = tmp_path / "dpo.yaml"
    path.write_text(f"dataset_name: {PAIRS}\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n"
                    "num_train_epochs: 1\nbeta: 0.1\n" + "".join(f"{k}: {v}\n" for k, v in keys.items()))
    return path


def test_a_trl_dpo_yaml_with_beta_is_planned_as_dpo_not_grpo(run_cli, tmp_path):
    code, out, err = run_cli("plan", trl_yaml(tmp_path, rpo_alpha=1.0), *MODEL, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert not any("grpo" in key for key in data["config"]["settings"])
    assert any("from TRL DPO (dpo.yaml:" in note for note in data["time"]["notes"])


def test_precomputed_reference_log_probs_move_the_reference_forwards_into_preparation(run_cli, tmp_path):
    live_step, live = step_seconds(run_cli, trl_yaml(tmp_path, rpo_alpha=1.0))
    pre_step, pre = step_seconds(run_cli, trl_yaml(tmp_path, rpo_alpha=1.0, precompute_ref_log_probs="true"))
    assert pre_step / live_step == pytest.approx(12 / 16, rel=1e-3)  # (2 x 6N) against (2 x 6N + 2 x 2N)
    moved = pre["parts"]["prepare"]["expected"] - live["parts"]["prepare"]["expected"]
    # one pass of the reference over the data, done once: the FLOPs the steps no longer do
    assert moved == pytest.approx(live["parts"]["train"]["expected"] - pre["parts"]["train"]["expected"], rel=1e-3)
    assert any("precompute_ref_log_probs" in note for note in pre["notes"])


def test_reference_free_dpo_costs_the_policy_alone(run_cli, tmp_path):
    with_reference, _ = step_seconds(run_cli, trl_yaml(tmp_path, rpo_alpha=1.0))
    free, time = step_seconds(run_cli, trl_yaml(tmp_path, reference_free="true"))
    assert free / with_reference == pytest.approx(12 / 16, rel=1e-3)
    assert any("dpo_reference_free" in note for note in time["notes"])


def test_the_preference_note_is_in_chinese_too(run_cli, tmp_path):
    code, out, err = run_cli("plan", lf_config(tmp_path, "pref", stage="dpo"), *MODEL, "--lang", "zh")
    assert code == 0, err
    assert "偏好训练（dpo" in out


def test_an_sft_config_gets_no_preference_note(run_cli, tmp_path):
    _, time = step_seconds(run_cli, lf_config(tmp_path, "sft", stage="sft"))
    assert not any("preference" in note for note in time["notes"])


def test_an_evaluation_of_a_dpo_plan_scores_both_rows_with_the_policy_and_the_reference(run_cli, tmp_path):
    evaluated = {"val_size": 0.1, "eval_strategy": "steps", "eval_steps": 5}
    _, sft = step_seconds(run_cli, lf_config(tmp_path, "sft", stage="sft", **evaluated))
    _, dpo = step_seconds(run_cli, lf_config(tmp_path, "pref", stage="dpo", **evaluated))
    assert sft["parts"]["eval"]["expected"] > 0
    # forward only: chosen and rejected through the policy and through the reference, against one row's forward
    assert dpo["parts"]["eval"]["expected"] / sft["parts"]["eval"]["expected"] == pytest.approx(4, rel=1e-3)


AXOLOTL_BASE = """base_model: NousResearch/Meta-Llama-3-8B
adapter: lora
datasets:
  - path: {data}
    type: chat_template
sequence_len: 1024
micro_batch_size: 2
gradient_accumulation_steps: 4
num_epochs: 1
"""
SWIFT_BASE = """model: Qwen/Qwen2.5-7B-Instruct
train_type: lora
dataset: {data}
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
num_train_epochs: 1
"""
CHAT = ROOT / "examples" / "llamafactory" / "data" / "demo_chat.jsonl"


def wrapper_config(tmp_path, base: str, name: str, suffix: str, **keys) -> Path:
    path = tmp_path / f"{name}{suffix}"
    path.write_text(base.format(data=CHAT) + "".join(f"{key}: {value}\n" for key, value in keys.items()))
    return path


@pytest.mark.parametrize("keys, times, said", [
    ({"rl": "dpo"}, (2 * 4 + 2 * 2) / 4, "Axolotl rl: dpo"),                 # DPOTrainer: the reference scores both rows
    ({"rl": "ipo"}, (2 * 4 + 2 * 2) / 4, "Axolotl rl: ipo"),                 # DPOTrainer with the IPO loss
    ({"rl": "dpo", "precompute_ref_log_probs": "true"}, 2, "precompute_ref_log_probs"),  # reference forwards moved out
    ({"rl": "kto"}, (4 + 3 * 2) / 4, "Axolotl rl: kto"),
    ({"rl": "orpo"}, 2, "Axolotl rl: orpo"),                                  # no reference model
    ({"rl": "simpo"}, 2, "Axolotl rl: simpo"),                                # CPOTrainer, simpo loss: no reference
])
def test_an_axolotl_rl_config_costs_its_trainers_passes(run_cli, tmp_path, keys, times, said):
    rows = ("--num-examples", "1000")
    sft, _ = step_seconds(run_cli, wrapper_config(tmp_path, AXOLOTL_BASE, "sft", ".yml"), *rows)
    preference, time = step_seconds(run_cli, wrapper_config(tmp_path, AXOLOTL_BASE, "rl", ".yml", **keys), *rows)
    assert preference / sft == pytest.approx(times, rel=1e-3)
    assert any(said in note for note in time["notes"] if note.startswith("preference training"))


@pytest.mark.parametrize("kind, times, trainer", [
    ("dpo", (2 * 4 + 2 * 2) / 4, "dpo"), ("kto", (4 + 3 * 2) / 4, "kto"), ("orpo", 2, "orpo"), ("simpo", 2, "simpo"),
    ("cpo", 2, "cpo"), ("rm", 2, "reward"),
])
def test_an_ms_swift_rlhf_type_costs_its_trainers_passes(run_cli, tmp_path, kind, times, trainer):
    rows = ("--num-examples", "1000")
    sft, _ = step_seconds(run_cli, wrapper_config(tmp_path, SWIFT_BASE, "sft", ".yaml"), *rows)
    preference, time = step_seconds(run_cli, wrapper_config(tmp_path, SWIFT_BASE, "rlhf", ".yaml", rlhf_type=kind), *rows)
    assert preference / sft == pytest.approx(times, rel=1e-3)
    assert any(f"preference training ({trainer}, from ms-swift rlhf_type: {kind}" in note for note in time["notes"])


def test_an_online_rl_kind_is_not_costed_as_preference_pairs(run_cli, tmp_path):
    _, time = step_seconds(run_cli, wrapper_config(tmp_path, SWIFT_BASE, "grpo", ".yaml", rlhf_type="grpo"),
                           "--num-examples", "1000")
    assert not any(note.startswith("preference training") for note in time["notes"])
