"""A DeepSpeed JSON config merged into the run: its batch keys, when they are numbers and not "auto".

HF Trainer fills "auto" from TrainingArguments and refuses a number that disagrees; a disagreement between
the DeepSpeed file and the training settings therefore stops the plan with transformers' own mismatch message.
"""

from __future__ import annotations

from trainsteps.configs.files import ConfigFile
from trainsteps.configs.settings import Settings

_MAP = {"train_micro_batch_size_per_gpu": "per_device_train_batch_size", "gradient_accumulation_steps": "gradient_accumulation_steps"}


def read_deepspeed(cfg: ConfigFile, settings: Settings) -> None:
    for key, field in _MAP.items():
        value = cfg.data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            settings.put(field, value, cfg.where(key))
            settings.put(f"deepspeed_{key}", value, cfg.where(key))  # checked against the Trainer's value at the end
    total = cfg.data.get("train_batch_size")
    if isinstance(total, int) and not isinstance(total, bool):
        settings.put("deepspeed_train_batch_size", total, cfg.where("train_batch_size"))


def looks_like_deepspeed(data: dict) -> bool:
    """DeepSpeed's `fp16` / `bf16` are sections (`{"enabled": ...}`); a trainer config's `bf16: auto` or `bf16: true`
    (an Axolotl YAML, which needs no output_dir) is not one."""
    marked = any(k in data for k in ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size")) or \
        any(isinstance(data.get(k), dict) for k in ("fp16", "bf16"))
    return marked and not any(k in data for k in ("per_device_train_batch_size", "output_dir", "model_name_or_path", "base_model"))
