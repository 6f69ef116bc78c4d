"""OpenRLHF, EasyR1, TRL PPO/KTO, Unsloth: rules, the RL command line, and RL log lines."""

from __future__ import annotations

import json
import pathlib

import pytest

from trainsteps.configs.rl_launch import read_launch
from trainsteps.frameworks import openrlhf, unsloth
from trainsteps.frameworks.easyr1 import EasyR1Spec, plan_easyr1
from trainsteps.frameworks.openrlhf import OpenRLHFSpec, plan_openrlhf
from trainsteps.frameworks.trl_rl import PPOSpec, kto_rows, plan_trl_ppo
from trainsteps.logs.rl import RLObserved

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "rl"
TRL_CASES = [case for path in sorted(FIXTURES.glob("trl-*.json")) for case in json.loads(path.read_text())["cases"]]


@pytest.mark.parametrize("case", [c for c in TRL_CASES if "pairs" not in c["inputs"]], ids=lambda c: c["name"])
def test_trl_ppo_equals_a_real_ppo_trainer_run(case):
    args = case["inputs"]["args"]
    spec = PPOSpec(num_examples=case["inputs"]["rows"], per_device_train_batch_size=args["per_device_train_batch_size"],
                   gradient_accumulation_steps=args["gradient_accumulation_steps"], num_mini_batches=args["num_mini_batches"],
                   num_ppo_epochs=args["num_ppo_epochs"], num_train_epochs=args.get("num_train_epochs", 3.0),
                   total_episodes=args.get("total_episodes"))
    plan = plan_trl_ppo(spec)
    assert plan.run.training_steps == case["num_total_batches"] == case["max_steps"] == case["global_step"]
    assert plan.run.scheduler_steps == case["scheduler_steps"]
    assert plan.run.optimizer_steps == case["optimizer_steps"]


@pytest.mark.parametrize("case", [c for c in TRL_CASES if "pairs" in c["inputs"]], ids=lambda c: c["name"])
def test_kto_unpairs_like_trl(case):
    assert kto_rows(case["inputs"]["pairs"]) == case["rows"]


def test_trl_fixture_exists():
    assert TRL_CASES, "run tools/record_rl.py trl"


def test_openrlhf_scheduler_counts_updates_and_global_step_counts_rollout_batches():
    plan = plan_openrlhf(OpenRLHFSpec(prompts=10_000, train_batch_size=128, rollout_batch_size=1024, n_samples_per_prompt=8))
    assert plan.run.scheduler_steps == 10_000 * 8 // 128  # prepare_datasets' max_steps
    assert plan.run.training_steps == 10  # ceil(10000 / 1024): the partial last batch is a global step too
    assert plan.run.warmup_steps == 19  # ceil(625 x 0.03)
    assert "OPENRLHF_PARTIAL_BATCH" in [w.code for w in plan.warnings]


def test_openrlhf_reads_both_name_families(run_cli):
    old = "python -m openrlhf.cli.train_ppo_ray --train_batch_size 64 --rollout_batch_size 256 --n_samples_per_prompt 4"
    new = "python -m openrlhf.cli.train_ppo_ray --train.batch_size 64 --rollout.batch_size 256 --rollout.n_samples_per_prompt 4"
    assert read_launch(old).framework == read_launch(new).framework == "openrlhf"
    outs = []
    for line in (old, new):
        code, out, err = run_cli("plan", "--launch", line, "--num-examples", "1000", "--format", "json")
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["version"] == "0.9.10" and outs[1]["version"] == openrlhf.NEWEST
    assert outs[0]["run"]["scheduler_steps"] == outs[1]["run"]["scheduler_steps"] == 1000 * 4 // 64
    code, _, err = run_cli("plan", "--launch", old, "--num-examples", "1000", "--framework-version", "0.11.2")
    assert code == 2 and "--train.batch_size" in err


@pytest.mark.parametrize("version, dotted", [("0.10.0", False), ("0.10.1", False), ("0.10.2", True), ("0.10.4", True)])
def test_openrlhf_takes_the_underscored_names_until_0_10_1_and_the_dotted_ones_from_0_10_2(run_cli, version, dotted):
    # each wheel's openrlhf/cli/train_ppo_ray.py: 0.10.0 and 0.10.1 add "--train_batch_size", 0.10.2 "--train.batch_size"
    old = "python -m openrlhf.cli.train_ppo_ray --train_batch_size 64 --rollout_batch_size 256 --n_samples_per_prompt 4"
    new = "python -m openrlhf.cli.train_ppo_ray --train.batch_size 64 --rollout.batch_size 256 --rollout.n_samples_per_prompt 4"
    right, wrong = (new, old) if dotted else (old, new)
    code, out, err = run_cli("plan", "--launch", right, "--num-examples", "1000", "--framework-version", version, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run"]["scheduler_steps"] == 1000 * 4 // 64
    code, _, err = run_cli("plan", "--launch", wrong, "--num-examples", "1000", "--framework-version", version)
    assert code == 2 and ("--train.batch_size" if dotted else "--train_batch_size") in err and "0.10.2" in err


ORL_FLAT = "python -m openrlhf.cli.train_ppo_ray --train_batch_size 64 --rollout_batch_size 256 --n_samples_per_prompt 4"


@pytest.mark.parametrize("version, name", [("0.9.7", "generate_max_len"), ("0.9.8", "max_new_tokens"), ("0.10.1", "max_new_tokens")])
def test_openrlhf_reads_the_response_cap_by_the_name_its_release_takes(run_cli, version, name):
    # each wheel's cli/train_ppo_ray.py: "--generate_max_len" up to 0.9.7, "--max_new_tokens" from 0.9.8
    code, out, err = run_cli("plan", "--launch", f"{ORL_FLAT} --{name} 4096", "--num-examples", "1000",
                             "--framework-version", version, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["inputs"]["generate_max_len"] == 4096
    assert data["run"]["response_tokens_max"] == data["run"]["rollouts"] * 4096


@pytest.mark.parametrize("version, given, expected", [("0.9.7", "max_new_tokens", "generate_max_len"),
                                                      ("0.9.10", "generate_max_len", "max_new_tokens")])
def test_openrlhf_refuses_the_response_cap_by_another_releases_name(run_cli, version, given, expected):
    code, out, err = run_cli("plan", "--launch", f"{ORL_FLAT} --{given} 4096", "--num-examples", "1000", "--framework-version", version)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"--{given}" in err and f"--{expected}" in err and "0.9.8" in err


def test_easyr1_steps_and_updates():
    plan = plan_easyr1(EasyR1Spec(prompts=7500, rollout_batch_size=512, actor_global_batch_size=128, total_epochs=15))
    assert (plan.run.training_steps, plan.run.updates_per_step) == (14 * 15, 4)
    with pytest.raises(ValueError, match="divisible by actor global batch size"):
        plan_easyr1(EasyR1Spec(prompts=100, rollout_batch_size=100, actor_global_batch_size=64))


def test_unsloth_rewrites_only_unset_defaults():
    changed = {name: value for name, value, _ in unsloth.rewritten_defaults("2026.10.9", {"gradient_accumulation_steps"}, 5)}
    assert changed["per_device_train_batch_size"] == 4 and "gradient_accumulation_steps" not in changed
    assert changed["warmup_steps"] == 0.1 and "warmup_ratio" in dict((n, v) for n, v, _ in unsloth.rewritten_defaults("2026.10.9", set(), 4))
    assert unsloth.grpo_batch(3, 1, 1, 8) == 8 and unsloth.grpo_batch(4, 2, 1, 8) == 4


def test_verl_log_lines_in_verls_own_format():
    """The start-up lines and the console logger line come from verl 0.9.1's own code (tools/record_rl.py)."""
    fixture = json.loads((FIXTURES / "verl-0.9.1.json").read_text())
    case = next(c for c in fixture["cases"] if c["name"] == "gsm8k_quickstart")
    obs = RLObserved()
    for line in [*case["printed"], "(TaskRunner pid=1) " + case["console_line"]]:
        obs.feed(line)
    assert obs.framework() == "verl" and obs.total_training_steps == case["total_training_steps"]
    assert obs.loader_length == case["len_train_dataloader"] and obs.last_step == case["total_training_steps"]
    text = "\n".join(obs.explanation("en"))
    assert f"{case['total_training_steps']} = len(train_dataloader) {case['len_train_dataloader']} x total_epochs 15" in text
    assert "training/epoch is 0-based" in text and obs.explanation("zh") != obs.explanation("en")


def test_explain_reads_openrlhf_and_unsloth_lines(run_cli):
    text = "Episode [1/2]:  10%|#         | 1000/10000 [10:00<1:30:00]\n✨ Global step 3: {'policy_loss': 0.1}\n"
    code, out, err = run_cli("explain", "--text", text, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["framework"] == "openrlhf" and data["observed"]["openrlhf_step"] == 3
    notice = ("Unsloth: We now expect `per_device_train_batch_size` * `gradient_accumulation_steps` * `world_size` to be a "
              "multiple of `num_generations`.\nWe will change the batch size of 3 to the `num_generations` of 8")
    obs = RLObserved()
    for line in notice.splitlines():
        obs.feed(line)
    assert obs.unsloth_batch == (3, 8)


def test_rl_plan_errors_are_one_line(run_cli):
    code, _, err = run_cli("plan", "--launch", "python3 -m verl.trainer.main_ppo data.train_batch_size=$BS", "--num-examples", "10")
    assert code == 2 and "shell variable" in err and "Traceback" not in err
    code, _, err = run_cli("plan", "--framework", "verl", "--set", "data.train_batch_size=abc", "--num-examples", "10")
    assert code == 2 and "is not a int" in err
    code, _, err = run_cli("plan", "--framework", "verl", "--set", "data.train_files=/nonexistent.parquet")
    assert code == 2 and "does not exist" in err


def test_plan_verl_from_data_and_tokenizer_counts_the_filter(run_cli):
    pytest.importorskip("tokenizers")
    pytest.importorskip("jinja2")
    fixture = json.loads((FIXTURES / "verl-0.9.1.json").read_text())
    case = next(c for c in fixture["cases"] if c["name"] == "filter_overlong")
    args = [f"--set={k}={v}" for k, v in case["inputs"].items() if "." in k]
    code, out, err = run_cli("plan", "--framework", "verl", *args, "--gpus", "2", "--data", str(FIXTURES / "data" / "filter_overlong_train.parquet"),
                             "--tokenizer", str(pathlib.Path(__file__).parent / "assets" / "tiny_tokenizer.json"),
                             "--chat-template", str(FIXTURES / "data" / "tokenizer_config.json"), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["run"]["prompts"] == case["dataset_len"]
    assert data["printed"]["Total training steps"] == str(case["total_training_steps"])


ORL_CASES = [case for path in sorted(FIXTURES.glob("openrlhf-*.json")) for case in json.loads(path.read_text())["cases"]]


@pytest.mark.parametrize("case", ORL_CASES, ids=lambda c: c["name"])
def test_openrlhf_equals_its_own_data_preparation_and_batch_drawing(case):
    inputs = case["inputs"]
    spec = OpenRLHFSpec(prompts=inputs["prompts"], train_batch_size=inputs["train_batch_size"], rollout_batch_size=inputs["rollout_batch_size"],
                        n_samples_per_prompt=inputs["n"], num_episodes=inputs["num_episodes"], max_epochs=inputs["max_epochs"],
                        max_samples=inputs.get("max_samples", 100_000_000))
    plan = plan_openrlhf(spec)
    assert plan.run.prompts == case["prompts_dataset_len"]
    assert plan.run.scheduler_steps == case["max_steps"]
    assert plan.run.training_steps == case["global_steps"]


def test_plan_rl_python_entry_point_equals_the_command_line(run_cli):
    import trainsteps

    settings = {"data.train_batch_size": 16, "actor_rollout_ref.actor.ppo_mini_batch_size": 8, "actor_rollout_ref.rollout.n": 4,
                "trainer.total_epochs": 2, "data.filter_overlong_prompts": False}
    direct = trainsteps.plan_rl("verl", settings, num_examples=300, gpus=2).to_dict()
    code, out, err = run_cli("plan", "--framework", "verl", *[f"--set={k}={v}" for k, v in settings.items()], "--gpus", "2",
                             "--num-examples", "300", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run"] == direct["run"]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.=+~-$[]'\" 0123456789", max_size=40)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_WORD, max_size=12), prompts=st.integers(min_value=0, max_value=10**7))
def test_any_verl_line_is_a_plan_or_one_clear_error(words, prompts):
    """Hostile launch lines: a plan, or an InputError (exit 2) — never an internal error."""
    from trainsteps.configs.rl import verl_spec
    from trainsteps.errors import InputError
    from trainsteps.frameworks.verl import plan_verl

    line = "python3 -m verl.trainer.main_ppo " + " ".join(words)
    try:
        config = read_launch(line)
        plan = plan_verl(verl_spec(config, prompts, version="0.9.1", gpus=8))
    except InputError:
        return
    except ValueError as exc:  # verl's own refusals (the CLI turns them into one line)
        assert "verl" in str(exc) or "ppo_mini_batch_size" in str(exc)
        return
    assert plan.run.training_steps >= 0 and plan.run.scheduler_steps >= 0


@settings(max_examples=200, deadline=None)
@given(batches=st.integers(0, 60), pass_length=st.integers(0, 12), micro=st.integers(1, 16), ga=st.integers(1, 8))
def test_ppo_accumulation_never_exceeds_micro_batches(batches, pass_length, micro, ga):
    from trainsteps.frameworks.trl_rl import ppo_optimizer_steps

    updates = ppo_optimizer_steps(batches, pass_length, micro, ga)
    assert batches * micro // ga <= updates <= batches * micro


def test_verl_sft_trainer_steps_once_per_global_batch(run_cli):
    from trainsteps.frameworks.verl import VerlSFTSpec, plan_verl_sft

    plan = plan_verl_sft(VerlSFTSpec(rows=1003, train_batch_size=64, total_epochs=2, n_gpus=8, save_freq="after_each_epoch"))
    assert plan.run.steps_per_epoch == (1003 // 8) // (64 // 8)  # per-rank rows, then per-rank batches, both dropping the rest
    assert plan.run.optimizer_steps == plan.run.training_steps == 2 * plan.run.steps_per_epoch
    assert plan.run.save_steps == [plan.run.steps_per_epoch, 2 * plan.run.steps_per_epoch]
    code, out, err = run_cli("plan", "--launch", "torchrun -m verl.trainer.sft_trainer data.train_batch_size=64 trainer.total_epochs=2",
                             "--num-examples", "1003", "--gpus", "8", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run"]["training_steps"] == plan.run.training_steps


def test_set_is_refused_outside_rl_plans(run_cli):
    code, _, err = run_cli("plan", "--num-examples", "100", "--set", "data.train_batch_size=8")
    assert code == 2 and "--set" in err


@pytest.mark.parametrize("version, generate_batch, steps, drops", [
    ("0.6.0", None, 7, True), ("0.8.0", None, 7, True), ("0.9.0", 64, 15, True), ("0.9.10", None, 8, False), ("0.11.2", None, 8, False)])
def test_openrlhf_before_0_9_8_drops_the_last_partial_generation_batch(version, generate_batch, steps, drops):
    """1,000 prompts in batches of 128: whole batches with drop_last (read in 0.6.0-0.9.0) against the samples generator."""
    plan = plan_openrlhf(OpenRLHFSpec(prompts=1000, rollout_batch_size=128, train_batch_size=64, version=version,
                                      vllm_generate_batch_size=generate_batch))
    assert plan.run.training_steps == steps
    assert ("OPENRLHF_OLD_DROPS_LAST" in [w.code for w in plan.warnings]) is drops
    assert ("OPENRLHF_PARTIAL_BATCH" in [w.code for w in plan.warnings]) is not drops
