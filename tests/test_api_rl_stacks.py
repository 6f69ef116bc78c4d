"""`trainsteps.plan_rl` reaches every RL stack the command line plans, with the command line's numbers, and `solve
--time-budget` answers for each of them."""

import json

import pytest
import yaml

import trainsteps
from trainsteps.configs.files import read_toml
from trainsteps.planners.table import RL_STACKS

from .conftest import ROOT

EX = ROOT / "examples"


def dotted(tree: dict, prefix: str = "") -> dict:
    """A nested config as the stack's own dotted names (`train_dataset.batch_size`)."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            flat.update(dotted(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def launch_flags(name: str) -> dict:
    """The script's `--flag value` words of an example launch line, by the stack's own names (`rollout_batch_size`)."""
    import shlex

    words = shlex.split((EX / name).read_text().split("\n", 1)[1].replace("\\\n", " "))
    words = words[next(i for i, w in enumerate(words) if w.endswith(".py")) + 1:]
    flags, key = {}, None
    for word in words:
        if word.startswith("--"):
            key = word[2:].replace("-", "_")
            flags[key] = True
        elif key is not None:
            flags[key] = word if flags[key] is True else [*([flags[key]] if not isinstance(flags[key], list) else flags[key]), word]
    return flags


ASYNC_GRPO = {"per_device_train_batch_size": 16, "num_generations": 8, "max_staleness": 4, "num_train_epochs": 1}

# framework: (the command line's arguments, the API's settings, the API's keywords)
CASES = {
    "slime": (["--launch", (EX / "slime/qwen3_4b.sh").read_text().split("\n", 1)[1]], launch_flags("slime/qwen3_4b.sh"), {}),
    "areal": (["areal/gsm8k_grpo.yaml", "--num-examples", "7473"],
              dotted(yaml.safe_load((EX / "areal/gsm8k_grpo.yaml").read_text())), {"num_examples": 7473}),
    "open-instruct": (["--launch", (EX / "open_instruct/grpo_fast_7b.sh").read_text().split("\n", 1)[1]],
                      launch_flags("open_instruct/grpo_fast_7b.sh"), {}),
    "trl-async-grpo": ([*[f"--set={k}={v}" for k, v in ASYNC_GRPO.items()], "--num-examples", "7473", "--gpus", "4",
                        "--framework-version", "1.8.0"], ASYNC_GRPO, {"num_examples": 7473, "gpus": 4, "version": "1.8.0"}),
    "prime-rl": (["prime_rl/reverse_text.toml"], dotted(read_toml(str(EX / "prime_rl/reverse_text.toml"))), {}),
    "roll": (["roll/rlvr_config.yaml"], dotted(yaml.safe_load((EX / "roll/rlvr_config.yaml").read_text())), {}),
}


def cli_plan(run_cli, framework: str, args: list) -> dict:
    code, out, err = run_cli("plan", "--framework", framework, *args, "--format", "json", cwd=EX)
    assert code == 0, err
    return json.loads(out)


def test_every_rl_stack_has_a_case():
    assert set(CASES) == set(RL_STACKS)


@pytest.mark.parametrize("framework", list(CASES))
def test_plan_rl_gives_the_command_lines_plan_for_each_rl_stack(run_cli, framework):
    args, settings, keywords = CASES[framework]
    cli = cli_plan(run_cli, framework, args)
    api = trainsteps.plan_rl(framework, settings, **keywords).to_dict("en")
    assert cli["run"]["training_steps"] > 0
    assert api == {k: v for k, v in cli.items() if k != "config"}


def test_a_slime_setting_given_to_the_api_moves_the_plan():
    settings = launch_flags("slime/qwen3_4b.sh")
    assert trainsteps.plan_rl("slime", {**settings, "num_rollout": 100}).run.training_steps == 100


@pytest.mark.parametrize("framework", ["prime-rl", "roll"])
def test_a_prompt_count_for_a_stack_without_epochs_is_refused_in_one_line(framework):
    _, settings, _ = CASES[framework]
    with pytest.raises(trainsteps.InputError) as caught:
        trainsteps.plan_rl(framework, settings, num_examples=1000)
    line, hint = caught.value.render("en")
    assert "--num-examples" in line and framework in line and "\n" not in line


def test_a_release_for_a_stack_modelled_at_one_release_is_refused():
    with pytest.raises(trainsteps.InputError) as caught:
        trainsteps.plan_rl("slime", launch_flags("slime/qwen3_4b.sh"), version="0.1.0")
    assert "--framework-version" in caught.value.render("en")[0]


def test_an_unknown_rl_framework_names_every_rl_framework_in_its_hint():
    with pytest.raises(trainsteps.InputError) as caught:
        trainsteps.plan_rl("grpo-lab", {}, num_examples=10)
    hint = caught.value.render("en")[1]
    assert all(name in hint for name in ("verl", "trl-ppo", *RL_STACKS))


@pytest.mark.parametrize("framework", list(CASES))
def test_solve_with_a_time_budget_fits_steps_for_each_rl_stack(run_cli, framework):
    _, settings, keywords = CASES[framework]
    keywords = {k: v for k, v in keywords.items() if k != "version"}  # solve models the newest release
    planned = trainsteps.plan_rl(framework, settings, **keywords).run.training_steps
    words = [f"--set={k}={v}" for k, v in settings.items() if not isinstance(v, (list, dict))]
    words += [f"--{k.replace('_', '-')}={v}" for k, v in keywords.items()]
    budget = ["--step-time", "60", "--time-budget", "2h", "--format", "json"]
    code, out, err = run_cli("solve", "--framework", framework, *words, *budget, cwd=EX)
    assert code == 0, err
    solved, plan = json.loads(out), cli_plan(run_cli, framework, [*words, *budget])
    assert solved["run"]["training_steps"] == planned
    assert 0 < solved["time_budget"]["max_steps"] <= min(2 * 3600 // 60, planned)  # a 2h budget at 60 s a step
    assert solved["time_budget"] == plan["time_budget"]


def test_solve_for_an_rl_stack_without_a_budget_is_one_line_and_exit_2(run_cli):
    code, out, err = run_cli("solve", "--framework", "prime-rl", "--set=max_steps=20", "--step-time", "60")
    assert code == 2 and "--time-budget" in err and len(err.strip().splitlines()) <= 2


@pytest.mark.parametrize("command", ["plan", "solve"])
def test_the_help_of_plan_and_solve_lists_every_rl_framework(run_cli, command):
    from trainsteps.planners.table import RL_FRAMEWORKS

    code, out, _ = run_cli(command, "--help")
    choices = next(line for line in out.splitlines() if line.strip().startswith("--framework ["))
    assert code == 0 and set(choices.split("[", 1)[1].split("]")[0].split("|")) >= {*RL_FRAMEWORKS, *RL_STACKS}


def test_the_readme_names_every_rl_stack_in_its_rl_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    heading = next(line for line in readme.splitlines() if line.startswith("### slime"))
    names = {"slime": "slime", "areal": "AReaL", "open-instruct": "open-instruct", "trl-async-grpo": "TRL AsyncGRPO",
             "prime-rl": "prime-rl", "roll": "ROLL"}
    assert set(names) == set(RL_STACKS) and all(name in heading for name in names.values())


def test_plan_rl_refuses_a_time_option_and_names_the_function_that_takes_it():
    """plan_rl plans steps; hours come from api.estimate_time, which takes the same options as `trainsteps plan`."""
    from trainsteps import api

    settings = {"data.train_batch_size": 256, "actor_rollout_ref.rollout.n": 5, "actor_rollout_ref.actor.ppo_mini_batch_size": 64,
                "trainer.total_epochs": 15}
    with pytest.raises(trainsteps.InputError) as refused:
        trainsteps.plan_rl("verl", settings, num_examples=7473, step_time=60)
    text, hint = refused.value.render()
    assert "step_time" in text and "estimate_time(framework='verl'" in hint
    time = api.estimate_time(framework="verl", set=[f"{k}={v}" for k, v in settings.items()], num_examples=7473, step_time=60)
    steps = trainsteps.plan_rl("verl", settings, num_examples=7473).run.training_steps
    assert time["parts"]["train"]["expected"] == steps * 60
