"""Settings of the RL stacks planned by `planners.rl_stacks` (slime, AReaL, open-instruct), from their own words:

- a launch line: `python train.py --rollout-batch-size 32 --n-samples-per-prompt 8 ...` (slime, argparse flags),
  `python open_instruct/grpo_fast.py --total_episodes 10000 ...`, or AReaL's
  `python -m areal.launcher.local gsm8k_grpo.py --config grpo.yaml actor.ppo_n_minibatches=2`;
- a YAML config (AReaL's nested experiment config; open-instruct's flat one), flattened to dotted keys;
- `--set key=value` overrides.

Flags keep their own spelling minus the dashes, with `-` read as `_` (`--rollout-batch-size` -> `rollout_batch_size`);
a flag without a value is true; a flag with several values (`--num_learners_per_node 4 4`) keeps them all.
"""

from __future__ import annotations

import shlex

from trainsteps.errors import InputError

LAUNCH_WORDS = {"slime": ("train.py", "train_async.py"), "open-instruct": ("grpo_fast.py", "open_instruct.grpo_fast"),
                "areal": ("areal.launcher", "areal/"), "trl-async-grpo": ("async_grpo",), "prime-rl": ("rl", "prime_rl"),
                "roll": ("start_rlvr_pipeline.py", "start_agentic_pipeline.py")}
"""Words of a launch line that start each stack (slime's scripts also need one of its own flags, SLIME_FLAGS)."""
SLIME_FLAGS = ("--rollout-batch-size", "--n-samples-per-prompt", "--num-rollout")


def stack_of_launch(line: str) -> str | None:
    """The stack a launch line starts, or None."""
    words = _words(line)
    if any(word.endswith(LAUNCH_WORDS["open-instruct"]) for word in words):
        return "open-instruct"
    if any(word.startswith(LAUNCH_WORDS["areal"]) or "areal.launcher" in word for word in words):
        return "areal"
    if any(word.endswith(LAUNCH_WORDS["roll"]) for word in words):
        return "roll"
    if any("async_grpo" in word for word in words):
        return "trl-async-grpo"
    if any(word in ("rl", "prime_rl.rl", "prime_rl/rl.py") for word in words) and any(w.endswith(".toml") or w.startswith("@") for w in words):
        return "prime-rl"  # `uv run rl @ rl.toml`
    if any(word.endswith(LAUNCH_WORDS["slime"]) for word in words) and any(word.split("=")[0] in SLIME_FLAGS for word in words):
        return "slime"
    return None


def stack_of_config(data: object) -> str | None:
    """AReaL's experiment YAML nests `gconfig` and `actor` beside `train_dataset`; TRL's AsyncGRPOConfig is flat, with
    keys of its own (ASYNC_GRPO_KEYS)."""
    if isinstance(data, dict) and isinstance(data.get("gconfig"), dict) and isinstance(data.get("actor"), dict):
        return "areal"
    if isinstance(data, dict) and "num_return_sequences_in_group" in data or \
            isinstance(data, dict) and isinstance(data.get("actor_train"), dict) and isinstance(data.get("actor_infer"), dict):
        return "roll"
    if isinstance(data, dict) and any(key in data for key in ASYNC_GRPO_KEYS):
        return "trl-async-grpo"
    return None


ASYNC_GRPO_KEYS = ("max_staleness", "weight_sync_steps", "vllm_server_base_url", "max_inflight_tasks")
"""Keys only TRL's AsyncGRPOConfig has (a flat TRL config)."""


class StackSettings:
    """Dotted setting -> value, and where each came from (`--launch`, a file and line, `--set`)."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.origins: dict[str, str] = {}
        self.script: str | None = None
        """The script the launch line runs (slime: train.py or train_async.py)."""
        self.toml_files: list[str] = []
        """`@ rl.toml` / `@rl.toml` on a prime-rl launch line."""

    def put(self, key: str, value: object, origin: str) -> None:
        self.values[key] = value
        self.origins[key] = origin

    def read_launch(self, line: str) -> None:
        """Flags (`--key value`, `--key=value`, `--flag`) and dotted `key=value` words (AReaL, Hydra style)."""
        words = _words(line)
        i = 0
        while i < len(words):
            word = words[i]
            if word.lower().endswith(".toml") and (i and words[i - 1] == "@" or word.startswith("@")):
                self.toml_files.append(word.lstrip("@"))
            if word.endswith(".py"):  # the script's own flags follow it; a wrapper's (mason.py, ray job) came before
                self.script = word.rsplit("/", 1)[-1]
                for key in [k for k, origin in self.origins.items() if origin == "--launch"]:
                    del self.values[key], self.origins[key]
            if word.startswith("--") and len(word) > 2:
                name, eq, inline = word[2:].partition("=")
                values = [inline] if eq else []
                while not eq and i + 1 < len(words) and not words[i + 1].startswith("--") and "=" not in words[i + 1]:
                    i += 1
                    values.append(words[i])
                key = name.replace("-", "_")
                self.put(key, True if not values else values[0] if len(values) == 1 else values, "--launch")
            elif "=" in word and not word.startswith("-") and "/" not in word.split("=")[0]:
                key, value = word.split("=", 1)
                if key.replace("_", "").replace(".", "").isalnum():
                    self.put(key.lstrip("+"), value, "--launch")
            i += 1

    def read_file(self, path: str) -> None:
        from trainsteps.configs.files import read_config, read_toml

        if str(path).lower().endswith(".toml"):  # prime-rl's rl.toml
            name = str(path).rsplit("/", 1)[-1]
            for key, value in _flatten(read_toml(path)):
                self.put(key, value, f"{name} [{key.rpartition('.')[0]}]" if "." in key else name)
            return
        config = read_config(path)
        for key, value in _flatten(config.data):
            self.put(key, value, config.where(key.split(".")[0]))

    def read_overrides(self, words) -> None:
        for word in words or ():
            if "=" not in word:
                raise InputError("rl.error.set", "rl.hint.set", value=word)
            key, value = word.split("=", 1)
            self.put(key.strip().lstrip("+-").replace("-", "_") if key.strip().startswith("--") else key.strip().lstrip("+"),
                     value, "--set")

    def config_paths(self) -> list[str]:
        """`--config FILE` on the launch line (AReaL), or prime-rl's `@ rl.toml`, when the file is here."""
        import os

        paths = [self.values.get("config"), *self.toml_files]
        return [path for path in paths if isinstance(path, str) and os.path.isfile(path)]

    def whole(self, key: str, default=None):
        return _typed(self, key, int, default)

    def real(self, key: str, default=None):
        return _typed(self, key, float, default)

    def flag(self, key: str, default: bool = False) -> bool:
        return _typed(self, key, bool, default)

    def text(self, key: str, default=None):
        value = _resolved(self, key)
        return default if value is None else str(value)


def _resolved(settings: StackSettings, key: str, depth: int = 0):
    """A value, with OmegaConf's `${other.key}` (AReaL's YAML) replaced by the other key's value."""
    value = settings.values.get(key)
    if isinstance(value, str) and value.startswith("${") and value.endswith("}") and depth < 8:
        return _resolved(settings, value[2:-1], depth + 1)
    return value


def stack_of_toml(data: dict) -> str | None:
    """prime-rl's rl.toml has `[orchestrator]` or `[trainer]` tables; torchtitan's job config has `[job]`/`[training]`."""
    if isinstance(data.get("orchestrator"), dict) or (isinstance(data.get("trainer"), dict) and "training" not in data):
        return "prime-rl"
    return None


def _typed(settings: StackSettings, key: str, kind, default):
    value = _resolved(settings, key)
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null", "")):
        return default
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text in ("true", "1")
        if kind is int:
            if isinstance(value, list):
                return sum(int(v) for v in value)  # --num_learners_per_node 4 4: learners over all nodes
            number = float(value) if not isinstance(value, int) else value
            if number != int(number):
                raise ValueError(value)
            return int(number)
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(value)
        return number
    except (TypeError, ValueError, OverflowError):
        raise InputError("rlstack.error.value", "rlstack.hint.value", key=key, value=str(value)[:60],
                         kind={int: "whole number", float: "number", bool: "true or false"}[kind],
                         origin=settings.origins.get(key, "")) from None


def _flatten(data, prefix: str = ""):
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _flatten(value, name + ".")
        else:
            yield name, value


def _words(line: str) -> list[str]:
    from trainsteps.configs.launch import join_continued_lines

    try:
        return shlex.split(join_continued_lines(line or ""), comments=True)
    except ValueError:
        raise InputError("rlstack.error.launch", "rlstack.hint.launch") from None
