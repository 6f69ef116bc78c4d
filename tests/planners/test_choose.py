"""Which planner a request reaches: `--framework`, an RL launch line, an RL trainer's own YAML, or the Trainer."""

import json
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("config, framework", [
    ("verl/dapo.yaml", "verl"),
    ("easyr1/config.yaml", "easyr1"),
    ("trl/ppo.yaml", "trl-ppo"),
])
def test_an_rl_trainers_yaml_is_planned_by_its_trainer_without_framework(run_cli, config, framework):
    code, out, err = run_cli("plan", EXAMPLES / config, "--num-examples", "7500", "--format", "json")
    assert code == 0, err
    with_flag = run_cli("plan", "--framework", framework, EXAMPLES / config, "--num-examples", "7500", "--format", "json")[1]
    assert json.loads(out)["framework"] == framework and json.loads(out) == json.loads(with_flag)


def test_a_wrappers_yaml_stays_with_the_trainer_planner(run_cli):
    code, out, _ = run_cli("plan", EXAMPLES / "llamafactory" / "sft_lora.yaml", "--format", "json")
    assert code == 0 and json.loads(out)["framework"] == "hf"


def test_a_setting_never_moves_the_release_a_config_is_planned_on(run_cli):
    plain = json.loads(run_cli("plan", EXAMPLES / "llamafactory" / "sft_lora.yaml", "--format", "json")[1])
    more = json.loads(run_cli("plan", EXAMPLES / "llamafactory" / "sft_lora.yaml", "--num-examples", "5000", "--format", "json")[1])
    assert plain["version"] == more["version"] == "5.6.0"
