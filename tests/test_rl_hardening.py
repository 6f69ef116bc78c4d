"""RL plans on hostile input: one line and exit 2 (or a bounded plan), never an internal error, a hang or a blown heap."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainsteps
from trainsteps.errors import InputError


def _refused(run_cli, *args, says: str = "") -> str:
    code, out, err = run_cli("plan", *args)
    assert code == 2, (out, err)
    assert "Traceback" not in err and "internal error" not in err and len(err.strip().splitlines()) <= 2, err
    assert says in err, err
    return err


BOMB = ("a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)))


@pytest.mark.parametrize("framework", ["verl", "easyr1", "trl-ppo"])
@pytest.mark.parametrize("body, says", [
    ("per_device_train_batch_size: 16\n" + BOMB + "response_length: *a9\n", "200,000"),
    ("per_device_train_batch_size: 16\n" + BOMB, "200,000"),
    ("per_device_train_batch_size: 16\nstage: &a {b: *a}\n", ""),
    ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nest"),
], ids=["bomb_used", "bomb_unused", "recursive_alias", "deep"])
def test_an_rl_yaml_goes_through_the_guarded_config_reader(run_cli, tmp_path, framework, body, says):
    path = tmp_path / "run.yaml"
    path.write_text(body)
    started = time.perf_counter()
    _refused(run_cli, "--framework", framework, str(path), "--num-examples", "100", "--format", "json", says=says)
    assert time.perf_counter() - started < 5


def test_an_rl_yaml_that_is_not_utf8_is_one_line(run_cli, tmp_path):
    path = tmp_path / "ppo.yaml"
    path.write_bytes(b"per_device_train_batch_size: 16\n# caf\xe9\nnum_train_epochs: 1\n")
    _refused(run_cli, "--framework", "trl-ppo", str(path), "--num-examples", "100", says="ppo.yaml")


def test_the_line_of_a_nested_rl_key_is_still_named(run_cli, tmp_path):
    path = tmp_path / "grpo.yaml"
    path.write_text("data:\n  train_batch_size: abc\n")
    _refused(run_cli, "--framework", "verl", str(path), "--num-examples", "100", says="grpo.yaml:2")


@pytest.mark.parametrize("framework", ["verl", "openrlhf", "easyr1", "trl-ppo"])
@pytest.mark.parametrize("rows", ["-5", "0", "1e308", "1" + "0" * 40])
def test_rows_below_one_or_past_the_row_cap_are_refused(run_cli, framework, rows):
    _refused(run_cli, "--framework", framework, "--num-examples", rows, "--format", "json", says="num")


@pytest.mark.parametrize("framework, setting", [
    ("trl-ppo", "num_ppo_epochs=-2"), ("trl-ppo", "gradient_accumulation_steps=-1"), ("trl-ppo", "num_mini_batches=0"),
    ("trl-ppo", "per_device_train_batch_size=0"), ("trl-ppo", "num_train_epochs=-1"), ("trl-ppo", "total_episodes=9e19"),
    ("trl-ppo", "num_train_epochs=1e300"),
    ("easyr1", "worker.actor.global_batch_size=0"), ("easyr1", "data.rollout_batch_size=-3"), ("easyr1", "trainer.total_epochs=0"),
    ("easyr1", "worker.rollout.n=0"), ("easyr1", "trainer.max_steps=-1"),
    ("openrlhf", "train_batch_size=0"), ("openrlhf", "rollout_batch_size=-1"), ("openrlhf", "max_samples=0"),
    ("verl", "data.train_batch_size=" + "9" * 4301), ("verl", "trainer.total_epochs=" + "9" * 400),
    ("verl", "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio=1e400"),
])
def test_a_count_setting_below_one_or_absurdly_large_is_refused_by_name(run_cli, framework, setting):
    key = setting.split("=")[0].rsplit(".", 1)[-1]
    _refused(run_cli, "--framework", framework, "--num-examples", "1000", "--set", setting, says=key)


def test_an_openrlhf_release_older_than_the_rules_is_refused_cleanly(run_cli):
    _refused(run_cli, "--framework", "openrlhf", "--num-examples", "1000", "--framework-version", "0.3.0", says="0.3.0")
    _refused(run_cli, "--framework", "openrlhf", "--num-examples", "1000", "--framework-version", "x.y", says="x.y")


@pytest.mark.parametrize("version", ["0.2.0", "abc"])
def test_a_verl_release_older_than_the_rules_or_not_a_release_is_refused(run_cli, version):
    _refused(run_cli, "--framework", "verl", "--num-examples", "1000", "--framework-version", version, says=version)


def test_event_lists_are_bounded_like_the_trainer_path(run_cli):
    started = time.perf_counter()
    _refused(run_cli, "--framework", "verl", "--num-examples", "100", "--set", "data.train_batch_size=1", "--set",
             "trainer.total_epochs=1000000000", "--set", "trainer.save_freq=1", "--set", "trainer.test_freq=1",
             "--format", "json", says="trainer.test_freq = 1")
    assert time.perf_counter() - started < 5


def test_trl_ppo_of_a_billion_rows_is_planned_in_closed_form():
    from trainsteps.frameworks.trl_rl import PPOSpec, plan_trl_ppo

    started = time.perf_counter()
    plan = plan_trl_ppo(PPOSpec(num_examples=10**9, per_device_train_batch_size=1, gradient_accumulation_steps=3,
                                num_mini_batches=1, num_ppo_epochs=4, num_train_epochs=100, save_steps=0.1))
    assert time.perf_counter() - started < 0.5
    assert plan.run.training_steps == 100 * 10**9 // 3 + 1


def _per_batch(batches: int, pass_length: int, micro: int, ga: int) -> int:
    """accelerate's accumulation walked batch by batch (the rule as the recorded runs show it): the reference."""
    updates = counter = 0
    for batch in range(1, batches + 1):
        if pass_length and batch % pass_length == 0:
            updates, counter = updates + micro, 0
        else:
            updates += (counter + micro) // ga - counter // ga
            counter = (counter + micro) % ga
    return updates


@settings(max_examples=400, deadline=None)
@given(batches=st.integers(0, 200), pass_length=st.integers(0, 30), micro=st.integers(1, 20), ga=st.integers(1, 9))
def test_the_closed_form_of_ppo_accumulation_equals_the_batch_by_batch_walk(batches, pass_length, micro, ga):
    from trainsteps.frameworks.trl_rl import ppo_optimizer_steps

    assert ppo_optimizer_steps(batches, pass_length, micro, ga) == _per_batch(batches, pass_length, micro, ga)


@pytest.mark.parametrize("call", [
    lambda: trainsteps.plan_rl("verl", "x", num_examples=100),
    lambda: trainsteps.plan_rl("verl", ["data.train_batch_size"], num_examples=100),
    lambda: trainsteps.plan_rl("openrlhf", {}, num_examples=100, version="0.3.0"),
    lambda: trainsteps.plan_rl("verl", {}, num_examples=100, version="not-a-release"),
    lambda: trainsteps.plan_rl("verl", {"data.train_batch_size": 10**400}, num_examples=100),
    lambda: trainsteps.plan_rl("easyr1", {"data.rollout_batch_size": 10**400}, num_examples=100),
    lambda: trainsteps.plan_rl("trl-ppo", {"num_train_epochs": 10**400}, num_examples=100),
    lambda: trainsteps.plan_rl("openrlhf", {"train_batch_size": 10**400}, num_examples=100),
    lambda: trainsteps.plan_rl("trl-ppo", {"num_mini_batches": __import__("decimal").Decimal("NaN")}, num_examples=100),
    lambda: trainsteps.plan_rl("verl", {}, num_examples="many"),
    lambda: trainsteps.plan_rl("verl", {}, num_examples=100, gpus=0),
    lambda: trainsteps.plan_rl("verl", {}, num_examples=-1),
    lambda: trainsteps.plan_rl("nemo-rl", {}, num_examples=100),
    lambda: trainsteps.plan_rl("easyr1", {"worker.actor.global_batch_size": 0}, num_examples=100),
], ids=lambda _: "")
def test_the_python_plan_rl_refuses_bad_input_with_an_input_error(call):
    with pytest.raises(InputError):
        call()


_VALUES = st.one_of(st.integers(-10, 10**6), st.integers(10**12, 10**500), st.floats(allow_nan=True, allow_infinity=True),
                    st.booleans(), st.none(), st.text(max_size=8), st.lists(st.integers(), max_size=2))
_KEYS = {
    "verl": ["data.train_batch_size", "actor_rollout_ref.rollout.n", "actor_rollout_ref.actor.ppo_mini_batch_size",
             "trainer.total_epochs", "trainer.save_freq", "trainer.test_freq", "trainer.total_training_steps"],
    "easyr1": ["data.rollout_batch_size", "worker.actor.global_batch_size", "worker.rollout.n", "trainer.total_epochs",
               "trainer.max_steps", "trainer.save_freq"],
    "openrlhf": ["train_batch_size", "rollout_batch_size", "n_samples_per_prompt", "num_episodes", "max_samples", "save_steps"],
    "trl-ppo": ["per_device_train_batch_size", "gradient_accumulation_steps", "num_mini_batches", "num_ppo_epochs",
                "num_train_epochs", "total_episodes", "save_steps", "warmup_ratio"],
}


@settings(max_examples=300, deadline=None)
@given(data=st.data(), framework=st.sampled_from(sorted(_KEYS)), rows=st.one_of(st.integers(-5, 10**14), st.floats()))
def test_any_plan_rl_call_is_a_plan_or_an_input_error(data, framework, rows):
    chosen = data.draw(st.dictionaries(st.sampled_from(_KEYS[framework]), _VALUES, max_size=4))
    try:
        plan = trainsteps.plan_rl(framework, chosen, num_examples=rows)
    except InputError:
        return
    assert plan.run.training_steps >= 0 and plan.run.optimizer_steps >= 0
