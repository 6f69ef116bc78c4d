"""litgpt's config YAML (`litgpt finetune_lora --config lora.yaml`, config_hub/) and its launch line
(`litgpt pretrain --config c.yaml --train.max_tokens 1e9 --devices 8`) -> the settings of frameworks/litgpt.py, with
where each came from. The YAML is read by the guarded reader (configs/files.py)."""

from __future__ import annotations

import shlex

from trainsteps.errors import InputError

KEYS = {
    ("train", "global_batch_size"): "global_batch_size", ("train", "micro_batch_size"): "micro_batch_size",
    ("train", "epochs"): "epochs", ("train", "max_steps"): "max_steps", ("train", "max_tokens"): "max_tokens",
    ("train", "max_seq_length"): "max_seq_length", ("train", "lr_warmup_steps"): "lr_warmup_steps",
    ("train", "lr_warmup_fraction"): "lr_warmup_fraction", ("train", "save_interval"): "save_interval",
    ("eval", "interval"): "eval_interval", ("", "devices"): "devices", ("", "num_nodes"): "num_nodes",
}
"""(section, key) of the YAML or launch line (section "" = top level) -> the setting it gives."""
COMMANDS = {"finetune": "lora", "finetune_lora": "lora", "finetune_full": "full", "finetune_adapter": "adapter",
            "finetune_adapter_v2": "adapter_v2", "pretrain": "pretrain"}
"""`litgpt SUBCOMMAND` -> the script it runs (`litgpt finetune` is finetune_lora)."""


def read_yaml(path: str) -> tuple[dict, dict]:
    """(settings, origin of each) from one litgpt config; `script` is guessed from its keys (lora_r: LoRA; max_tokens or
    tokenizer_dir: pretraining)."""
    from trainsteps.configs.files import read_config

    config = read_config(path)
    settings, origins = {}, {}
    for (section, key), name in KEYS.items():
        table = config.data if not section else config.data.get(section)
        if isinstance(table, dict) and key in table:
            settings[name] = _checked(name, table[key], f"{config.path.name} {section + '.' if section else ''}{key}")
            origins[name] = config.where(section or key)
    data = config.data
    train = data.get("train") if isinstance(data.get("train"), dict) else {}
    if train.get("max_tokens") is not None or "tokenizer_dir" in data or "initial_checkpoint_dir" in data:
        settings["script"], origins["script"] = "pretrain", config.path.name
    elif "lora_r" in data:
        settings["script"], origins["script"] = "lora", config.path.name
    return settings, origins


def read_launch(line: str) -> tuple[list[str], dict, dict]:
    """(config paths, settings, origins) from `litgpt SUBCOMMAND [CHECKPOINT] [--config PATH] [--train.key value ...]`."""
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise InputError("lg.error.launch", "lg.hint.launch", line=line[:120], why=str(error)) from None
    if "litgpt" not in words or words.index("litgpt") + 1 >= len(words) or words[words.index("litgpt") + 1] not in COMMANDS:
        raise InputError("lg.error.launch", "lg.hint.launch", line=line[:120], why=", ".join(COMMANDS))
    start = words.index("litgpt")
    settings, origins, configs = {"script": COMMANDS[words[start + 1]]}, {"script": "--launch"}, []
    rest = words[start + 2:]
    known = {f"{section}.{key}" if section else key: name for (section, key), name in KEYS.items()}
    i = 0
    while i < len(rest):
        word = rest[i]
        if not word.startswith("--"):
            i += 1
            continue
        key, sep, value = word[2:].partition("=")
        if not sep:
            value, i = (rest[i + 1] if i + 1 < len(rest) else ""), i + 1
        i += 1
        if key == "config":
            configs.append(value)
        elif key in known:
            from trainsteps.configs.overrides import override_value

            settings[known[key]] = _checked(known[key], override_value(value), f"--{key}")
            origins[known[key]] = "--launch"
    return configs, settings, origins


def read_overrides(items) -> tuple[dict, dict]:
    """`--set train.epochs=3`: litgpt's own `--train.epochs 3`."""
    from trainsteps.configs.overrides import read_section_overrides

    keys = {key: name for key, name in KEYS.items() if key[0]}
    return read_section_overrides(items, keys, _checked, ("lg.error.override", "lg.hint.override"))


def _checked(name: str, value, where: str):
    if value is None:
        return None
    if name == "lr_warmup_fraction":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif name == "max_tokens" and isinstance(value, float) and value.is_integer():  # `max_tokens: 3e12` is read as a float
        value, ok = int(value), True
    else:
        ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok:
        raise InputError("lg.error.key", "lg.hint.key", where=where, value=repr(value)[:60])
    return value
