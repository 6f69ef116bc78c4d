"""The RL stacks users moved to, planned from their launch lines, configs and `--set` overrides: slime, AReaL and
open-instruct's GRPO (`trainsteps plan --framework slime --launch "python train.py ..."`, an AReaL YAML, ...).

Each reads its settings by its own names (configs.rl_stacks), then the plan's flags, which win: `--num-examples` or
`--data` (prompts), `--prompts-per-step`, `--samples-per-prompt` and the GPUs."""

from __future__ import annotations

from trainsteps.errors import InputError
from trainsteps.planners.table import Answer


def plan_slime(request, counted) -> Answer:
    return _answer(request, *stack_plan(request, "slime"))


def plan_areal(request, counted) -> Answer:
    return _answer(request, *stack_plan(request, "areal"))


def plan_open_instruct(request, counted) -> Answer:
    return _answer(request, *stack_plan(request, "open-instruct"))


def plan_trl_async_grpo(request, counted) -> Answer:
    return _answer(request, *stack_plan(request, "trl-async-grpo"))


def plan_prime_rl(request, counted) -> Answer:
    return _answer(request, *stack_plan(request, "prime-rl"))


def plan_roll(request, counted) -> Answer:
    return _answer(request, *stack_plan(request, "roll"))


def stack_plan(request, framework: str, settings=None):
    """The stack's settings and its RLPlan: read from the request's launch line, files and `--set` (the command line), or
    given already read (`trainsteps.plan_rl`, settings by the stack's own names), then the request's plan flags."""
    settings = _settings(request) if settings is None else settings
    return settings, _STACK_PLANS[framework](request, settings)


def _slime(request, s):
    from trainsteps.frameworks.slime import SlimeSpec, plan_slime

    files = [p for p in str(s.text("prompt_data", "")).split(",") if p and _is_local(p)]
    colocate = s.flag("colocate")
    rollout_gpus = None if colocate else s.whole("rollout_num_gpus")
    actor = s.whole("actor_num_nodes", 1) * s.whole("actor_num_gpus_per_node", 8)
    context = s.whole("rollout_max_context_len")
    spec = SlimeSpec(
        rollout_batch_size=_flag(request, "prompts_per_step", s.whole("rollout_batch_size")),
        prompts=_prompts(request, files, required=False),
        n_samples_per_prompt=_flag(request, "samples_per_prompt", s.whole("n_samples_per_prompt", 1)),
        global_batch_size=s.whole("global_batch_size"), num_steps_per_rollout=s.whole("num_steps_per_rollout"),
        num_rollout=s.whole("num_rollout"), num_epoch=s.whole("num_epoch"), start_rollout_id=s.whole("start_rollout_id", 0),
        eval_interval=s.whole("eval_interval"), skip_eval_before_train=s.flag("skip_eval_before_train"),
        save_interval=s.whole("save_interval"), lr_warmup_iters=s.whole("lr_warmup_iters", 0),
        lr_warmup_fraction=s.real("lr_warmup_fraction"), lr_decay_iters=s.whole("lr_decay_iters"), use_critic=s.flag("use_critic"),
        num_critic_only_steps=s.whole("num_critic_only_steps", 0),
        rollout_global_dataset=not s.flag("disable_rollout_global_dataset"),
        dynamic_sampling=bool(s.text("dynamic_sampling_filter_path")) or
        (s.whole("over_sampling_batch_size") or 0) > (s.whole("rollout_batch_size") or 0),
        asynchronous=s.script == "train_async.py", rollout_max_prompt_len=s.whole("rollout_max_prompt_len") or (context - 1 if context else None),
        rollout_max_response_len=s.whole("rollout_max_response_len"), actor_gpus=_gpus(request) or actor, rollout_gpus=rollout_gpus,
        rollout_tp=s.whole("rollout_num_gpus_per_engine", 1),
        reference=bool(s.text("ref_load")) or s.flag("use_kl_loss") or (s.real("kl_coef", 0.0) or 0.0) > 0)
    if spec.rollout_batch_size is None:
        raise InputError("rlstack.error.required", "rlstack.hint.required", framework="slime", key="--rollout-batch-size",
                         option="--prompts-per-step")
    return _planned(plan_slime, spec)


def _areal(request, s):
    from trainsteps.frameworks.areal import ArealSpec, plan_areal

    online = s.text("rollout.agent.mode") == "online"
    path = s.text("train_dataset.path")
    files = [path] if path and _is_local(path) else []
    gpus = _gpus(request)
    backends = "+".join(b for b in (s.text("rollout.backend"), s.text("actor.backend")) if b)  # the 2026 spelling
    trainer, rollout_gpus, rollout_tp = _allocation(s.text("allocation_mode") or backends)
    spec = ArealSpec(
        prompts=None if online else _prompts(request, files), batch_size=_flag(request, "prompts_per_step", s.whole("train_dataset.batch_size", 1)),
        dp=gpus or trainer or 1, drop_last=s.flag("train_dataset.drop_last", True),
        n_samples=_flag(request, "samples_per_prompt", s.whole("gconfig.n_samples", 1)),
        total_train_epochs=s.whole("total_train_epochs", 1), total_train_steps=s.whole("total_train_steps"),
        ppo_n_minibatches=s.whole("actor.ppo_n_minibatches", 4), critic=any(k.startswith("critic.") for k in s.values),
        critic_n_minibatches=s.whole("critic.ppo_n_minibatches", 4),
        warmup_steps_proportion=s.real("actor.optimizer.warmup_steps_proportion", 0.001),
        save_freq_steps=s.whole("saver.freq_steps"), save_freq_epochs=s.whole("saver.freq_epochs"), save_freq_secs=s.whole("saver.freq_secs"),
        eval_freq_steps=s.whole("evaluator.freq_steps"), eval_freq_epochs=s.whole("evaluator.freq_epochs"),
        eval_freq_secs=s.whole("evaluator.freq_secs"), eval_before_train=s.flag("evaluator.eval_before_train"), online=online,
        max_new_tokens=s.whole("gconfig.max_new_tokens", 16384), max_length=s.whole("train_dataset.max_length"), gpus=gpus or trainer,
        rollout_gpus=rollout_gpus, rollout_tp=rollout_tp,
        max_head_offpolicyness=s.whole("rollout.max_head_offpolicyness", 0))
    return _planned(plan_areal, spec)


def _open_instruct(request, s):
    from trainsteps.frameworks.open_instruct import OpenInstructSpec, plan_open_instruct

    fields = {name: s.whole(name) for name in ("total_episodes", "num_mini_batches", "num_epochs", "local_eval_every", "save_freq",
                                                 "async_steps", "max_prompt_token_length", "response_length", "vllm_num_engines",
                                                 "vllm_tensor_parallel_size", "warm_up_steps")}
    fields["num_unique_prompts_rollout"] = _flag(request, "prompts_per_step", s.whole("num_unique_prompts_rollout"))
    fields["num_samples_per_prompt_rollout"] = _flag(request, "samples_per_prompt", s.whole("num_samples_per_prompt_rollout"))
    fields["warmup_ratio"] = s.real("warmup_ratio")
    fields["learners"] = _gpus(request) or s.whole("num_learners_per_node")
    fields["eval_on_step_0"] = s.flag("eval_on_step_0")
    fields["load_ref_policy"] = s.flag("load_ref_policy", True)
    fields["has_eval_data"] = bool(s.values.get("dataset_mixer_eval_list"))
    spec = OpenInstructSpec(prompts=_prompts(request, [], required=False), **{k: v for k, v in fields.items() if v is not None})
    return _planned(plan_open_instruct, spec)


def _allocation(mode: str) -> tuple[int | None, int | None, int]:
    """AReaL's `allocation_mode` (`sglang:d4t2+fsdp:d8`, `sglang.d4p1t1+d8p1t1`): the trainer's data-parallel size, the
    inference servers' GPUs and their tensor-parallel size (a mode without `+` trains only, or only generates)."""
    import re

    def degrees(part: str) -> dict:
        return {k: int(v) for k, v in re.findall(r"([dptce])(\d+)", part.split(":")[-1].split(".")[-1])}

    parts = [p for p in mode.replace(" ", "").split("+") if p]
    if not parts:
        return None, None, 1
    rollout = next((degrees(p) for p in parts if p.startswith(("sglang", "vllm"))), None)
    training = next((degrees(p) for p in parts if not p.startswith(("sglang", "vllm"))), None)
    rollout_gpus = rollout.get("d", 1) * rollout.get("t", 1) * rollout.get("p", 1) if rollout else None
    return (training.get("d") if training else None), rollout_gpus, (rollout.get("t", 1) if rollout else 1)


def _trl_async_grpo(request, s):
    from trainsteps.frameworks.trl_async_grpo import NEWEST, AsyncGRPOSpec, plan_async_grpo

    whole = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "max_steps", "max_tool_calling_iterations",
             "warmup_steps", "save_steps", "max_completion_length", "max_staleness")
    fields = {name: s.whole(name) for name in whole}
    fields["num_generations"] = _flag(request, "samples_per_prompt", fields["num_generations"])
    if request.gave("prompts_per_step"):  # prompts per step x generations rows, over the per-device batches
        fields["per_device_train_batch_size"] = request.settings["prompts_per_step"] * (fields["num_generations"] or 8)
    fields.update(num_train_epochs=s.real("num_train_epochs"), lr_scheduler_type=s.text("lr_scheduler_type"),
                  save_strategy=s.text("save_strategy"), num_processes=_gpus(request) or s.whole("num_processes"),
                  release=request.settings.get("framework_version") or s.text("release") or NEWEST)
    spec = AsyncGRPOSpec(prompts=_prompts(request, [], required=False), **{k: v for k, v in fields.items() if v is not None})
    return _planned(plan_async_grpo, spec)


def _prime_rl(request, s):
    from trainsteps.frameworks.prime_rl import PrimeRLSpec, plan_prime_rl

    group = _flag(request, "samples_per_prompt", s.whole("orchestrator.group_size", 1))
    batch = s.whole("orchestrator.batch_size")
    if request.gave("prompts_per_step"):
        batch = request.settings["prompts_per_step"] * group
    scheduler = s.text("trainer.scheduler.type", "constant")
    infer = s.whole("deployment.num_infer_gpus")
    spec = PrimeRLSpec(
        max_steps=s.whole("max_steps") or s.whole("trainer.max_steps") or s.whole("orchestrator.max_steps"), batch_size=batch,
        token_batch_size=s.whole("orchestrator.token_batch_size"), group_size=group,
        seq_len=s.whole("seq_len") or s.whole("orchestrator.seq_len") or 2048,
        max_completion_tokens=s.whole("orchestrator.train.sampling.max_completion_tokens") or s.whole("orchestrator.sampling.max_tokens"),
        scheduler=scheduler, warmup_steps=s.whole("trainer.scheduler.warmup_steps", 10), decay_steps=s.whole("trainer.scheduler.decay_steps", 10),
        ckpt="ckpt" in s.values or any(k.startswith("ckpt.") for k in s.values), ckpt_interval=s.whole("ckpt.interval"),
        resume_step=s.whole("ckpt.resume_step"), max_off_policy_steps=s.whole("orchestrator.max_off_policy_steps", 8),
        train_gpus=_gpus(request) or s.whole("deployment.num_train_gpus", 1), infer_gpus=infer)
    return _planned(plan_prime_rl, spec)


def _roll(request, s):
    from trainsteps.frameworks.roll import RollSpec, plan_roll

    train_gpus = _device_count(s.text("actor_train.device_mapping"))
    infer_mapping = s.text("actor_infer.device_mapping")
    model = (s.whole("actor_train.strategy_args.strategy_config.tensor_model_parallel_size", 1)
             * s.whole("actor_train.strategy_args.strategy_config.pipeline_model_parallel_size", 1)
             * s.whole("actor_train.strategy_args.strategy_config.context_parallel_size", 1))
    gpus = _gpus(request) or train_gpus or 1
    fields = {name: s.whole(name) for name in ("max_steps", "ppo_epochs", "eval_steps", "save_steps", "prompt_length", "response_length")}
    fields["rollout_batch_size"] = _flag(request, "prompts_per_step", s.whole("rollout_batch_size"))
    fields["num_return_sequences_in_group"] = _flag(request, "samples_per_prompt", s.whole("num_return_sequences_in_group"))
    for name in ("per_device_train_batch_size", "gradient_accumulation_steps"):
        fields[name] = s.whole(f"actor_train.training_args.{name}")
    spec = RollSpec(dp=max(gpus // model, 1), has_val_dataset=bool(s.values.get("validation") or s.values.get("validation.data_args.file_name")),
                    train_gpus=gpus, infer_gpus=None if infer_mapping in (None, s.text("actor_train.device_mapping")) else _device_count(infer_mapping),
                    asynchronous=(s.real("async_generation_ratio", 0.0) or 0.0) > 0,
                    release=str(request.settings.get("framework_version") or "0.3.0").lstrip("v"),
                    **{k: v for k, v in fields.items() if v is not None})
    return _planned(plan_roll, spec)


_STACK_PLANS = {"slime": _slime, "areal": _areal, "open-instruct": _open_instruct, "trl-async-grpo": _trl_async_grpo,
                "prime-rl": _prime_rl, "roll": _roll}


def _device_count(mapping: str | None) -> int | None:
    """ROLL's `device_mapping: list(range(0,16))` (or a literal list): the GPUs it names."""
    import re

    if not mapping:
        return None
    found = re.fullmatch(r"\s*list\(range\((\d+)\s*,\s*(\d+)\)\)\s*", mapping)
    if found:
        return max(int(found.group(2)) - int(found.group(1)), 0) or None
    items = re.findall(r"\d+", mapping)
    return len(items) or None


def _settings(request):
    from trainsteps.configs.rl_stacks import StackSettings

    settings = StackSettings()
    if request.gave("num_examples") and request.settings.get("data_paths"):  # one of the two would be ignored
        raise InputError("count.error.plan_data_twice", "count.hint.plan_data_twice")
    if request.launch:
        settings.read_launch(request.launch)
    for path in [*settings.config_paths(), *request.configs]:
        settings.read_file(path)
    if request.launch:  # the launch line's own words win over its --config file
        settings.read_launch(request.launch)
    settings.read_overrides(request.settings.get("rl_overrides"))
    return settings


def _flag(request, name: str, value):
    """A plan flag (`--prompts-per-step`) wins over the stack's own setting."""
    return request.settings[name] if request.gave(name) else value


def _prompts(request, files: list[str], required: bool = True) -> int | None:
    from trainsteps.configs import rl_data

    kw = request.settings
    if kw.get("num_examples") is not None:
        return kw["num_examples"]
    files = list(kw.get("data_paths") or ()) or files
    if files:
        return rl_data.count_rows(files)
    if required:
        raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
    return None


def _gpus(request) -> int | None:
    from trainsteps.world import world_size

    kw = request.settings
    return world_size(kw.get("world_size"), kw.get("gpus"), kw.get("nodes"))


def _is_local(path: str) -> bool:
    import os

    return os.path.isfile(os.path.expanduser(path))


def _planned(plan, spec):
    try:
        return plan(spec)
    except ValueError as exc:
        raise InputError("rl.error.settings", "rlstack.hint.settings", detail=str(exc)) from None


def _answer(request, settings, plan) -> Answer:
    """The plan's JSON and text, and its step for the RL step-time model (timing.rl.RolloutShape)."""
    from trainsteps.report_rl import render_rl
    from trainsteps.timing.rl import RolloutShape

    data = plan.to_dict(request.lang)
    data["config"] = {"framework": plan.framework, "files": list(request.configs),
                      "settings": {k: {"value": v, "from": settings.origins.get(k)} for k, v in settings.values.items()}}
    return Answer(data, render_rl(plan, request.lang, request.explain), time_steps="training_steps",
                  rollout=RolloutShape(**plan.inputs["rollout_shape"]))
