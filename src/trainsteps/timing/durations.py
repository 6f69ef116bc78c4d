"""Durations as people type them (`4`, `4s`, `2.5m`, `1h30m`, SLURM `1-12:00:00`) and as people say them
(`4 h 20 min`, `3 d 4 h`; zh `4 小时 20 分`).

Pure functions: no I/O. `parse_duration` raises `InputError` (one line + hint, exit 2 in the CLI).
"""

from __future__ import annotations

import math

from trainsteps.errors import InputError
from trainsteps.patterns import lazy

_UNIT_SECONDS = {
    "": 1.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
    "ms": 0.001,
}
_PART = lazy(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*")
_CLOCK = lazy(r"^(?:(\d+)-)?(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?$")
MAX_SECONDS = 100 * 365 * 86400.0
"""Longest duration accepted (a century): anything longer is a typo."""


def parse_duration(text: str | float | int, option: str = "--step-time") -> float:
    """Seconds in `text`: a bare number is seconds; units s/m/min/h/d/ms may be chained (`1h30m`, `2.5m`);
    clock forms `MM:SS`, `HH:MM:SS` and SLURM's `D-HH:MM:SS` are read too.

    Raises InputError for anything unreadable, zero, negative, not finite or over a century."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _checked(float(text), str(text), option)
    raw = str(text).strip()
    if raw.startswith("-"):
        raise InputError("time.error.duration_positive", "time.hint.duration", option=option, value=raw)
    clock = _CLOCK.match(raw)
    if clock:
        days, a, b, c = clock.groups()
        if c is None:  # MM:SS
            seconds = int(a) * 60 + int(b)
        else:
            seconds = int(a) * 3600 + int(b) * 60 + float(c)
        return _checked(float(seconds + int(days or 0) * 86400), raw, option)
    total, pos = 0.0, 0
    while pos < len(raw):
        match = _PART.match(raw, pos)
        if not match or match.end() == pos:
            raise InputError("time.error.duration", "time.hint.duration", option=option, value=raw)
        number, unit = match.groups()
        if unit.lower() not in _UNIT_SECONDS:
            raise InputError("time.error.duration", "time.hint.duration", option=option, value=raw)
        total += float(number) * _UNIT_SECONDS[unit.lower()]
        pos = match.end()
    if pos == 0:
        raise InputError("time.error.duration", "time.hint.duration", option=option, value=raw)
    return _checked(total, raw, option)


def _checked(seconds: float, raw: str, option: str) -> float:
    if not math.isfinite(seconds) or seconds > MAX_SECONDS:
        raise InputError("time.error.duration", "time.hint.duration", option=option, value=raw)
    if seconds <= 0:
        raise InputError("time.error.duration_positive", "time.hint.duration", option=option, value=raw)
    return seconds


# (seconds, en, zh) from the largest unit down
_UNITS = ((86400, "d", "天"), (3600, "h", "小时"), (60, "min", "分"), (1, "s", "秒"))


def format_duration(seconds: float | None, lang: str = "en") -> str:
    """A duration as people say it: the two largest units, cut (not rounded) at the smaller one, as a clock reads.

    15,600 -> `4 h 20 min`; 15,288 -> `4 h 14 min`; 273,600 -> `3 d 4 h`; 90 -> `1 min 30 s`; 4 -> `4 s`;
    0.25 -> `0.25 s`.
    zh: `4 小时 20 分`, `3 天 4 小时`. None -> `?`."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    zh = lang == "zh"
    if seconds < 0:
        return "-" + format_duration(-seconds, lang)
    if seconds >= MAX_SECONDS:  # past a century: no one reads days and hours any more
        return f"{seconds / 86400:.3g} {'天' if zh else 'd'}"
    if seconds < 10:
        text = f"{seconds:.2f}".rstrip("0").rstrip(".")
        return f"{text} {'秒' if zh else 's'}"
    for index, (size, en_unit, zh_unit) in enumerate(_UNITS):
        if seconds < size:
            continue
        small = _UNITS[index + 1] if index + 1 < len(_UNITS) else None
        big = int(seconds // size)
        parts = [f"{big:,} {zh_unit if zh else en_unit}"]
        if small is not None:
            rest = int((seconds - big * size) // small[0])
            if rest:
                parts.append(f"{rest} {small[2] if zh else small[1]}")
        return " ".join(parts)
    return f"{seconds:.0f} {'秒' if zh else 's'}"


class Spoken:
    """Seconds (or a low–high range of seconds) that a message template formats in its own language:
    `{duration}` in en.py reads `4 h 20 min`, `{duration:zh}` in zh.py reads `4 小时 20 分`."""

    __slots__ = ("high", "low")

    def __init__(self, low: float, high: float | None = None):
        self.low, self.high = low, high

    def __format__(self, spec: str) -> str:
        lang = spec or "en"
        text = format_duration(self.low, lang)
        if self.high is None:
            return text
        high = format_duration(self.high, lang)
        return text if high == text else f"{text} – {high}"

    def __str__(self) -> str:
        return format(self)

    def __repr__(self) -> str:
        return f"Spoken({self.low!r}, {self.high!r})"
