"""ms-swift's Megatron launch line (`NPROC_PER_NODE=8 megatron sft --micro_batch_size 1 --num_train_epochs 2 ...`) and its
saved `args.json` (or a YAML of the same flat keys) -> the settings of frameworks/swift_megatron.py, with where each
came from."""

from __future__ import annotations

import shlex

from trainsteps.errors import InputError

KEYS = {"micro_batch_size": "micro_batch_size", "global_batch_size": "global_batch_size", "num_train_epochs": "num_train_epochs",
        "max_epochs": "max_epochs", "train_iters": "train_iters", "save_strategy": "save_strategy", "save_steps": "save_steps",
        "save_interval": "save_interval", "eval_steps": "eval_steps", "eval_interval": "eval_interval", "rlhf_type": "rlhf_type",
        "num_generations": "num_generations", "tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp",
        "context_parallel_size": "cp", "streaming": "streaming"}
"""ms-swift argument -> the setting it gives (both releases' spellings; the planner refuses the other release's)."""
TEXT = frozenset({"save_strategy", "rlhf_type"})
FLAGS = frozenset({"streaming"})
COMMANDS = ("sft", "pt", "rlhf")


def read_file(path: str) -> tuple[dict, dict]:
    """(settings, origin of each) from a flat args.json / YAML."""
    from trainsteps.configs.files import read_config

    config = read_config(path)
    settings, origins = {}, {}
    for key, name in KEYS.items():
        if key in config.data and config.data[key] is not None:
            settings[name] = _checked(name, config.data[key], f"{config.path.name} {key}")
            origins[name] = config.where(key)
    return settings, origins


def read_launch(line: str) -> tuple[dict, dict, int | None]:
    """(settings, origins, world size) from `[NPROC_PER_NODE=8] megatron sft|pt|rlhf --key value ...`."""
    from trainsteps.configs.launch import parse_launch
    from trainsteps.configs.overrides import override_value

    try:
        words = shlex.split(line)
    except ValueError as error:
        raise InputError("swm.error.launch", "swm.hint.launch", line=line[:120], why=str(error)) from None
    starts = [i for i, word in enumerate(words[:-1]) if word.endswith("megatron") and words[i + 1] in COMMANDS]
    if not starts:
        raise InputError("swm.error.launch", "swm.hint.launch", line=line[:120], why="megatron sft|pt|rlhf")
    settings, origins = {}, {}
    rest = words[starts[0] + 2:]
    for i, word in enumerate(rest):
        key, sep, value = word[2:].partition("=") if word.startswith("--") else ("", "", "")
        if key in KEYS:
            text = value if sep else (rest[i + 1] if i + 1 < len(rest) else "")
            name = KEYS[key]
            settings[name] = _checked(name, text if name in TEXT else override_value(text), f"--{key}")
            origins[name] = "--launch"
    return settings, origins, parse_launch(line).world_size


def _checked(name: str, value, where: str):
    if name in FLAGS:
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, str) if name in TEXT else isinstance(value, int) and not isinstance(value, bool)
    if not ok:
        raise InputError("swm.error.key", "swm.hint.key", where=where, value=repr(value)[:60])
    return value
