"""OpenRLHF and EasyR1 plans from their launch lines / YAML (the verl path is in cli/plan_rl.py)."""

from __future__ import annotations

from trainsteps.configs.rl import typed
from trainsteps.errors import InputError

EASYR1_KEYS = {
    "data.rollout_batch_size": ("rollout_batch_size", int),
    "data.mini_rollout_batch_size": ("mini_rollout_batch_size", int),
    "data.max_response_length": ("max_response_length", int),
    "worker.rollout.n": ("rollout_n", int),
    "worker.actor.global_batch_size": ("actor_global_batch_size", int),
    "worker.actor.ppo_epochs": ("ppo_epochs", int),
    "worker.actor.optim.lr_warmup_ratio": ("lr_warmup_ratio", float),
    "worker.actor.optim.lr_warmup_steps": ("lr_warmup_steps", int),
    "trainer.total_epochs": ("total_epochs", int),
    "trainer.max_steps": ("max_steps", int),
    "trainer.val_freq": ("val_freq", int),
    "trainer.save_freq": ("save_freq", int),
    "trainer.val_before_train": ("val_before_train", bool),
    "algorithm.online_filtering": ("online_filtering", bool),
    "algorithm.adv_estimator": ("adv_estimator", str),
}
_OPENRLHF_TYPES = {"train_batch_size": int, "rollout_batch_size": int, "n_samples_per_prompt": int, "num_episodes": int,
                   "max_epochs": int, "max_samples": int, "lr_warmup_ratio": float, "freezing_actor_steps": int, "save_steps": int,
                   "eval_steps": int, "dynamic_filtering": bool, "generate_max_len": int, "advantage_estimator": str,
                   "vllm_generate_batch_size": int}


def plan_other(framework: str, config, kw: dict):
    if framework == "openrlhf":
        return _openrlhf(config, kw)
    if framework == "easyr1":
        return _easyr1(config, kw)
    if framework == "trl-ppo":
        return _trl_ppo(config, kw)
    raise InputError("rl.error.framework", "rl.hint.framework", framework=framework)


def _prompts(kw: dict, files: list[str]) -> int:
    from trainsteps.configs import rl_data

    if kw.get("num_examples") is not None:
        return kw["num_examples"]
    files = list(kw.get("data_paths") or ()) or files
    if not files:
        raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
    return rl_data.count_rows(files)


def _openrlhf(config, kw: dict):
    from trainsteps.frameworks import openrlhf
    from trainsteps.frameworks.rl import check_release

    nested = any("." in key for key in config.values)
    version = check_release("OpenRLHF", kw.get("framework_version") or (openrlhf.NEWEST if nested else "0.9.10"), openrlhf.OLDEST)
    family = openrlhf.CLI_NAMES.at(version)
    fields = {}
    for name, (flat, dotted) in openrlhf.NAMES.items():
        key = dotted if family == "nested" else flat
        other = flat if family == "nested" else dotted
        if other in config.values and key not in config.values:
            raise InputError("orl.error.names", "orl.hint.names", key=f"--{other}", version=version, expected=f"--{key}")
        if name == "prompt_data" or key not in config.values:
            continue
        value = typed(config, key, _OPENRLHF_TYPES[name])
        if value is not None:
            fields[name] = value
    prompt_data = config.values.get(openrlhf.NAMES["prompt_data"][1 if family == "nested" else 0])
    files = [p for p in str(prompt_data).split(",") if p] if prompt_data and _is_local(str(prompt_data)) else []
    return openrlhf.plan_openrlhf(openrlhf.OpenRLHFSpec(prompts=_prompts(kw, files), version=version, **fields))


def _easyr1(config, kw: dict):
    from trainsteps.configs.rl import train_files
    from trainsteps.frameworks import easyr1

    fields = {}
    for key, (name, kind) in EASYR1_KEYS.items():
        value = typed(config, key, kind)
        if value is not None:
            fields[name] = value
    files = [f for f in train_files(config) if _is_local(f)]
    spec = easyr1.EasyR1Spec(prompts=_prompts(kw, files), **fields)
    try:
        return easyr1.plan_easyr1(spec)
    except ValueError as exc:
        raise InputError("rl.error.settings", "rl.hint.settings_easyr1", detail=str(exc)) from None


def _is_local(path: str) -> bool:
    import os

    return os.path.isfile(os.path.expanduser(path.split("@")[0]))


PPO_KEYS = {"per_device_train_batch_size": int, "gradient_accumulation_steps": int, "num_train_epochs": float,
            "total_episodes": int, "num_mini_batches": int, "num_ppo_epochs": int, "response_length": int,
            "logging_steps": float, "save_steps": float, "warmup_ratio": float}


def _trl_ppo(config, kw: dict):
    """A TRL PPOConfig YAML (flat keys) and the plan command's own options (typed ones win)."""
    import click

    from trainsteps.frameworks.trl_rl import PPOSpec, plan_trl_ppo

    ctx = click.get_current_context(silent=True)
    fields = {}
    for key, kind in PPO_KEYS.items():
        value = typed(config, key, kind)
        if value is not None:
            fields[key] = value
        source = ctx.get_parameter_source(key) if ctx is not None and key in ctx.params else None
        if source is not None and source.name == "COMMANDLINE":
            fields[key] = kind(kw[key])
    if kw.get("num_examples") is None:
        raise InputError("rl.error.trl_ppo_rows", "rl.hint.trl_ppo_rows")
    world = kw.get("world_size") or (kw.get("gpus") or 1) * (kw.get("nodes") or 1)
    try:
        return plan_trl_ppo(PPOSpec(num_examples=kw["num_examples"], world_size=world, **fields))
    except ValueError as exc:
        raise InputError("rl.error.settings", "rl.hint.settings", detail=str(exc)) from None
