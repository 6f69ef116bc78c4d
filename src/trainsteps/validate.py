"""Checks on user settings shared by every Trainer-based framework: one clear error each."""

from __future__ import annotations

from operator import attrgetter, gt

from trainsteps.errors import InputError
from trainsteps.numbers import to_real, to_whole
from trainsteps.spec import RunSpec

_POSITIVE = ("per_device_train_batch_size", "gradient_accumulation_steps", "world_size",
             "tensor_parallel_size", "context_parallel_size", "sequence_parallel_size")
# Far beyond any real run; larger values are typos and would only exhaust memory.
_LIMITS = {"num_examples": 10**13, "max_steps": 10**10, "num_train_epochs": 10**6, "per_device_train_batch_size": 10**7,
           "gradient_accumulation_steps": 10**7, "world_size": 10**7, "resume_from_step": 10**10, "logging_steps": 10**10,
           "save_steps": 10**10, "eval_steps": 10**10, "warmup_steps": 10**10, "eval_delay": 10**10,
           "trainable_parameters": 10**15, "dataset_tokens": 10**16, "seq_length": 10**9, "tensor_parallel_size": 10**7,
           "context_parallel_size": 10**7, "sequence_parallel_size": 10**7}
_LIMITED_VALUES = attrgetter(*_LIMITS)
_LIMIT_VALUES = tuple(_LIMITS.values())
_POSITIVE_VALUES = attrgetter(*_POSITIVE)
_NON_NEGATIVE = ("warmup_ratio", "warmup_steps", "logging_steps", "save_steps", "eval_steps", "eval_delay", "trainable_parameters")
_NON_NEGATIVE_VALUES = attrgetter(*_NON_NEGATIVE)
_NONE_IS_ZERO = {None: 0}


def _zero_for_none(values: tuple) -> map:
    """The values with None as 0, in C (`dict.get(v, v)` is v for every number)."""
    return map(_NONE_IS_ZERO.get, values, values)


_STRATEGIES = {"logging_strategy": ("steps", "epoch", "no"), "eval_strategy": ("steps", "epoch", "no"),
               "save_strategy": ("steps", "epoch", "best", "no")}


def _kinds() -> tuple[tuple[str, type, bool], ...]:
    """(RunSpec field, int | float | bool | str, whether None is allowed), from its annotations."""
    types = {"int": int, "float": float, "bool": bool, "str": str}
    out = []
    for name, kind in RunSpec.__annotations__.items():  # the record's fields, in order (no `dataclasses` import)
        parts = [part.strip() for part in str(kind).split("|")]
        out.append((name, types[parts[0]], "None" in parts))
    return tuple(out)


_KINDS = _kinds()
_ALL_VALUES = attrgetter(*(name for name, _, _ in _KINDS))
_FLOAT_FIELDS = tuple(i for i, (_, kind, _) in enumerate(_KINDS) if kind is float)
_LAYOUTS: dict[tuple, tuple[int, ...]] = {}  # layout of value types already checked -> int fields to make floats
_EXACT = 2**53  # ints up to this are floats exactly; beyond it `to_real` decides (and refuses an overflow)
_WORDS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def check_fields(spec: RunSpec) -> RunSpec:
    """Bring every field to its type through the one checked conversion (`trainsteps.numbers`), as the command line
    does: `"1,047"` -> 1047, `2.0` -> 2; NaN, infinity, fractions for whole numbers, words, lists and mappings are
    refused naming the field.

    Why two paths: `plan()` runs this on every call, and most calls repeat a few layouts of value types (defaults,
    `num_train_epochs=3` given as an int). A layout already checked is remembered with the fields it turns from int
    to float, so a repeat costs one tuple of types, a dict lookup and the NaN check of the float fields."""
    values = _ALL_VALUES(spec)
    layout = tuple(map(type, values))
    ints_to_float = _LAYOUTS.get(layout)
    if ints_to_float is None:
        return _check_each_field(spec, layout)
    for i in ints_to_float:
        if not -_EXACT <= values[i] <= _EXACT:
            return _check_each_field(spec, layout)
        setattr(spec, _KINDS[i][0], float(values[i]))
    for i in _FLOAT_FIELDS:
        value = values[i]
        if type(value) is float and value - value != 0.0:  # NaN or infinity
            to_real(value, _KINDS[i][0])  # raises
    return spec


def _check_each_field(spec: RunSpec, layout: tuple) -> RunSpec:
    ints_to_float = []
    for i, (name, kind, optional) in enumerate(_KINDS):
        value = getattr(spec, name)
        if type(value) is kind:
            if kind is float and value - value != 0.0:  # NaN or infinity
                to_real(value, name)  # raises
            continue
        if value is None:
            if not optional:
                raise InputError("input.required", "input.hint.required", name=name)
        elif kind is int:
            setattr(spec, name, to_whole(value, name))
        elif kind is float:
            if type(value) is int:
                ints_to_float.append(i)
            setattr(spec, name, to_real(value, name))
        elif kind is bool:
            setattr(spec, name, _flag(value, name))
        else:
            raise InputError("input.not_text", "input.hint.not_text", name=name, value=type(value).__name__)
    if _only_ints_and_exact_types(layout) and len(_LAYOUTS) < 256:  # bounded: a fuzzer's layouts do not pile up
        _LAYOUTS[layout] = tuple(ints_to_float)
    return spec


def _only_ints_and_exact_types(layout: tuple) -> bool:
    """Each field of this layout is its own type, None where allowed, or an int for a float field."""
    return all(t is kind or (t is type(None) and optional) or (t is int and kind is float)
               for t, (_, kind, optional) in zip(layout, _KINDS, strict=True))


def _flag(value, name: str) -> bool:
    word = value.strip().lower() if isinstance(value, str) else value if type(value) is int else None
    if isinstance(word, int) and word in (0, 1):
        return bool(word)
    if isinstance(word, str) and word in _WORDS:
        return _WORDS[word]
    raise InputError("input.not_flag", "input.hint.not_flag", name=name, value=repr(value)[:60])


_PASSED: dict[tuple, None] = {}  # settings (every field's value, after check_fields) already found valid
_PASSED_MAX = 1024  # bounded: a fuzzer's or explain's many candidates do not pile up


def validate_trainer_spec(spec: RunSpec) -> None:
    """Every check on a Trainer spec; one InputError naming the first setting that fails.

    Why a memo: `plan()` validates on every call, explain and `--compare-versions` plan the same settings many
    times, and the checks below read only the fields' values. After `check_fields` each field holds its own type,
    so equal value tuples are the same settings (a tuple holding something unhashable is simply not remembered)."""
    check_fields(spec)
    values = _ALL_VALUES(spec)
    try:
        if values in _PASSED:
            return
    except TypeError:
        values = None
    _check_settings(spec)
    if values is not None and len(_PASSED) < _PASSED_MAX:
        _PASSED[values] = None


def _shown(value):
    """A number as the refusal shows it: digits with commas below 10**24, then in scientific form (a `1e308` read as a
    whole number has 309 digits)."""
    if value < 10**24:
        return value
    digits = str(int(value))  # float() of a 309-digit int overflows: the digits are read instead
    return f"{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"


def check_limit(name: str, value: int | None) -> None:
    """One setting against its upper bound (for callers that build no RunSpec, like `solve --time-budget`)."""
    limit = _LIMITS.get(name)
    if value is not None and limit is not None and value > limit:
        raise InputError("input.too_large", "input.hint.too_large", name=name, value=_shown(value), limit=limit)


def _check_settings(spec: RunSpec) -> None:
    if min(_POSITIVE_VALUES(spec)) < 1:  # whole numbers after check_fields; the loop names the first one below 1
        for name in _POSITIVE:
            if getattr(spec, name) < 1:
                raise InputError("input.positive_int", "input.hint.positive_int", name=name, value=getattr(spec, name))
    if spec.num_examples is None:
        if not spec.streaming:
            raise InputError("input.num_examples_missing", "input.hint.num_examples_missing")
    elif not isinstance(spec.num_examples, int) or isinstance(spec.num_examples, bool) or spec.num_examples < 1:
        raise InputError("input.positive_int", "input.hint.positive_int", name="num_examples", value=spec.num_examples)
    _validate_stream_size(spec)
    if not isinstance(spec.max_steps, int) or isinstance(spec.max_steps, bool):
        raise InputError("input.positive_int", "input.hint.positive_int", name="max_steps", value=spec.max_steps)
    if any(map(gt, _zero_for_none(_LIMITED_VALUES(spec)), _LIMIT_VALUES)):  # in C: plan() runs this on every call
        for value, (name, limit) in zip(_LIMITED_VALUES(spec), _LIMITS.items(), strict=True):
            if value is not None and value > limit:
                raise InputError("input.too_large", "input.hint.too_large", name=name, value=_shown(value), limit=limit)
    if spec.max_steps <= 0 and not spec.streaming and not spec.num_train_epochs > 0:
        raise InputError("input.no_length_of_training", "input.hint.no_length_of_training", epochs=spec.num_train_epochs)
    groups = spec.tensor_parallel_size * spec.context_parallel_size * spec.sequence_parallel_size
    if spec.world_size % groups:
        raise InputError("input.parallel_divides", "input.hint.parallel_divides", world=spec.world_size, groups=groups)
    if spec.split_batches and spec.per_device_train_batch_size % spec.world_size:
        raise InputError("input.split_batches", "input.hint.split_batches", bs=spec.per_device_train_batch_size, world=spec.world_size)
    if spec.resume_from_step is not None and spec.resume_from_step < 0:
        raise InputError("input.non_negative", "input.hint.non_negative", name="resume_from_step", value=spec.resume_from_step)
    for name, allowed in _STRATEGIES.items():
        if getattr(spec, name) not in allowed:
            raise InputError("input.strategy", "input.hint.strategy", name=name, value=getattr(spec, name), allowed=", ".join(allowed))
    if min(_zero_for_none(_NON_NEGATIVE_VALUES(spec))) < 0:
        for name in _NON_NEGATIVE:
            value = getattr(spec, name)
            if value is not None and value < 0:
                raise InputError("input.non_negative", "input.hint.non_negative", name=name, value=value)
    if spec.warmup_ratio is not None and spec.warmup_ratio > 1:
        raise InputError("input.ratio", "input.hint.ratio", name="warmup_ratio", value=spec.warmup_ratio)


def _validate_stream_size(spec: RunSpec) -> None:
    for name in ("dataset_tokens", "seq_length"):
        value = getattr(spec, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise InputError("input.positive_int", "input.hint.positive_int", name=name, value=value)
    if spec.dataset_tokens is not None and spec.seq_length is None:
        raise InputError("stream.error.tokens_need_length", "stream.hint.tokens_need_length")
    if spec.dataset_tokens is not None and spec.num_examples is not None:  # one size of a pass, or one would be ignored
        raise InputError("stream.error.size_twice", "stream.hint.size_twice")
