"""`--set section.key=value`: the stacks' own `--section.key value` overrides (torchtitan, NeMo Automodel), read one way."""

from __future__ import annotations

from trainsteps.errors import InputError


def read_section_overrides(items, keys: dict, checked, error: tuple[str, str]) -> tuple[dict, dict]:
    """Settings and their origins from `--set` items; `keys` maps (section, key) to a setting, `checked(name, value,
    where)` checks a value, and `error` is the (message, hint) ids of an item that names no known key."""
    settings, origins = {}, {}
    for item in items or ():
        key, sep, text = str(item).partition("=")
        section, _, name = key.strip().lstrip("-").partition(".")
        target = keys.get((section, name))
        if not sep or target is None:
            raise InputError(*error, item=str(item)[:80], known=", ".join(f"{s}.{k}" for s, k in keys))
        settings[target] = checked(target, override_value(text.strip()), f"--set {key.strip()}")
        origins[target] = "--set"
    return settings, origins


def override_value(text: str):
    """A `--set` value as the stacks' own CLIs read it: true/false, none/null, a number, else the text."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    from trainsteps.numbers import normalize

    for kind in (int, float):
        try:
            return kind(normalize(text))
        except ValueError:
            continue
    return text
