"""Megatron-Bridge's ConfigContainer YAML (`run_recipe.py --config-file conf.yaml`) and its Hydra-style overrides
(`train.train_iters=1000 train.global_batch_size=128`, on the launch line or as `--set`) -> the settings of
frameworks/megatron_bridge.py, with where each came from. The YAML is read by the guarded reader (configs/files.py)."""

from __future__ import annotations

import shlex

from trainsteps.errors import InputError

KEYS = {
    ("train", "train_iters"): "train_iters", ("train", "train_samples"): "train_samples", ("train", "num_epochs"): "num_epochs",
    ("train", "global_batch_size"): "global_batch_size", ("train", "micro_batch_size"): "micro_batch_size",
    ("train", "eval_interval"): "eval_interval", ("train", "eval_iters"): "eval_iters",
    ("validation", "eval_interval"): "eval_interval", ("validation", "eval_iters"): "eval_iters",
    ("validation", "eval_global_batch_size"): "eval_global_batch_size", ("checkpoint", "save_interval"): "save_interval",
    ("scheduler", "lr_warmup_iters"): "lr_warmup_iters", ("scheduler", "lr_warmup_fraction"): "lr_warmup_fraction",
    ("scheduler", "lr_warmup_samples"): "lr_warmup_samples", ("scheduler", "lr_decay_iters"): "lr_decay_iters",
    ("scheduler", "max_steps"): "scheduler_max_steps", ("dataset", "drop_last"): "drop_last",
    ("model", "tensor_model_parallel_size"): "tp", ("model", "pipeline_model_parallel_size"): "pp",
    ("model", "context_parallel_size"): "cp",
}
"""(section, key) of the ConfigContainer -> the setting it gives (train.eval_* are the deprecated spellings)."""
FRACTIONS = frozenset({"num_epochs", "lr_warmup_fraction"})


def read_yaml(path: str) -> tuple[dict, dict]:
    """(settings, origin of each) from one ConfigContainer YAML."""
    from trainsteps.configs.files import read_config

    config = read_config(path)
    settings, origins = {}, {}
    for (section, key), name in KEYS.items():
        table = config.data.get(section)
        if isinstance(table, dict) and key in table and table[key] is not None:
            settings[name] = _checked(name, table[key], f"{config.path.name} {section}.{key}")
            origins[name] = config.where(section)
    return settings, origins


def read_launch(line: str) -> tuple[list[str], dict, dict, int | None]:
    """(config files, settings, origins, world size) from `torchrun --nproc-per-node=8 run_recipe.py --config-file c.yaml
    train.train_iters=1000 ...`."""
    from trainsteps.configs.launch import parse_launch
    from trainsteps.configs.overrides import override_value

    try:
        words = shlex.split(line)
    except ValueError as error:
        raise InputError("mb.error.launch", "mb.hint.launch", line=line[:120], why=str(error)) from None
    settings, origins, configs = {}, {}, []
    for i, word in enumerate(words):
        if word in ("--config-file", "--config_file") and i + 1 < len(words):
            configs.append(words[i + 1])
        elif word.startswith(("--config-file=", "--config_file=")):
            configs.append(word.partition("=")[2])
        key, sep, text = word.partition("=")
        section, _, name = key.partition(".")
        target = KEYS.get((section, name)) if sep and not key.startswith("-") else None
        if target is not None:
            settings[target] = _checked(target, override_value(text), word)
            origins[target] = "--launch"
    return configs, settings, origins, parse_launch(line).world_size


def read_overrides(items) -> tuple[dict, dict]:
    """`--set train.num_epochs=2`: Megatron-Bridge's own `train.num_epochs=2`."""
    from trainsteps.configs.overrides import read_section_overrides

    return read_section_overrides(items, KEYS, _checked, ("mb.error.override", "mb.hint.override"))


def _checked(name: str, value, where: str):
    if value is None:
        return None
    if name == "drop_last":
        ok = isinstance(value, bool)
    elif name in FRACTIONS:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    else:
        ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok:
        raise InputError("mb.error.key", "mb.hint.key", where=where, value=repr(value)[:60])
    return value
