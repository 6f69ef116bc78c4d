"""Settings gathered from several files and flags, each with where it came from.

The first file that sets a key wins; a later file with a different value is a `Conflict` (both sources are
reported). A command-line flag the user typed overrides every file and is recorded as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainsteps.errors import InputError
from trainsteps.numbers import to_kind


@dataclass(frozen=True, slots=True)
class Setting:
    """One value and its origin."""

    key: str
    """RunSpec field or wrapper option name."""
    value: Any
    """The value as read."""
    origin: str
    """`file.yaml:12`, `--flag`, `launch: torchrun ...` or `default (...)`."""


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two sources disagree about one key."""

    key: str
    kept: Setting
    """The value used."""
    other: Setting
    """The value set aside."""


@dataclass(slots=True)
class Settings:
    """Everything the config files and flags said, by key."""

    values: dict[str, Setting] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    overridden: list[Conflict] = field(default_factory=list)
    """File values replaced by a flag the user typed."""
    ignored: list[tuple[str, str]] = field(default_factory=list)
    """(key, origin) of keys no rule understands (likely typos or another tool's options)."""
    unused: list[tuple[str, str]] = field(default_factory=list)
    """(key, origin) of known keys that do not change any count (learning rate, LoRA rank, ...)."""

    def put(self, key: str, value: Any, origin: str) -> None:
        new = Setting(key, value, origin)
        old = self.values.get(key)
        if old is None:
            self.values[key] = new
        elif not _same(old.value, value):
            self.conflicts.append(Conflict(key, old, new))

    def force(self, key: str, value: Any, origin: str) -> None:
        old = self.values.get(key)
        if old is not None and not _same(old.value, value):
            self.overridden.append(Conflict(key, Setting(key, value, origin), old))
        self.values[key] = Setting(key, value, origin)

    def file_key(self, key: str, value: Any, origin: str, prefix: str, rule_keys, known) -> None:
        """Sort a wrapper's own config key: an input of its rules (kept as `prefix.key`), a key it has that does not
        change the step count (listed as unused), or one it does not have (listed as ignored)."""
        if key in rule_keys:
            self.put(f"{prefix}.{key}", value, origin)
        elif key in known:
            self.unused.append((key, origin))
        else:
            self.ignored.append((key, origin))

    def get(self, key: str, default: Any = None) -> Any:
        setting = self.values.get(key)
        return default if setting is None else setting.value

    def origin(self, key: str) -> str | None:
        setting = self.values.get(key)
        return None if setting is None else setting.origin

    def whole(self, key: str, default: Any = None, minimum: int | None = 1) -> int | None:
        """The value of `key` as a whole number (None stays None); a word, or a value below `minimum`, is an error
        naming the key (the CLI adds the file and line it came from)."""
        value = self.get(key)
        value = default if value is None else value  # `key: null` in YAML is the same as leaving it out
        if value is None:
            return None
        number = to_number(value, int, key)
        if minimum is not None and number < minimum:
            which = "input.positive_int" if minimum == 1 else "input.non_negative"
            raise InputError(which, which.replace("input.", "input.hint."), name=_name(key), value=number, setting=key)
        return number

    def real(self, key: str, default: Any = None) -> float | None:
        """The value of `key` as a float (None stays None); a word is an error naming the key."""
        value = self.get(key)
        value = default if value is None else value
        return None if value is None else to_number(value, float, key)

    def text(self, key: str, default: str | None = None) -> str | None:
        """The value of `key` as text (None stays None); a number, list or mapping is an error naming the key."""
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, str):
            return value
        raise InputError("configs.error.not_text_value", "configs.hint.not_text_value", name=_name(key), found=_kind(value), setting=key)

    def names(self, key: str) -> list[str]:
        """A list of names written as `a, b` or as a YAML list of strings; anything else is an error naming the key."""
        value = self.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [n.strip() for n in value.split(",") if n.strip()]
        if isinstance(value, list) and all(isinstance(n, str) for n in value):
            return [n.strip() for n in value if n.strip()]
        raise InputError("configs.error.not_names", "configs.hint.not_names", name=_name(key), found=_kind(value), setting=key)

    def put_number(self, key: str, value: Any, origin: str, kind: type = int, written: str | None = None) -> None:
        """`put` after the checked conversion; a bad value is reported at `origin` (file:line) under the name the file
        gave it (`written`, e.g. accelerate's `num_processes` for world_size)."""
        try:
            number = to_number(value, kind, written or key)
        except InputError as exc:
            exc.origin = exc.origin or origin
            raise
        self.put(key, number, origin)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def to_dict(self) -> dict:
        return {
            "settings": {k: {"value": s.value, "from": s.origin} for k, s in self.values.items()},
            "conflicts": [{"key": c.key, "used": c.kept.value, "used_from": c.kept.origin, "other": c.other.value, "other_from": c.other.origin}
                          for c in self.conflicts],
            "overridden_by_flags": [{"key": c.key, "flag": c.kept.origin, "file_value": c.other.value, "file": c.other.origin} for c in self.overridden],
            "ignored_keys": [{"key": k, "from": o} for k, o in self.ignored],
        }


def to_number(value: Any, kind: type, key: str) -> int | float:
    """`value` (a YAML number or a string such as "3.0e-5" or "1,047") as `kind`; a word, a list, NaN, infinity or a
    fraction where a whole number is meant is an error naming `key` (the CLI adds the file and line)."""
    return to_kind(value, kind, _name(key), key)


def _kind(value: Any) -> str:
    return {bool: "true/false", int: "number", float: "number", dict: "mapping", list: "list"}.get(type(value), type(value).__name__)


def _name(key: str) -> str:
    """`lf.val_size` -> `val_size`: the name the user wrote."""
    return key.split(".", 1)[-1]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b  # exact for an int and a float of any size (float(10**400) would overflow)
    return a == b
