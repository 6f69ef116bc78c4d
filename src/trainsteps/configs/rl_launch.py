"""RL launch lines and config files -> one flat mapping of dotted keys, each with where it came from.

verl and EasyR1 are configured with Hydra/OmegaConf: a YAML file plus `key=value` words on the command line
(`data.train_batch_size=256`, `+trainer.x=1` adds a key, `++key=v` adds or overrides, `~key` deletes it).
OpenRLHF uses argparse flags, `--micro_train_batch_size 8` (up to 0.9) or the nested `--train.batch_size 128` (2026).
The line is split like a shell would and never run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

import yaml

from trainsteps.configs.launch import join_continued_lines
from trainsteps.errors import InputError

ENTRY_POINTS = {
    "verl.trainer.main_ppo": "verl",
    "verl.trainer.main_ppo_v0": "verl",
    "verl.trainer.sft_trainer": "verl",
    "verl.trainer.fsdp_sft_trainer": "verl",
    "recipe.dapo.main_dapo": "verl",
    "verl.trainer.main": "easyr1",
    "openrlhf.cli.train_ppo_ray": "openrlhf",
    "openrlhf.cli.train_ppo": "openrlhf",
}
"""`python -m MODULE` -> the framework whose rules apply."""

_SHELL_VAR = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")


@dataclass(slots=True)
class RLConfig:
    """Settings read from an RL launch line and its files."""

    framework: str | None = None
    """`verl`, `easyr1`, `openrlhf`, or None when nothing says."""
    entry: str | None = None
    """The module or script started (`verl.trainer.main_ppo`, `recipe.dapo.main_dapo`, ...)."""
    values: dict = field(default_factory=dict)
    """Dotted key -> value (YAML scalars typed: int, float, bool, None, str, list)."""
    origins: dict = field(default_factory=dict)
    """Dotted key -> where it was set (`launch line`, `grpo.yaml:12`)."""
    deleted: set = field(default_factory=set)
    """Keys removed with `~key`."""
    env: dict = field(default_factory=dict)
    """Environment variables set on the line (`CUDA_VISIBLE_DEVICES=0,1`)."""
    shell_values: set = field(default_factory=set)
    """Keys whose value uses a shell variable (`$BS`): an error only if a count needs them."""

    def get(self, key: str, default=None):
        return self.values.get(key, default)


def scalar(text: str):
    """A Hydra override value as OmegaConf reads it: null, true/false, numbers, [lists], quoted strings."""
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except (yaml.YAMLError, ValueError):  # ValueError: an int past Python's 4,300 digits; checked where it is read
        return text
    return value if isinstance(value, (int, float, bool, list, str)) or value is None else text


def read_launch(line: str, config: RLConfig | None = None) -> RLConfig:
    """Parse `python3 -m verl.trainer.main_ppo data.train_batch_size=256 ...` (or an OpenRLHF/EasyR1 line)."""
    config = config or RLConfig()
    try:
        words = shlex.split(join_continued_lines(line), comments=True)
    except ValueError as exc:
        raise InputError("configs.error.launch", "configs.hint.launch", line=line[:200], detail=str(exc)) from None
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-m" and i + 1 < len(words):
            _entry(config, words[i + 1])
            i += 2
            continue
        if word.endswith(".py") and not config.entry:
            _entry(config, word.removesuffix(".py").replace("/", ".").lstrip("."))
        elif word.startswith("--"):
            i = _flag(config, words, i)
            continue
        elif word.startswith("~"):
            config.deleted.add(word[1:].split("=")[0])
            config.values.pop(word[1:].split("=")[0], None)
        elif "=" in word and not config.entry and word.split("=", 1)[0].isupper():
            name, value = word.split("=", 1)
            config.env[name] = value
        elif "=" in word and (config.entry or "." in word.split("=", 1)[0]):
            key, value = word.split("=", 1)
            _put(config, key.lstrip("+"), value, "launch line")
        i += 1
    return config


def read_yaml(path: str, config: RLConfig | None = None) -> RLConfig:
    """A verl/EasyR1 YAML (nested keys become dotted) or an OpenRLHF args YAML; earlier values are kept if the line
    set them (the command line wins over the file, as in Hydra). The file goes through the guarded reader of every
    config (size cap, alias bombs, nesting depth, UTF-8)."""
    from trainsteps.configs.files import read_config

    config = config or RLConfig()
    parsed = read_config(path)
    lines = _key_lines(parsed.path.read_text(encoding="utf-8-sig"))
    for key, value in _flatten(parsed.data):
        if key.startswith(("hydra.", "defaults")) or key in config.deleted:
            continue
        if key not in config.values:
            config.values[key] = value
            config.origins[key] = f"{parsed.path.name}:{lines.get(key.rsplit('.', 1)[-1], '?')}"
    if config.framework is None:
        config.framework = "easyr1" if any(k.startswith("worker.") for k in config.values) else "verl"
    return config


def _entry(config: RLConfig, module: str) -> None:
    config.entry = module
    if module in ENTRY_POINTS:
        config.framework = ENTRY_POINTS[module]
    elif "dapo" in module and "main" in module:  # recipe/dapo/main_dapo.py, recipe.dapo.src.main_dapo
        config.framework = "verl"
    elif module.startswith("openrlhf."):
        config.framework = "openrlhf"


def _flag(config: RLConfig, words: list[str], i: int) -> int:
    """`--name value`, `--name=value` or a bare `--flag` (True); OpenRLHF's nested `--train.batch_size 128` too."""
    name, eq, value = words[i][2:].partition("=")
    if eq:
        _put(config, name, value, "launch line")
        return i + 1
    if i + 1 < len(words) and not words[i + 1].startswith("--"):
        _put(config, name, words[i + 1], "launch line")
        return i + 2
    config.values[name] = True
    config.origins[name] = "launch line"
    return i + 1


def _put(config: RLConfig, key: str, text: str, origin: str) -> None:
    if _SHELL_VAR.search(text):
        config.shell_values.add(key)
        config.values[key], config.origins[key] = text, origin
        return
    config.shell_values.discard(key)
    config.values[key] = scalar(text)
    config.origins[key] = origin


def _flatten(data: dict, prefix: str = ""):
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _flatten(value, dotted + ".")
        else:
            yield dotted, value


def _key_lines(text: str) -> dict:
    lines = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = re.match(r"\s*([A-Za-z_][\w.]*)\s*:", line)
        if match:
            lines.setdefault(match.group(1), number)
    return lines
