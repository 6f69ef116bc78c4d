"""slime, AReaL and open-instruct GRPO: the planners against their own code, run by tools/record_rl_stacks.py at two
commits each (fixtures in tests/fixtures/rl_stacks/), and the command line around them."""

import json

import pytest

from trainsteps.frameworks.areal import ArealSpec, plan_areal
from trainsteps.frameworks.open_instruct import OpenInstructSpec, plan_open_instruct, updates_per_pass
from trainsteps.frameworks.slime import SlimeSpec, plan_slime

from .conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "rl_stacks"
EX = ROOT / "examples"


def cases(name: str):
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    return [pytest.param(commit, case, id=f"{commit[:7]}-{label}") for commit, found in data["commits"].items()
            for label, case in found.items()]


@pytest.mark.parametrize(("commit", "case"), cases("slime"))
def test_slime_plan_equals_what_slimes_own_loop_and_scheduler_lines_did(commit, case):
    recorded = case["recorded"]
    plan = plan_slime(SlimeSpec(prompts=case["prompts"], **case["settings"]))
    assert plan.run.training_steps == recorded["rollouts_trained"]
    assert plan.inputs["global_batch_size"] == recorded["global_batch_size"]
    assert plan.run.updates_per_step == recorded["optimizer_steps_per_rollout"]
    assert plan.derivation["train_iters"].value == recorded["train_iters"]
    assert plan.run.scheduler_steps == recorded["lr_decay_iters"]
    assert plan.run.test_steps == recorded["eval_after_steps"]
    assert plan.run.save_steps == recorded["save_after_steps"]


@pytest.mark.parametrize(("commit", "case"), cases("areal"))
def test_areal_plan_equals_what_areals_loader_finetunespec_and_frequency_controls_did(commit, case):
    s, recorded = case["settings"], case["recorded"]
    spec = ArealSpec(prompts=s["prompts"], batch_size=s["batch_size"], dp=s["dp"], total_train_epochs=s["epochs"],
                     drop_last=s.get("drop_last", True), total_train_steps=s.get("total_train_steps"),
                     save_freq_steps=s.get("save_freq_steps"), save_freq_epochs=s.get("save_freq_epochs"),
                     eval_freq_steps=s.get("eval_freq_steps"), eval_freq_epochs=s.get("eval_freq_epochs"),
                     eval_before_train=s.get("eval_before_train", False))
    plan = plan_areal(spec)
    assert plan.run.steps_per_epoch == recorded["loader_length_per_rank"][0] == recorded["steps_per_epoch"]
    assert plan.run.scheduler_steps == recorded["total_train_steps"]
    assert plan.run.training_steps == min(recorded["total_train_steps"], s.get("total_train_steps") or recorded["total_train_steps"])
    assert plan.run.save_steps == recorded["save_steps"]
    assert plan.run.test_steps == recorded["eval_steps"]


@pytest.mark.parametrize(("commit", "case"), cases("open_instruct"))
def test_open_instruct_plan_equals_what_grpo_fasts_own_lines_did(commit, case):
    s, recorded = case["settings"], case["recorded"]
    older = commit.startswith("8dfe8f2")  # --warm_up_steps exists only there
    spec = OpenInstructSpec(num_unique_prompts_rollout=s["prompts_per_step"], num_samples_per_prompt_rollout=s["n"],
                            total_episodes=s["total_episodes"], num_mini_batches=s.get("num_mini_batches", 1),
                            num_epochs=s.get("num_epochs", 1), warmup_ratio=s.get("warmup_ratio", 0.0),
                            warm_up_steps=s.get("warm_up_steps") if older else None, local_eval_every=s["local_eval_every"],
                            save_freq=s["save_freq"], eval_on_step_0=s.get("eval_on_step_0", False))
    plan = plan_open_instruct(spec)
    assert plan.run.training_steps == recorded["num_training_steps"]
    assert plan.run.scheduler_steps == recorded["num_scheduler_steps"]
    assert plan.run.warmup_steps == recorded["warmup_steps"]
    assert plan.run.test_steps == recorded["eval_steps"]
    assert plan.run.save_steps[:-1] == [s for s in recorded["periodic_save_steps"] if s != recorded["num_training_steps"]]
    assert plan.run.save_steps[-1] == recorded["num_training_steps"]  # save_final_model
    for sequences, updates in recorded["updates_per_pass"].items():
        assert updates_per_pass(int(sequences), spec.num_mini_batches) == updates


def test_a_slime_run_whose_rollout_does_not_divide_into_optimizer_steps_warns_that_its_lr_schedule_never_ends():
    plan = plan_slime(SlimeSpec(rollout_batch_size=16, n_samples_per_prompt=6, global_batch_size=40, num_rollout=9))
    codes = {trap.code for trap in plan.warnings}
    assert {"SLIME_TRAILING_SAMPLES", "SLIME_LR_NOT_FINISHED"} <= codes
    assert plan.run.scheduler_steps_taken == 18 < plan.run.scheduler_steps == 21


def test_an_areal_benchmark_cap_stops_the_loop_but_not_the_lr_horizon():
    plan = plan_areal(ArealSpec(prompts=5000, batch_size=64, dp=2, total_train_epochs=4, total_train_steps=100))
    assert (plan.run.training_steps, plan.run.scheduler_steps) == (100, 312)
    assert "AREAL_BENCHMARK_CAP" in {trap.code for trap in plan.warnings}


@pytest.mark.parametrize(("spec", "words"), [
    (SlimeSpec(rollout_batch_size=8, global_batch_size=16, num_steps_per_rollout=2, num_rollout=3), "global_batch_size 16 is not equal"),
    (SlimeSpec(rollout_batch_size=8, global_batch_size=16), "please set --num-rollout or --num-epoch"),
    (SlimeSpec(rollout_batch_size=8, n_samples_per_prompt=2, global_batch_size=32, num_rollout=3), "num_rollouts (16) >= global_batch_size"),
])
def test_settings_slime_refuses_are_refused_with_its_reason(spec, words):
    with pytest.raises(ValueError, match=__import__("re").escape(words)):
        plan_slime(spec)


def test_areal_refuses_a_batch_that_its_ranks_cannot_share():
    with pytest.raises(ValueError, match=r"batch size\(10\) must be divisible by world_size\(4\)"):
        plan_areal(ArealSpec(prompts=100, batch_size=10, dp=4))


def test_open_instruct_refuses_a_training_set_smaller_than_its_async_prefill():
    with pytest.raises(ValueError, match="Train dataset is too small! Is 100 prompts, but 128 are needed"):
        plan_open_instruct(OpenInstructSpec(prompts=100, async_steps=8))


def test_each_plan_carries_its_rollout_shape_under_the_step_models_names():
    from trainsteps.frameworks.rollout_shape import FIELDS

    plans = [plan_slime(SlimeSpec(rollout_batch_size=32, n_samples_per_prompt=8, global_batch_size=256, num_rollout=10,
                                  rollout_max_response_len=8192, rollout_gpus=4, actor_gpus=4, asynchronous=True)),
             plan_areal(ArealSpec(prompts=7473, batch_size=256, dp=4, n_samples=4, rollout_gpus=4, max_head_offpolicyness=2)),
             plan_open_instruct(OpenInstructSpec(num_unique_prompts_rollout=48, num_samples_per_prompt_rollout=16, learners=4,
                                                 vllm_num_engines=12))]
    for plan in plans:
        shape = plan.inputs["rollout_shape"]
        assert set(shape) <= set(FIELDS)
        assert shape["training_steps"] == plan.run.training_steps
        assert shape["prompts_per_step"] * shape["samples_per_prompt"] == plan.run.rollouts_per_step
        assert shape["asynchronous"] is True
        assert shape["rollout_gpus"] in (4, 12)


def plan_json(run_cli, *args):
    code, out, err = run_cli("plan", *args, "--format", "json", cwd=EX)
    assert code == 0, err
    return json.loads(out)


def launch(name: str) -> str:
    return (EX / name).read_text().split("\n", 1)[1]


def test_the_slime_example_launch_line_is_planned_as_slime_without_framework(run_cli):
    data = plan_json(run_cli, "--launch", launch("slime/qwen3_4b.sh"))
    assert data["framework"] == "slime"
    assert (data["run"]["training_steps"], data["run"]["updates_per_step"], data["inputs"]["global_batch_size"]) == (3000, 1, 256)
    assert data["run"]["test_steps"][:2] == [0, 20] and data["run"]["save_steps"][-1] == 3000


def test_the_areal_example_yaml_is_planned_as_areal_without_framework(run_cli):
    data = plan_json(run_cli, "areal/gsm8k_grpo.yaml", "--num-examples", "7473")
    assert data["framework"] == "areal"
    assert (data["run"]["training_steps"], data["run"]["steps_per_epoch"], data["run"]["updates_per_step"]) == (290, 29, 1)
    assert data["inputs"]["rollout_shape"]["rollout_gpus"] == 4 and data["inputs"]["dp"] == 4


def test_the_open_instruct_example_launch_line_is_planned_as_open_instruct(run_cli):
    data = plan_json(run_cli, "--launch", launch("open_instruct/grpo_fast_7b.sh"))
    assert data["framework"] == "open-instruct"
    assert data["run"]["training_steps"] == 5000000 // (48 * 16)
    assert data["inputs"]["world_size"] == 16  # 4 learners + 12 vLLM engines


def test_a_measured_step_time_makes_wall_steps_times_step_time_for_every_new_stack(run_cli):
    for args in (["--launch", launch("slime/qwen3_4b.sh")], ["areal/gsm8k_grpo.yaml", "--num-examples", "7473"],
                 ["--launch", launch("open_instruct/grpo_fast_7b.sh")]):
        data = plan_json(run_cli, *args, "--step-time", "120")
        assert data["time"]["wall_seconds"]["expected"] == pytest.approx(data["run"]["training_steps"] * 120, rel=1e-9)


def test_the_plan_flags_win_over_the_stacks_own_settings(run_cli):
    data = plan_json(run_cli, "--launch", launch("slime/qwen3_4b.sh"), "--prompts-per-step", "64", "--samples-per-prompt", "4")
    assert (data["run"]["prompts_per_step"], data["run"]["rollouts_per_step"]) == (64, 256)


def test_a_stack_setting_that_is_not_a_number_is_one_line_and_exit_2(run_cli):
    code, out, err = run_cli("plan", "--framework", "slime", "--set", "rollout_batch_size=many", "--set", "num_rollout=3")
    assert code == 2 and "Traceback" not in err
    assert "rollout_batch_size=many" in err


def test_a_setting_slime_refuses_ends_in_exit_2_with_slimes_reason(run_cli):
    code, out, err = run_cli("plan", "--framework", "slime", "--set", "rollout_batch_size=8", "--set", "global_batch_size=16")
    assert code == 2 and "please set --num-rollout or --num-epoch" in err


def test_a_slime_plan_in_chinese_has_no_english_warning(run_cli):
    code, out, err = run_cli("plan", "--framework", "slime", "--set", "rollout_batch_size=16", "--set", "n_samples_per_prompt=6",
                             "--set", "global_batch_size=40", "--set", "num_rollout=9", "--lang", "zh")
    assert code == 0, err
    assert "学习率调度按 21 次迭代计算" in out


LOGS = FIXTURES / "logs"


def explain_json(run_cli, name):
    code, out, err = run_cli("explain", str(LOGS / name), "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_explain_reads_areals_train_step_line_with_its_lr_horizon_total(run_cli):
    data = explain_json(run_cli, "areal-format.log")
    assert (data["framework"], data["observed"]["step"], data["observed"]["total"]) == ("areal", 30, 290)
    assert data["observed"]["epoch"] == [2, 10]
    assert data["observed"]["step_seconds"] == pytest.approx(60.5)  # 10:00:01.000 to 10:02:02.000 over two steps
    assert any("260 steps are left" in line for line in data["explanation"])


def test_explain_reads_open_instructs_metrics_panel(run_cli):
    data = explain_json(run_cli, "open-instruct-format.log")
    assert (data["framework"], data["observed"]["step"]) == ("open-instruct", 6)
    assert data["observed"]["step_seconds"] == pytest.approx(96.1)


def async_cases():
    data = json.loads((FIXTURES / "trl_async_grpo.json").read_text())
    return [pytest.param(release, case, id=f"{release}-{label}") for release, found in data["releases"].items()
            for label, case in found.items()]


@pytest.mark.parametrize(("release", "case"), async_cases())
def test_async_grpo_plan_equals_what_each_trl_releases_own_step_lines_did(release, case):
    from trainsteps.frameworks.trl_async_grpo import AsyncGRPOSpec, plan_async_grpo

    s, recorded = case["settings"], case["recorded"]
    plan = plan_async_grpo(AsyncGRPOSpec(release=release, **s))
    assert plan.derivation["samples_per_step"].value == recorded["samples_per_step"]
    assert plan.run.scheduler_steps == recorded["max_steps"]  # the Trainer's max_steps: the LR horizon
    assert plan.inputs["lr_scheduler_type"] == recorded["lr_scheduler_default"].split(" ")[0]
    if recorded["epoch_stop_groups"] is None:  # max_steps is where the run stops
        assert plan.run.training_steps == recorded["max_steps"]
    else:  # the run stops on distinct prompt groups; max_steps is a ceiling above it
        assert plan.derivation["prompt_groups"].value == recorded["epoch_stop_groups"]
        assert plan.run.training_steps < recorded["max_steps"]
        assert "ASYNC_GRPO_EPOCH_STOP" in {trap.code for trap in plan.warnings}


def test_an_async_grpo_config_is_planned_by_its_own_planner(run_cli, tmp_path):
    config = tmp_path / "async_grpo.yaml"
    config.write_text("per_device_train_batch_size: 16\nnum_generations: 8\nmax_staleness: 4\nnum_train_epochs: 1\n")
    data = plan_json(run_cli, str(config), "--num-examples", "7473", "--gpus", "4", "--framework-version", "1.8.0")
    assert (data["framework"], data["run"]["training_steps"]) == ("trl-async-grpo", 934)


# prime-rl and ROLL: their pure parts run by tools/record_rl_stacks.py (prime_rl.json, roll.json); loops read


@pytest.mark.parametrize(("commit", "case"), cases("roll"))
def test_roll_plan_equals_what_rolls_own_horizon_checkpoint_and_eval_code_did(commit, case):
    from trainsteps.frameworks.roll import RollSpec, plan_roll

    s, recorded = case["settings"], case["recorded"]
    release = "0.3.0" if commit.startswith("8eb27cc") else "0.1.3"  # 9744713 is before v0.2.0 (2026-02-04)
    plan = plan_roll(RollSpec(max_steps=s["max_steps"], rollout_batch_size=s["rollout_batch_size"], num_return_sequences_in_group=s["n"],
                              ppo_epochs=s["ppo_epochs"], per_device_train_batch_size=s["per_device_train_batch_size"],
                              gradient_accumulation_steps=s["gradient_accumulation_steps"], eval_steps=s["eval_steps"],
                              save_steps=s["save_steps"], has_val_dataset=True, release=release))
    assert plan.printed["actor train max_steps without dp_size"] == str(recorded["actor_max_steps_without_dp"])
    assert plan.run.save_steps == [g + 1 for g in recorded["save_after_global_steps"]]
    assert plan.run.test_steps == recorded["eval_at_global_steps"]


def prime_cases():
    data = json.loads((FIXTURES / "prime_rl.json").read_text())
    return [pytest.param(commit, found, id=commit[:7]) for commit, found in data["commits"].items()]


@pytest.mark.parametrize(("commit", "recorded"), prime_cases())
def test_prime_rl_plan_equals_what_prime_rls_scheduler_check_and_checkpoint_condition_did(commit, recorded):
    from trainsteps.frameworks.prime_rl import PrimeRLSpec, plan_prime_rl

    for label, outcome in (recorded["validate_scheduler"] or {}).items():
        kind, warmup, decay, max_steps = (part.split("=")[-1] for part in label.split())
        spec = PrimeRLSpec(max_steps=None if max_steps == "None" else int(max_steps), scheduler=kind, warmup_steps=int(warmup),
                           decay_steps=int(decay))
        if outcome == "ok" and spec.max_steps is not None:
            plan_prime_rl(spec)
        elif outcome != "ok":
            with pytest.raises(ValueError, match=__import__("re").escape(outcome.split(" (use")[0])):
                plan_prime_rl(spec)
    for label, periodic in recorded["checkpoint_steps"].items():
        max_steps, interval, start = (part.split("=")[-1] for part in label.split())
        plan = plan_prime_rl(PrimeRLSpec(max_steps=int(max_steps), ckpt=True, ckpt_interval=None if interval == "None" else int(interval),
                                         resume_step=int(start) - 1 if int(start) > 1 else None))
        assert plan.run.save_steps == periodic + [int(max_steps)]  # + the final checkpoint after the loop (train.py)


def test_the_prime_rl_example_toml_is_planned_as_prime_rl_with_its_final_checkpoint(run_cli):
    data = plan_json(run_cli, "prime_rl/reverse_text.toml")  # max_steps 20, batch 128, group 16, an empty [ckpt]
    assert data["framework"] == "prime-rl"
    assert (data["run"]["training_steps"], data["run"]["prompts_per_step"], data["run"]["save_steps"]) == (20, 8, [20])
    assert data["inputs"]["rollout_shape"]["rollout_gpus"] == 1


def test_a_prime_rl_launch_line_reads_its_toml_and_a_checkpoint_interval_skips_the_last_step():
    from trainsteps.frameworks.prime_rl import PrimeRLSpec, plan_prime_rl

    plan = plan_prime_rl(PrimeRLSpec(max_steps=20, ckpt=True, ckpt_interval=5, resume_step=7))
    assert (plan.run.training_steps, plan.run.save_steps) == (13, [10, 15, 20])


@pytest.mark.parametrize(("spec", "words"), [
    ({"max_steps": 10, "batch_size": 64, "token_batch_size": 4096}, "Set exactly one of batch_size or token_batch_size"),
    ({"max_steps": 10, "batch_size": 60, "group_size": 16}, "Batch size must be divisible by the number of samples per problem"),
    ({"max_steps": 20, "scheduler": "linear", "warmup_steps": 15, "decay_steps": 10}, "must not exceed max_steps (20)"),
    ({"max_steps": 20, "scheduler": "cosine", "warmup_steps": 20}, "warmup_steps (20) must be less than max_steps (20)"),
    ({"max_steps": None}, "runs indefinitely"),
])
def test_settings_prime_rl_refuses_are_refused_with_its_reason(spec, words):
    from trainsteps.frameworks.prime_rl import PrimeRLSpec, plan_prime_rl

    with pytest.raises(ValueError, match=__import__("re").escape(words)):
        plan_prime_rl(PrimeRLSpec(**spec))


def test_the_roll_example_yaml_is_planned_as_roll(run_cli):
    data = plan_json(run_cli, "roll/rlvr_config.yaml")
    assert data["framework"] == "roll"
    run = data["run"]
    # 128 x 8 samples over 16 ranks = 64 each, one backward batch of 1 x 64: one update per step
    assert (run["training_steps"], run["updates_per_step"], data["printed"]["actor train max_steps without dp_size"]) == (500, 1, "8000")
    assert run["test_steps"][:2] == [0, 10] and run["save_steps"] == [101, 201, 301, 401, 500]


def test_a_roll_run_whose_floor_divisions_disagree_warns_about_its_lr_horizon():
    from trainsteps.frameworks.roll import RollSpec, plan_roll

    plan = plan_roll(RollSpec(max_steps=10, rollout_batch_size=100, num_return_sequences_in_group=3, per_device_train_batch_size=7, dp=4))
    assert plan.run.scheduler_steps != plan.run.scheduler_steps_taken
    assert "ROLL_LR_HORIZON" in {trap.code for trap in plan.warnings}


def test_explain_reads_prime_rls_loop_start_and_step_lines_with_their_formatted_times(run_cli):
    data = explain_json(run_cli, "prime-rl-format.log")
    assert (data["framework"], data["observed"]["step"], data["observed"]["total"]) == ("prime-rl", 2, 20)
    assert data["observed"]["step_seconds"] == pytest.approx((28.4 + 62) / 2)
    assert any("18 steps are left" in line for line in data["explanation"])


def test_explain_counts_rolls_zero_based_pipeline_steps(run_cli):
    data = explain_json(run_cli, "roll-format.log")
    assert (data["framework"], data["observed"]["step"], data["observed"]["total"]) == ("roll", 2, 500)
    assert data["observed"]["step_seconds"] == pytest.approx(541.0)  # step 0 start 10:00:01 to step 2 start 10:18:03


def test_a_plan_without_a_prompt_count_prints_no_prompt_line(run_cli):
    code, out, err = run_cli("plan", "roll/rlvr_config.yaml", cwd=EX)
    assert code == 0, err
    assert "prompts, " not in out and "1,024 per step" in out


def test_a_slime_plan_with_a_model_and_a_gpu_times_generation_and_update_by_the_rl_step_model(run_cli):
    data = plan_json(run_cli, "--launch", launch("slime/qwen3_4b.sh"), "--gpu", "h100-sxm", "--params", "4e9")
    assert {"generation", "actor_update"} <= set(data["time"]["step_parts"])
    assert data["time"]["source"] == "model"
    assert data["time"]["wall_seconds"]["expected"] > 0
