"""The RL step-time model (timing/rl.py): its parts, the async overlap, measured step times, and plans."""

from __future__ import annotations

import pytest

from trainsteps.errors import InputError
from trainsteps.timing.estimate import Interval
from trainsteps.timing.flops import ModelShape
from trainsteps.timing.gpus import find_gpu
from trainsteps.timing.rl import RLStepSetup, rl_step_time, run_seconds, setup_from_plan

QWEN3_8B = ModelShape(8.2e9, 8.2e9, layers=36, attention_width=4096)


def _setup(**changes) -> RLStepSetup:
    values = {"shape": QWEN3_8B, "gpu": find_gpu("h100"), "gpus": 8, "prompts_per_step": 256, "samples_per_prompt": 5,
              "prompt_tokens": 155, "response_tokens": Interval.exact(4003), "response_cap": 4096, "rollout_tp": 4}
    return RLStepSetup(**{**values, **changes})


def test_a_synchronous_step_is_the_sum_of_its_parts():
    time = rl_step_time(_setup())
    assert set(time.parts) == {"generation", "old_log_prob", "reference", "actor_update", "weight_sync"}
    assert time.step.expected == pytest.approx(sum(part.expected for part in time.parts.values()))
    assert time.step.low < time.step.expected < time.step.high


def test_an_asynchronous_step_overlaps_generation_with_training():
    sync, overlap = rl_step_time(_setup()), rl_step_time(_setup(asynchronous=True))
    training = sum(p.expected for name, p in sync.parts.items() if name not in ("generation", "weight_sync"))
    assert overlap.step.expected == pytest.approx(max(sync.parts["generation"].expected, training) + sync.parts["weight_sync"].expected)
    assert overlap.step.expected < sync.step.expected


def test_a_critic_adds_a_values_forward_and_its_own_update():
    time = rl_step_time(_setup(critic=True))
    assert time.parts["critic_update"] == time.parts["actor_update"] and "critic_values" in time.parts


def test_generation_is_memory_bound_and_grows_with_the_response_length():
    short, long = rl_step_time(_setup(response_tokens=Interval.exact(500), response_cap=1024)), rl_step_time(_setup())
    assert long.parts["generation"].expected > 3 * short.parts["generation"].expected
    faster_memory = rl_step_time(_setup(gpu=find_gpu("h200")))  # same FLOP/s, 4.8 against 3.35 TB/s
    assert faster_memory.parts["generation"].expected < long.parts["generation"].expected
    assert faster_memory.parts["actor_update"] == long.parts["actor_update"]


def test_a_measured_step_time_gives_wall_equals_steps_times_step_time():
    assert run_seconds(435, Interval.exact(728.3)) == Interval.exact(435 * 728.3)


def test_a_verl_plan_fills_the_steps_rollouts_and_critic():
    import trainsteps

    plan = trainsteps.plan_rl("verl", {"data.train_batch_size": 256, "actor_rollout_ref.rollout.n": 5,
                                       "actor_rollout_ref.actor.ppo_mini_batch_size": 64, "algorithm.adv_estimator": "grpo",
                                       "data.max_response_length": 4096}, num_examples=7473)
    setup = setup_from_plan(plan, QWEN3_8B, find_gpu("h100"), 8, prompt_tokens=155, response_tokens=Interval.exact(4003), rollout_tp=4)
    assert (setup.prompts_per_step, setup.samples_per_prompt, setup.response_cap, setup.critic) == (256, 5, 4096, False)
    assert rl_step_time(setup).step == rl_step_time(_setup()).step


@pytest.mark.parametrize("changes", [{"rollout_tp": 3}, {"gpus": 0}, {"response_tokens": Interval.exact(0)}])
def test_a_step_that_cannot_be_modelled_is_refused(changes):
    with pytest.raises(InputError):
        rl_step_time(_setup(**changes))


def _verl_plan():
    import trainsteps

    return trainsteps.plan_rl("verl", {"data.train_batch_size": 256, "actor_rollout_ref.rollout.n": 5,
                                       "actor_rollout_ref.actor.ppo_mini_batch_size": 64, "trainer.total_epochs": 15}, num_examples=7473)


def test_a_measured_rl_run_is_steps_times_the_step_time_with_gpu_hours_and_cost():
    from trainsteps.timing.rl import rl_run_time

    plan = _verl_plan()
    time = rl_run_time(plan, measured_step_seconds=Interval.exact(728.3), gpus=8, price_per_gpu_hour=2.0)
    assert time.source == "measured" and time.wall_seconds == Interval.exact(plan.run.training_steps * 728.3)
    assert time.gpu_hours.expected == pytest.approx(plan.run.training_steps * 728.3 * 8 / 3600)
    assert time.cost.expected == pytest.approx(2 * time.gpu_hours.expected) and "parts" not in time.to_dict()


def test_a_modelled_rl_run_carries_its_parts_and_needs_a_rate_or_a_model():
    from trainsteps.timing.rl import rl_run_time

    plan = _verl_plan()
    setup = setup_from_plan(plan, QWEN3_8B, find_gpu("h100"), 8, prompt_tokens=155, response_tokens=Interval.exact(1000))
    time = rl_run_time(plan, setup=setup)
    assert time.source == "model" and set(time.to_dict()["parts"]) >= {"generation", "actor_update"}
    assert time.wall_seconds.expected == pytest.approx(plan.run.training_steps * time.step_seconds.expected)
    with pytest.raises(InputError):
        rl_run_time(plan)
