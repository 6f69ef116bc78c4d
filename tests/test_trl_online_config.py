"""TRL's GRPO / RLOO configs as TRL's own `__post_init__` treats them, and preference configs that are not GRPO."""

from __future__ import annotations

import json
import pathlib

import pytest

from trainsteps.frameworks import trl

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "rl"
RECORDINGS = [json.loads(path.read_text()) for path in sorted(FIXTURES.glob("config-trl-*.json"))]
CASES = [(rec["release"], case) for rec in RECORDINGS for case in rec["cases"]]


def test_every_trl_config_recording_is_there():
    assert {rec["release"] for rec in RECORDINGS} >= {"0.19.1", "1.0.0", "1.16.0"}, "run tools/record_trl_config.py"


@pytest.mark.parametrize("release, case", CASES, ids=lambda c: c if isinstance(c, str) else "")
def test_the_generation_layout_is_what_trls_post_init_sets_or_refuses(release, case):
    i = case["inputs"]
    args = (case["trainer"], i["per_device_train_batch_size"], i["world_size"], i["gradient_accumulation_steps"],
            i["steps_per_generation"], i["generation_batch_size"], i["num_generations"])
    if "refused" in case:
        with pytest.raises(trl.RefusedConfig) as refused:
            trl.generation_layout(*args)
        if not release.startswith("0."):  # 0.19 words its refusals differently and checks num_generations < 2 first
            assert str(refused.value) == case["refused"]
    else:
        assert trl.generation_layout(*args) == (case["steps_per_generation"], case["generation_batch_size"])


@pytest.mark.parametrize("rec", [r for r in RECORDINGS if "rloo" in r["num_generations_default"]], ids=lambda r: r["release"])
def test_each_online_trainer_has_its_own_num_generations_default(rec):
    assert trl.NUM_GENERATIONS_DEFAULTS == rec["num_generations_default"]


def _plan(run_cli, path) -> dict:
    code, out, err = run_cli("plan", str(path), "--num-examples", "100", "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_beta_in_a_dpo_config_is_not_read_as_grpo(run_cli, tmp_path):
    dpo = tmp_path / "dpo.yaml"
    dpo.write_text("beta: 0.1\nper_device_train_batch_size: 4\nnum_train_epochs: 1\nmax_prompt_length: 128\n")
    plain = tmp_path / "plain.yaml"
    plain.write_text("per_device_train_batch_size: 4\nnum_train_epochs: 1\n")
    assert _plan(run_cli, dpo)["run"]["optimizer_steps"] == _plan(run_cli, plain)["run"]["optimizer_steps"]


def test_a_dpo_script_with_generation_keys_is_still_a_preference_run(run_cli, tmp_path):
    script = tmp_path / "train_dpo.py"
    script.write_text("from trl import DPOConfig\nargs = DPOConfig(output_dir='o', beta=0.1, use_vllm=False, per_device_train_batch_size=4,"
                      " num_train_epochs=1)\n")
    assert _plan(run_cli, script)["run"]["optimizer_steps"] == 25


def test_an_rloo_script_samples_its_own_default_of_two_completions(run_cli, tmp_path):
    script = tmp_path / "train_rloo.py"
    script.write_text("from trl import RLOOConfig\nargs = RLOOConfig(output_dir='o', per_device_train_batch_size=4, num_train_epochs=1)\n")
    grpo = tmp_path / "train_grpo.py"
    grpo.write_text("from trl import GRPOConfig\nargs = GRPOConfig(output_dir='o', per_device_train_batch_size=4, num_train_epochs=1,"
                    " num_generations=2)\n")
    assert _plan(run_cli, script)["run"]["optimizer_steps"] == _plan(run_cli, grpo)["run"]["optimizer_steps"]


@pytest.mark.parametrize("body, reason", [
    ("steps_per_generation: 2\ngeneration_batch_size: 8\n", "can not be both configured"),
    ("generation_batch_size: 6\n", "must be divisible by the global batch size"),
    ("num_generations: 1\n", "at least 2 generations"),
    ("num_generations: 3\n", "must be divisible by num_generations"),
])
def test_settings_trl_refuses_are_refused_with_trls_reason(run_cli, tmp_path, body, reason):
    config = tmp_path / "grpo.yaml"
    config.write_text("per_device_train_batch_size: 4\nnum_train_epochs: 1\n" + body)
    code, _, err = run_cli("plan", str(config), "--num-examples", "100")
    assert code == 2 and reason in err and "Traceback" not in err, err


def test_fewer_prompts_than_one_generation_chunk_says_so(run_cli, tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text("per_device_train_batch_size: 8\nnum_train_epochs: 1\nnum_generations: 8\n")
    code, _, err = run_cli("plan", str(config), "--num-examples", "3", "--gpus", "2", "--gradient-accumulation-steps", "4")
    assert code == 2 and "3 prompts make no full generation batch" in err and "chunks of 8 prompts" in err, err
