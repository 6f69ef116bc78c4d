"""Every numeric option of every command reads its value through `trainsteps.numbers`: `1,047`, `1_047` and
full-width digits are accepted, NaN and infinity refused, as in config files and the Python API.

`check_numbers(command)` swaps each option's click number type (int, float, IntRange, FloatRange) for a subclass
whose `convert` parses the text first and then keeps click's own range check and help text.
"""

from __future__ import annotations

import click

from trainsteps.numbers import to_kind

_KINDS = ((click.types.IntParamType, int), (click.types.FloatParamType, float))
_SUBCLASSES: dict[type, type] = {}


class _Checked:
    _kind: type = int

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            value = to_kind(value, self._kind, _option_name(param))
        return super().convert(value, param, ctx)


def check_numbers(command: click.Command) -> click.Command:
    """Make every number option of `command` (and of its subcommands) read through the checked conversion; once."""
    if getattr(command, "_trainsteps_numbers", False):
        return command
    for param in command.params:
        param.type = _checked(param.type)
    command._trainsteps_numbers = True
    return command


def _checked(param_type: click.ParamType) -> click.ParamType:
    if isinstance(param_type, _Checked):
        return param_type
    for base, kind in _KINDS:
        if isinstance(param_type, base):
            cls = type(param_type)
            sub = _SUBCLASSES.get(cls)
            if sub is None:
                sub = _SUBCLASSES[cls] = type(f"Checked{cls.__name__}", (_Checked, cls), {"_kind": kind})
            new = object.__new__(sub)
            new.__dict__.update(param_type.__dict__)
            return new
    if isinstance(param_type, click.Tuple):  # nargs / tuple types hold one type per item
        param_type.types = [_checked(t) for t in param_type.types]
    return param_type


def _option_name(param) -> str:
    opts = getattr(param, "opts", None) or []
    return max(opts, key=len) if opts else (getattr(param, "name", None) or "value")
