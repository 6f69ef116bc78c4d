"""HF `TrainingArguments` as a JSON/YAML file (what `HfArgumentParser.parse_json_file`/`parse_yaml_file` reads,
or `training_args.json` from `args.to_json_string()`), and a checkpoint's `trainer_state.json`.

The keys that change step counts map onto `RunSpec` fields of the same name; other TrainingArguments keys are
known and unused; anything else is reported as ignored.
"""

from __future__ import annotations

from trainsteps.configs.files import ConfigFile
from trainsteps.configs.known_keys import TRAINING_ARGUMENTS
from trainsteps.configs.settings import Settings

STEP_KEYS = (
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps", "dataloader_drop_last",
    "warmup_ratio", "warmup_steps", "logging_strategy", "logging_steps", "logging_first_step", "eval_strategy", "eval_steps",
    "eval_delay", "save_strategy", "save_steps", "metric_for_best_model", "greater_is_better",
)
ALIASES = {"evaluation_strategy": "eval_strategy", "per_gpu_train_batch_size": "per_device_train_batch_size"}
_STRATEGY_KEYS = ("logging_strategy", "eval_strategy", "save_strategy")


def read_training_arguments(cfg: ConfigFile, settings: Settings, extra_known: frozenset = frozenset()) -> list[str]:
    """Put every step-relevant TrainingArguments key of `cfg` into `settings`; return the keys left for the caller."""
    rest = []
    for key, value in cfg.data.items():
        name = ALIASES.get(key, key)
        if value is None and (name in STEP_KEYS or key in TRAINING_ARGUMENTS):  # a dump's "unset" (per_gpu_train_batch_size: null)
            settings.unused.append((key, cfg.where(key)))
        elif name in STEP_KEYS:
            settings.put(name, _clean(name, value), cfg.where(key))
        elif key == "accelerator_config" and isinstance(value, dict):
            for sub in ("split_batches", "even_batches"):
                if sub in value:
                    settings.put(sub, bool(value[sub]), cfg.where(key))
        elif key == "deepspeed" and value:
            settings.put("deepspeed_file", value, cfg.where(key))
        elif key in TRAINING_ARGUMENTS:
            settings.unused.append((key, cfg.where(key)))
        elif key in extra_known:
            rest.append(key)
        else:
            rest.append(key)
    return rest


def _clean(name: str, value):
    if name in _STRATEGY_KEYS and isinstance(value, str):
        return value.lower().rsplit(".", 1)[-1]  # "IntervalStrategy.STEPS" in some dumps
    if name in _STRATEGY_KEYS and value is False:
        return "no"  # YAML 1.1 reads a bare `no` as false
    return value


def read_hf_file(cfg: ConfigFile, settings: Settings) -> None:
    for key in read_training_arguments(cfg, settings):
        settings.ignored.append((key, cfg.where(key)))


def read_trainer_state(cfg: ConfigFile, settings: Settings) -> None:
    """A checkpoint's state: resume from its global step; its max_steps and batch size are checked against the plan.
    Its logging/eval/save steps are the intervals a resumed run keeps (transformers 4.32+), whatever the arguments say."""
    data = cfg.data
    if isinstance(data.get("global_step"), int):
        settings.put("resume_from_step", data["global_step"], cfg.where("global_step"))
    if isinstance(data.get("max_steps"), int):
        settings.put("state_max_steps", data["max_steps"], cfg.where("max_steps"))
    if isinstance(data.get("train_batch_size"), int):
        settings.put("per_device_train_batch_size", data["train_batch_size"], cfg.where("train_batch_size"))
    for name in ("logging_steps", "eval_steps", "save_steps"):
        if isinstance(data.get(name), int) and not isinstance(data.get(name), bool):
            settings.put("checkpoint_" + name, data[name], cfg.where(name))


def looks_like_trainer_state(data: dict) -> bool:
    return "log_history" in data and "global_step" in data


def looks_like_training_arguments(data: dict) -> bool:
    keys = set(data)
    return bool(keys) and len(keys & TRAINING_ARGUMENTS) >= max(1, len(keys) // 2)
