"""One checked conversion for every number a user gives: command-line options, config values, the Python API.

`to_whole` and `to_real` accept what people write and what logs print (`1047`, `1,047`, `1_047`, full-width
`１０４７`, `3.0e-5`, `2.0` for a whole number) and refuse the rest with an `InputError` naming the setting:
booleans, NaN and infinity, fractions where a whole number is meant, words, lists and mappings. A number that is
already the right type returns at once, so the check costs next to nothing on the hot path.
"""

from __future__ import annotations

import math
import re
import unicodedata

from trainsteps.errors import InputError

_GROUPED = None  # 1,047 / 1,000,000.5: the thousands separators banners print; compiled when a comma is first seen
_SHOWN = 60  # characters of a bad value quoted back in the message


def to_whole(value: object, name: str, setting: str | None = None) -> int:
    """`value` as an int; a fraction, NaN, infinity or a word is an error naming `name`."""
    if type(value) is int:
        return value
    number = _number(value, name, setting, "number.hint.not_number_whole")
    if isinstance(number, int):
        return number
    _check_finite(number, value, name, setting)
    if not number.is_integer():
        raise InputError("number.error.not_whole", "number.hint.not_whole", name=name, value=_quote(value), setting=setting or name)
    return int(number)


def to_real(value: object, name: str, setting: str | None = None) -> float:
    """`value` as a finite float; NaN, infinity, an overflow or a word is an error naming `name`."""
    if type(value) is float and math.isfinite(value):
        return value
    number = _number(value, name, setting, "number.hint.not_number")
    try:
        number = float(number)
    except OverflowError:
        raise InputError("number.error.not_finite", "number.hint.not_finite", name=name, value=_quote(value),
                         setting=setting or name) from None
    _check_finite(number, value, name, setting)
    return number


def to_kind(value: object, kind: type, name: str, setting: str | None = None) -> int | float:
    """`to_whole` or `to_real` by `kind` (int or float)."""
    return to_whole(value, name, setting) if kind is int else to_real(value, name, setting)


def normalize(text: str) -> str:
    """`" １,０４７ "` -> `"1047"`: full-width forms folded, thousands separators removed (Python's own `1_047` is kept)."""
    text = unicodedata.normalize("NFKC", text).strip()
    if "," in text and _grouped().fullmatch(text):
        text = text.replace(",", "")
    return text


def _number(value: object, name: str, setting: str | None, hint: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError("number.error.not_number", hint, name=name, value=_quote(value), setting=setting or name)
    if not isinstance(value, str):
        return value
    text = normalize(value)
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise InputError("number.error.not_number", hint, name=name, value=_quote(value),
                         setting=setting or name) from None


def _check_finite(number: float, value: object, name: str, setting: str | None) -> None:
    if not math.isfinite(number):
        raise InputError("number.error.not_finite", "number.hint.not_finite", name=name, value=_quote(value), setting=setting or name)


def _grouped() -> re.Pattern:
    global _GROUPED
    if _GROUPED is None:
        _GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
    return _GROUPED


def _quote(value: object) -> str:
    """The bad value as the message shows it: short, so a 10,000-character string or a deep mapping stays one line."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"a {value.bit_length()}-bit number"  # str() of a 5,000-digit int is refused by Python itself
    if isinstance(value, (dict, list, tuple, set)):  # never repr a container: a YAML alias bomb expands without end
        return "a mapping" if isinstance(value, dict) else "a list"
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
