"""torchtitan's `.toml` job configs (0.2.2: `--job.config_file`) and its `--section.key value` overrides -> the
settings of frameworks/torchtitan.py, with the file and section each came from.

The file is read as every config file is (configs/files.py: size, pickles, text checked first), then parsed with
`tomllib` (`tomli` on Python 3.10). The keys that decide steps are read, and the model's train spec and flavor
(`[model] name`, `flavor`) for the time model; the model's other keys are left alone.
"""

from __future__ import annotations

import pathlib

from trainsteps.errors import InputError

KEYS = {
    ("training", "local_batch_size"): "local_batch_size", ("training", "global_batch_size"): "global_batch_size",
    ("training", "seq_len"): "seq_len", ("training", "steps"): "steps",
    ("lr_scheduler", "warmup_steps"): "warmup_steps", ("lr_scheduler", "total_steps"): "lr_total_steps",
    ("lr_scheduler", "decay_ratio"): "decay_ratio",
    ("checkpoint", "enable"): "checkpoint_enable", ("checkpoint", "interval"): "checkpoint_interval",
    ("checkpoint", "enable_first_step_checkpoint"): "first_step_checkpoint",
    ("validation", "enable"): "validation_enable", ("validation", "freq"): "validation_freq",
    ("parallelism", "data_parallel_replicate_degree"): "dp_replicate", ("parallelism", "data_parallel_shard_degree"): "dp_shard",
    ("parallelism", "tensor_parallel_degree"): "tp", ("parallelism", "pipeline_parallel_degree"): "pp",
    ("parallelism", "context_parallel_degree"): "cp",
    ("model", "name"): "model_name", ("model", "flavor"): "model_flavor",
}
"""(section, key) of torchtitan's JobConfig -> the setting it gives."""
FLAGS = frozenset({"checkpoint_enable", "first_step_checkpoint", "validation_enable"})
RATIOS = frozenset({"decay_ratio"})
NAMES = frozenset({"model_name", "model_flavor"})
"""The model's train spec and flavor (frameworks/torchtitan_models.py gives their shape to the time model)."""
OPTIONAL = frozenset({"lr_total_steps", "decay_ratio"})
"""Settings that may be unset (a TOML file cannot say None; an override may say `None`)."""


def read_toml(path: str) -> tuple[dict, dict]:
    """(settings, origin of each) read from one torchtitan `.toml` file."""
    from trainsteps.configs.files import read_toml as read_file

    file = pathlib.Path(path)
    data = read_file(file)
    settings, origins = {}, {}
    for (section, key), name in KEYS.items():
        table = data.get(section)
        if isinstance(table, dict) and key in table:
            settings[name] = _checked(name, table[key], f"{file.name} [{section}] {key}")
            origins[name] = f"{file.name} [{section}]"
    return settings, origins


def read_overrides(items) -> tuple[dict, dict]:
    """`--set training.steps=100`: torchtitan's own `--training.steps 100` overrides."""
    from trainsteps.configs.overrides import read_section_overrides

    return read_section_overrides(items, KEYS, _checked, ("tt.error.override", "tt.hint.override"))


def _checked(name: str, value, where: str):
    """A value of the type torchtitan's dataclass declares, or one line naming the key."""
    if value is None and name in OPTIONAL:
        return None
    if name in NAMES:
        ok = isinstance(value, str) and 0 < len(value) <= 80
    elif name in FLAGS:
        ok = isinstance(value, bool)
    elif name in RATIOS:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
    else:
        ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok:
        raise InputError("tt.error.key", "tt.hint.key", where=where, value=repr(value)[:60])
    return value
