"""verl's data defaults per release (recorded from each wheel's composed config) and the runs verl stops at start."""

from __future__ import annotations

import json
import pathlib

import pytest

from trainsteps.frameworks import verl

RECORDED = json.loads((pathlib.Path(__file__).parent / "fixtures" / "rl" / "defaults-verl.json").read_text())["releases"]


@pytest.mark.parametrize("release", sorted(RECORDED))
def test_the_long_prompt_defaults_are_those_main_ppo_composes(release):
    assert verl.FILTER_DEFAULT.at(release) is RECORDED[release]["filter_overlong_prompts"]
    assert verl.TRUNCATION_DEFAULT.at(release) == RECORDED[release]["truncation"]


def _codes(run_cli, *settings, version="0.9.1") -> list[str]:
    code, out, err = run_cli("plan", "--framework", "verl", "--framework-version", version, "--num-examples", "1000",
                             *[f"--set={s}" for s in settings], "--format", "json")
    assert code == 0, err
    return [w["code"] for w in json.loads(out)["warnings"]]


@pytest.mark.parametrize("version", ["0.6.1", "0.9.1"])
def test_by_default_a_long_prompt_stops_the_run_instead_of_being_filtered(run_cli, version):
    codes = _codes(run_cli, "data.train_batch_size=16", "actor_rollout_ref.actor.ppo_mini_batch_size=8", version=version)
    assert "VERL_LONG_PROMPT_STOPS" in codes and "VERL_FILTER_NOT_COUNTED" not in codes
    codes = _codes(run_cli, "data.train_batch_size=16", "actor_rollout_ref.actor.ppo_mini_batch_size=8",
                   "data.filter_overlong_prompts=True", version=version)
    assert "VERL_FILTER_NOT_COUNTED" in codes and "VERL_LONG_PROMPT_STOPS" not in codes
    assert "VERL_LONG_PROMPT_STOPS" not in _codes(run_cli, "data.train_batch_size=16", "actor_rollout_ref.actor.ppo_mini_batch_size=8",
                                                  "data.truncation=left", version=version)


@pytest.mark.parametrize("version, says", [("0.8.0", "Train dataloader is empty!"), ("0.9.1", "steps_per_epoch")])
def test_fewer_prompts_than_one_batch_is_refused_as_verl_stops(run_cli, version, says):
    code, _, err = run_cli("plan", "--framework", "verl", "--framework-version", version, "--num-examples", "100",
                           "--set", "data.train_batch_size=128", "--set", "actor_rollout_ref.actor.ppo_mini_batch_size=64")
    assert code == 2 and says in err, err


def test_a_mini_batch_the_data_parallel_ranks_do_not_divide_is_refused_from_the_engine_workers(run_cli):
    args = ("plan", "--framework", "verl", "--num-examples", "1000", "--gpus", "4", "--set", "data.train_batch_size=12",
            "--set", "actor_rollout_ref.actor.ppo_mini_batch_size=3", "--set", "actor_rollout_ref.rollout.n=2")
    code, _, err = run_cli(*args, "--framework-version", "0.9.1")
    assert code == 2 and "mini_batch_size=6" in err, err
    code, _, err = run_cli(*args, "--framework-version", "0.7.1")  # the FSDP workers floor it instead
    assert code == 0, err


def test_a_multi_turn_rollout_is_warned_as_planned_as_one_turn_with_its_turn_cap(run_cli):
    """The RL step model plans one turn (its per-turn cost is not fitted: docs/time.md, "The eighteenth RL held-out set,
    scored once"): a verl config that turns multi_turn on is told so, with its cap, rather than silently planned."""
    base = ("data.train_batch_size=16", "actor_rollout_ref.actor.ppo_mini_batch_size=8")
    assert "VERL_MULTI_TURN_AS_ONE_TURN" not in _codes(run_cli, *base)
    assert "VERL_MULTI_TURN_AS_ONE_TURN" not in _codes(run_cli, *base, "actor_rollout_ref.rollout.multi_turn.enable=False")
    code, out, _ = run_cli("plan", "--framework", "verl", "--num-examples", "1000", *[f"--set={s}" for s in base],
                           "--set=actor_rollout_ref.rollout.multi_turn.enable=True",
                           "--set=actor_rollout_ref.rollout.multi_turn.max_assistant_turns=5", "--format", "json")
    warning = next(w for w in json.loads(out)["warnings"] if w["code"] == "VERL_MULTI_TURN_AS_ONE_TURN")
    assert code == 0 and "max_assistant_turns: 5" in warning["message"] and "--step-time" in warning["message"]
    code, out, _ = run_cli("plan", "--framework", "verl", "--num-examples", "1000", *[f"--set={s}" for s in base],
                           "--set=actor_rollout_ref.rollout.multi_turn.enable=True", "--format", "json", "--lang", "zh")
    uncapped = next(w for w in json.loads(out)["warnings"] if w["code"] == "VERL_MULTI_TURN_AS_ONE_TURN")
    assert code == 0 and "max_assistant_turns：null" in uncapped["message"]
