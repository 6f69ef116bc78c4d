"""Every planner of planners/table.py in the page: the pickers offer each one (built from the table through /api/meta,
so a planner added there needs no page edit), each shows the fields the planner takes and only those, and every
planner whose answer has steps has its time fields and Time cards, with the hours the CLI says for the same settings."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.browser.conftest import shot
from tests.browser.test_web_browser import figure, flags, run_cli, wait_for_text
from trainsteps.planners.table import FRAMEWORKS, PLANNERS, PRETRAIN_FRAMEWORKS, STACK_FRAMEWORKS, TIME

VERL = ("python3 -m verl.trainer.main_ppo data.train_files=train.parquet data.train_batch_size=256 actor_rollout_ref.rollout.n=5 "
        "actor_rollout_ref.actor.ppo_mini_batch_size=64 trainer.n_gpus_per_node=8 trainer.nnodes=1 trainer.total_epochs=3 trainer.save_freq=20")


def options(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(f"{selector} option", "nodes => nodes.map(n => n.value)")


def offered(page, name: str) -> bool:
    """The field is in the form for the chosen framework (its group may be folded)."""
    return page.eval_on_selector(f"#f-{name}", "n => !n.hidden && !(n.closest('[data-group]') || {}).hidden")


def test_the_pickers_offer_every_planner_of_the_table(page, base_url):
    page.goto(base_url + "/")
    page.wait_for_selector("#cli-text")
    assert set(FRAMEWORKS) <= set(options(page, "#wrapper"))
    page.select_option("#wrapper", "torchtitan")  # a stack planned from flags opens in the Pretraining tab, chosen
    page.click("#open-example")
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === 'pretrain'")
    assert page.input_value("#f-framework") == "torchtitan"
    rl_by_launch = [p.name for p in PLANNERS.values() if "launch" in p.accepts and p.name not in ("config", "llamafactory-v1")]
    page.goto(base_url + "/")
    page.select_option("#wrapper", rl_by_launch[-1])  # an RL trainer (the newest in the table) opens the config tab, chosen
    page.click("#open-example")
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === 'config'")
    assert page.input_value("#f-framework") == rl_by_launch[-1]
    page.click("#tab-pretrain")
    page.wait_for_selector("#f-framework")
    assert options(page, "#f-framework") == [*PRETRAIN_FRAMEWORKS, *STACK_FRAMEWORKS]
    page.click("#tab-config")
    page.wait_for_selector("#f-framework")
    reads_files = [p.name for p in PLANNERS.values() if p.accepts & {"configs", "deepspeed_config"} and p.name != "config"]
    assert options(page, "#f-framework") == ["", *reads_files]


def test_a_pretraining_field_is_shown_for_the_planners_that_take_it_only(page, base_url):
    page.goto(f"{base_url}/?tab=pretrain")
    page.wait_for_selector("#cli-text")
    for framework in (*PRETRAIN_FRAMEWORKS, *STACK_FRAMEWORKS):
        page.select_option("#f-framework", framework)
        takes = PLANNERS[framework].accepts
        for name, option in (("train_epochs", "train_epochs"), ("step_time", "step_time"), ("gpu", "gpu_name"), ("set", "rl_overrides"),
                             ("global_batch_size", "global_batch_size"), ("warmup_steps", "warmup_steps")):
            assert offered(page, name) == (option in takes), (framework, name)
    page.select_option("#f-framework", "deepspeed")  # its batch triple has no steps: no time groups at all
    assert page.eval_on_selector("details[data-group*=step_time]", "n => n.hidden")


PT_TIME_CASES = {
    "megatron": dict(framework="megatron", train_tokens=32017905665, seq_length=2048, global_batch_size=1024, micro_batch_size=4,
                     world_size=64, train_iters=15000, params="7B", gpu="h100-sxm", price_per_gpu_hour=2.5),
    "neox": dict(framework="neox", train_tokens=3000000000, seq_length=2048, train_batch_size=128, micro_batch_size=4, world_size=32,
                 train_iters=2000, step_time="6s"),
    "lightning": dict(framework="lightning", num_examples=100000, per_device_train_batch_size=8, gradient_accumulation_steps=4,
                      max_epochs=3, world_size=2, step_time="0.5s"),
    "torchtitan": dict(framework="torchtitan", global_batch_size=64, micro_batch_size=8, seq_length=4096, max_steps=3000,
                       world_size=8, tokens_per_second="3500/gpu"),
    "automodel": dict(framework="automodel", num_examples=50000, global_batch_size=32, micro_batch_size=4, num_train_epochs=2,
                      world_size=8, step_time="3s", save_interval=100, save_time="40s"),
    "llamafactory-v1": dict(framework="llamafactory-v1", num_examples=20000, global_batch_size=64, micro_batch_size=2,
                            num_train_epochs=3, world_size=8, step_time="5s", prepare_time="10m"),
}


@pytest.mark.parametrize("name", PT_TIME_CASES)
def test_every_pretraining_planner_says_the_clis_hours(page, base_url, name):
    from trainsteps.timing.durations import format_duration

    settings = PT_TIME_CASES[name]
    assert TIME & PLANNERS[settings["framework"]].accepts
    cli = {("gpu" if k == "gpu" else k): v for k, v in settings.items()}
    data, text = run_cli("plan", *flags(cli))
    page.goto(f"{base_url}/?{urlencode({'tab': 'pretrain', **settings})}")
    wait_for_text(page, text)
    assert figure(page, "f_wall") == format_duration(data["time"]["wall_seconds"]["expected"])
    if "price_per_gpu_hour" in settings:
        assert page.locator('[data-figure="f_cost"]').is_visible()
    shot(page, f"pretrain-time-{name}-1280")


def test_an_rl_plan_has_its_time_fields_and_says_the_clis_hours(page, base_url):
    from trainsteps.timing.durations import format_duration

    data, text = run_cli("plan", "--framework", "verl", "--launch", VERL, "--num-examples", "7473", "--step-time", "45s",
                         "--save-time", "2m")
    page.goto(f"{base_url}/?{urlencode({'tab': 'config', 'framework': 'verl', 'launch': VERL, 'num_examples': 7473})}")
    page.wait_for_selector("#f-step_time", state="attached")
    for name, option in (("step_time", "step_time"), ("params", "params"), ("gpu", "gpu_name"), ("eval_examples", "eval_examples")):
        assert offered(page, name) == (option in PLANNERS["verl"].accepts), name  # the RL time settings verl's planner takes
    page.click("details[data-group*=step_time] summary")
    page.fill("#f-step_time", "45s")
    page.click("details[data-group*=save_time] summary")
    page.fill("#f-save_time", "2m")
    page.click("#run")
    wait_for_text(page, text)
    assert figure(page, "f_wall") == format_duration(data["time"]["wall_seconds"]["expected"])
    shot(page, "config-rl-verl-time-1280")
