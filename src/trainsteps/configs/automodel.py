"""NeMo Automodel's recipe YAML (`automodel finetune llm -c cfg.yaml`) and its `--section.key value` overrides -> the
settings of frameworks/automodel.py, with where each came from. The YAML is read by the guarded reader (configs/files.py)."""

from __future__ import annotations

from trainsteps.errors import InputError

KEYS = {
    ("step_scheduler", "global_batch_size"): "global_batch_size", ("step_scheduler", "local_batch_size"): "local_batch_size",
    ("step_scheduler", "num_epochs"): "num_epochs", ("step_scheduler", "max_steps"): "max_steps",
    ("step_scheduler", "ckpt_every_steps"): "ckpt_every_steps", ("step_scheduler", "val_every_steps"): "val_every_steps",
    ("step_scheduler", "save_checkpoint_every_epoch"): "save_checkpoint_every_epoch",
    ("step_scheduler", "validate_on_checkpoint"): "validate_on_checkpoint",
    ("lr_scheduler", "lr_warmup_steps"): "lr_warmup_steps",
    ("distributed", "tp_size"): "tp", ("distributed", "cp_size"): "cp", ("distributed", "pp_size"): "pp",
}
"""(section, key) of the recipe YAML -> the setting it gives."""
FLAGS = frozenset({"save_checkpoint_every_epoch", "validate_on_checkpoint"})
OPTIONAL = frozenset({"num_epochs", "max_steps", "ckpt_every_steps", "val_every_steps", "lr_warmup_steps"})
"""Settings whose `null` means something (derive, default, off)."""


def read_yaml(path: str) -> tuple[dict, dict]:
    """(settings, origin of each) from one recipe YAML."""
    from trainsteps.configs.files import read_config

    config = read_config(path)
    settings, origins = {}, {}
    for (section, key), name in KEYS.items():
        table = config.data.get(section)
        if isinstance(table, dict) and key in table:
            settings[name] = _checked(name, table[key], f"{config.path.name} {section}.{key}")
            origins[name] = config.where(section)
    return settings, origins


def read_overrides(items) -> tuple[dict, dict]:
    """`--set step_scheduler.num_epochs=null`: Automodel's own `--step_scheduler.num_epochs null` overrides."""
    from trainsteps.configs.overrides import read_section_overrides

    return read_section_overrides(items, KEYS, _checked, ("am.error.override", "am.hint.override"))


def _checked(name: str, value, where: str):
    if value is None and name in OPTIONAL:
        return None
    ok = isinstance(value, bool) if name in FLAGS else isinstance(value, int) and not isinstance(value, bool)
    if not ok:
        raise InputError("am.error.key", "am.hint.key", where=where, value=repr(value)[:60])
    return value
