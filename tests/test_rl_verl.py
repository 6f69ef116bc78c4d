"""verl: the engine equals what verl's own code did in every recorded case (tools/record_rl.py, tests/fixtures/rl/)."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from trainsteps.configs.rl import verl_spec
from trainsteps.configs.rl_launch import RLConfig, read_launch
from trainsteps.frameworks import verl
from trainsteps.frameworks.verl import VerlSpec, plan_verl, updates_per_step

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "rl"
DATA = FIXTURES / "data"
TOKENIZER = pathlib.Path(__file__).parent / "assets" / "tiny_tokenizer.json"
RECORDS = [(fixture["version"], case) for path in sorted(FIXTURES.glob("verl-*.json"))
           for fixture in [json.loads(path.read_text())] for case in fixture["cases"]]


def spec_for(version: str, case: dict, prompts_filtered: int | None = None) -> VerlSpec:
    inputs = dict(case["inputs"])
    config = RLConfig(framework="verl")
    if case.get("trainer") != "v1" and verl.USE_V1.at(version):  # recorded through RayPPOTrainer: main_ppo's use_v1=False
        config.values["trainer.use_v1"], config.origins["trainer.use_v1"] = False, "fixture"
    for key, value in inputs.items():
        if "." in key:
            config.values[key], config.origins[key] = value, "fixture"
    return verl_spec(config, inputs["prompts"], version=version, prompts_filtered=prompts_filtered, gpus=inputs["n_gpus_per_node"])


def filtered_prompts(case: dict) -> int | None:
    if not case["inputs"].get("data.filter_overlong_prompts"):
        return None
    pytest.importorskip("tokenizers")
    pytest.importorskip("jinja2")
    from trainsteps.configs import rl_data

    rows = rl_data.prompt_rows([str(DATA / "filter_overlong_train.parquet")])
    assert len(rows) == case["inputs"]["prompts"]
    lengths = rl_data.prompt_lengths(rows, str(TOKENIZER), str(DATA / "tokenizer_config.json"))
    return rl_data.kept_after_filter(lengths, case["inputs"]["data.max_prompt_length"])


def test_every_release_was_recorded():
    assert sorted({v for v, _ in RECORDS}) == sorted(verl.RECORDED)


@pytest.mark.parametrize(("version", "case"), RECORDS, ids=[f"{v}-{c['name']}" for v, c in RECORDS])
def test_engine_equals_verl(version, case):
    if case.get("trainer") == "fsdp_sft":  # FSDPSFTTrainer's own sampler and loader (0.3-0.6)
        inputs = case["inputs"]
        plan = verl.plan_verl_sft(verl.VerlSFTSpec(rows=inputs["prompts"], train_batch_size=inputs["data.train_batch_size"],
                                                   total_epochs=inputs["trainer.total_epochs"], n_gpus=inputs["n_gpus_per_node"],
                                                   version=version, trainer="fsdp_sft_trainer"))
        assert plan.run.steps_per_epoch == case["len_train_dataloader"]
        assert plan.run.prompts_per_step == case["per_rank_batch"] * inputs["n_gpus_per_node"]
        return
    if "error" in case:  # verl refused these settings: the engine refuses them with verl's own words
        with pytest.raises(ValueError, match=re.escape(case["error"].split(": ", 1)[1])):
            plan_verl(spec_for(version, case, filtered_prompts(case)))
        return
    plan = plan_verl(spec_for(version, case, filtered_prompts(case)))
    if case.get("trainer") == "v1":  # PPOTrainer._init_dataloader of the v1 trainer
        assert plan.run.prompts == case["dataset_len"]
        assert plan.run.steps_per_epoch == case["steps_per_epoch"]
        assert plan.derivation["len_train_dataloader"].value == case["len_train_dataloader"]
        assert plan.printed["Total training steps"] == str(case["total_training_steps"])
        assert f"Total training steps: {case['total_training_steps']}" in case["printed"]
        assert plan.run.scheduler_steps == case["actor_optim_total_training_steps"]
        return
    assert plan.run.prompts == case["dataset_len"]
    assert plan.run.steps_per_epoch == case["len_train_dataloader"]
    assert plan.run.scheduler_steps == case["total_training_steps"] == case["actor_optim_total_training_steps"]
    assert f"Total training steps: {plan.printed['Total training steps']}" in case["printed"]
    assert plan.run.updates_per_step == case["actor_updates_per_step"]
    if "scheduler" in case:  # FSDPEngine._build_lr_scheduler, stepped once per training step
        assert plan.run.warmup_steps == case["scheduler"]["warmup_steps"]
        lrs = case["scheduler"]["lr_at_steps"]
        if case["scheduler"]["type"] == "cosine":  # the decay reaches its floor exactly at the planned horizon
            tail = lrs[plan.run.warmup_steps:]
            assert plan.run.warmup_steps + tail.index(min(tail)) == plan.run.scheduler_steps


def test_v1_is_main_ppos_default_from_0_9_and_counts_train_batches_not_loader_batches():
    fixture = json.loads((FIXTURES / "verl-0.9.1.json").read_text())
    cases = {c["name"]: c for c in fixture["cases"]}
    assert cases["v1_gsm8k_quickstart"]["defaults"]["trainer.use_v1"] is True
    legacy, v1 = cases["gen_batch"], cases["v1_gen_batch"]
    assert v1["total_training_steps"] != legacy["total_training_steps"]  # same settings, the v1 trainer runs longer
    line = ("python3 -m verl.trainer.main_ppo data.train_batch_size=16 data.gen_batch_size=48 trainer.total_epochs=2 "
            "actor_rollout_ref.actor.ppo_mini_batch_size=16 actor_rollout_ref.rollout.n=4 trainer.n_gpus_per_node=2")
    spec = verl_spec(read_launch(line), 250, version="0.9.1")
    assert plan_verl(spec).run.training_steps == v1["total_training_steps"]
    spec = verl_spec(read_launch(line + " trainer.use_v1=False"), 250, version="0.9.1")
    assert plan_verl(spec).run.training_steps == legacy["total_training_steps"]
    spec = verl_spec(read_launch(line), 250, version="0.8.0")  # no v1 trainer before 0.9
    assert plan_verl(spec).run.training_steps == legacy["total_training_steps"]


def test_v1_separate_async_schedule_counts_local_updates():
    case = next(c for c in json.loads((FIXTURES / "verl-0.9.1.json").read_text())["cases"] if c["name"] == "v1_separate_async")
    plan = plan_verl(spec_for("0.9.1", case))
    assert plan.run.training_steps == case["total_training_steps"]
    assert plan.run.scheduler_steps == case["actor_optim_total_training_steps"] == case["total_training_steps"] * case["parameter_sync_step"]
    bad = spec_for("0.9.1", case)
    bad.ppo_mini_batch_size = 16
    with pytest.raises(ValueError, match="train_batch_size must equal parameter_sync_step"):
        plan_verl(bad)


def test_fsdp_sft_trainer_schedule_ignores_the_step_override(run_cli):
    case = next(c for c in json.loads((FIXTURES / "verl-0.6.1.json").read_text())["cases"] if c["name"] == "fsdp_sft_gsm8k")
    length, epochs = case["len_train_dataloader"], case["inputs"]["trainer.total_epochs"]
    line = (f"torchrun --nnodes=1 --nproc_per_node={case['inputs']['n_gpus_per_node']} -m verl.trainer.fsdp_sft_trainer "
            f"data.train_batch_size={case['inputs']['data.train_batch_size']} trainer.total_epochs={epochs}")
    code, out, err = run_cli("plan", "--launch", line, "--num-examples", case["inputs"]["prompts"], "--framework-version", "0.6.1",
                             "--format", "json")
    assert code == 0, err
    run = json.loads(out)["run"]
    assert run["training_steps"] == run["scheduler_steps"] == length * epochs
    assert run["warmup_steps"] == int(length * epochs * case["defaults"]["optim.lr_warmup_steps_ratio"])
    code, out, _ = run_cli("plan", "--launch", line + " trainer.total_training_steps=10", "--num-examples", case["inputs"]["prompts"],
                           "--framework-version", "0.6.1", "--format", "json")
    data = json.loads(out)
    assert data["run"]["training_steps"] == 10 and data["run"]["scheduler_steps"] == length * epochs
    assert "VERL_SCHEDULE_NOT_FINISHED" in {w["code"] for w in data["warnings"]}
    code, out, _ = run_cli("plan", "--launch", line + " trainer.total_training_steps=1000", "--num-examples", case["inputs"]["prompts"],
                           "--framework-version", "0.6.1", "--format", "json")
    data = json.loads(out)
    assert data["run"]["training_steps"] == length * epochs and data["run"]["save_steps"] == []
    assert "VERL_FSDP_SFT_NO_FINAL" in {w["code"] for w in data["warnings"]}
    code, _, err = run_cli("plan", "--launch", line, "--num-examples", 100, "--framework-version", "0.7.1")
    assert code == 2 and "removed in 0.7" in err


def test_gsm8k_quickstart_is_435_steps_and_4_updates_each():
    """verl's GSM8K quick start (7,473 prompts, batch 256, mini-batch 64, n 5, 15 epochs), as verl 0.9.1 counted it."""
    case = next(c for v, c in RECORDS if v == "0.9.1" and c["name"] == "gsm8k_quickstart")
    plan = plan_verl(spec_for("0.9.1", case))
    assert (plan.run.training_steps, plan.run.updates_per_step) == (case["total_training_steps"], case["actor_updates_per_step"])
    assert plan.run.optimizer_steps == case["total_training_steps"] * case["actor_updates_per_step"]
    assert plan.run.scheduler_steps == plan.run.training_steps  # the LR schedule counts rollout steps, not updates


def test_launch_line_reads_hydra_overrides():
    line = ("PYTHONUNBUFFERED=1 python3 -m verl.trainer.main_ppo \\\n algorithm.adv_estimator=grpo data.train_batch_size=256 \\\n"
            " actor_rollout_ref.actor.ppo_mini_batch_size=64 +trainer.val_before_train=False ++trainer.total_epochs=15 "
            "trainer.logger=['console','wandb'] data.filter_overlong_prompts=True")
    config = read_launch(line)
    assert config.framework == "verl" and config.env["PYTHONUNBUFFERED"] == "1"
    spec = verl_spec(config, 7473, version="0.9.1")
    assert (spec.train_batch_size, spec.ppo_mini_batch_size, spec.total_epochs, spec.val_before_train) == (256, 64, 15, False)
    assert config.values["trainer.logger"] == ["console", "wandb"]


def test_uneven_last_mini_batch_is_one_more_step():
    # the ppo_epochs_uneven_mini fixture: 48 x 2 / 2 responses per rank in mini-batches of 32 -> 2 per epoch
    assert updates_per_step(48, 32, 2, 2, 2, version="0.6.1") == 4
    with pytest.raises(ValueError, match="48 % 32 != 0"):
        updates_per_step(48, 32, 2, 2, 2, version="0.8.0")


def test_override_shorter_than_epochs_warns_and_longer_schedule_never_finishes():
    short = plan_verl(VerlSpec(prompts=100, train_batch_size=8, ppo_mini_batch_size=8, n_gpus_per_node=2, total_epochs=3, total_training_steps=7))
    assert short.run.training_steps == 7 and "VERL_STOPS_BEFORE_EPOCHS" in [w.code for w in short.warnings]
    long = plan_verl(VerlSpec(prompts=100, train_batch_size=8, ppo_mini_batch_size=8, n_gpus_per_node=2, total_epochs=2, total_training_steps=40,
                    lr_scheduler_type="cosine"))
    assert (long.run.training_steps, long.run.scheduler_steps) == (24, 40)
    assert "VERL_SCHEDULE_NOT_FINISHED" in [w.code for w in long.warnings]


def test_dynamic_sampling_is_an_upper_bound():
    plan = plan_verl(VerlSpec(prompts=1000, train_batch_size=64, ppo_mini_batch_size=32, gen_batch_size=32, total_epochs=1, filter_groups=True,
                              use_v1=False))  # recipe/dapo's own trainer
    assert plan.run.upper_bound and plan.run.training_steps == 31 // 2 and plan.run.scheduler_steps == 31
    assert "VERL_DYNAMIC_SAMPLING" in [w.code for w in plan.warnings]


def test_critic_warmup_skips_actor_updates_and_saves():
    plan = plan_verl(VerlSpec(prompts=64, train_batch_size=8, ppo_mini_batch_size=4, n_gpus_per_node=2, total_epochs=1, critic_warmup=3,
                             save_freq=2))
    assert plan.run.training_steps == 8 and plan.run.optimizer_steps == 2 * 6 and plan.run.save_steps == [4, 6, 8]
    assert plan.run.critic_optimizer_steps == 2 * 8  # gae: a critic, updated every step
