"""`record`: the core's value classes, written like dataclasses, built without the `dataclasses` module.

The core's classes (RunSpec, Schedule, the loop's inputs and results, ...) are read the torchtitan way: one
annotated field per line with a docstring under it. `@dataclass` would build them, but it costs about a
millisecond per class at import time (and pulls in `inspect`), which `trainsteps plan` pays on every start.
`@record` builds the same thing from the same class body: `__slots__`, an `__init__` with the defaults,
`__repr__`, `__eq__`, and for `frozen=True` immutability and a hash; `order=True` adds the comparisons.

The classes stay usable by the standard tools: `dataclasses.fields`, `replace` and `asdict` see them as
dataclasses, through a `__dataclass_fields__` built (and `dataclasses` imported) only when one of those asks.
"""

from __future__ import annotations

_MISSING = object()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make) -> None:
        self.make = make


def field(*, default_factory):
    """A default built per instance, as `dataclasses.field(default_factory=...)`."""
    return _Factory(default_factory)


class FrozenError(AttributeError):
    """Assigning to a field of a frozen record."""


class _DataclassFields:
    """`__dataclass_fields__`, built on first use so that the `dataclasses` helpers accept records."""

    def __get__(self, instance, owner):
        import dataclasses

        built = {}
        for name, kind, default in owner.__record_fields__:
            if isinstance(default, _Factory):
                f = dataclasses.field(default_factory=default.make)
            elif default is _MISSING:
                f = dataclasses.field()
            else:
                f = dataclasses.field(default=default)
            f.name, f.type, f._field_type = name, kind, dataclasses._FIELD  # what @dataclass sets on each field
            built[name] = f
        type.__setattr__(owner, "__dataclass_fields__", built)
        return built


def record(cls=None, /, *, frozen: bool = False, order: bool = False):
    """Class decorator: `@record` or `@record(frozen=True, order=True)`."""

    def build(cls):
        return _build(cls, frozen, order)

    return build if cls is None else build(cls)


def _build(cls, frozen: bool, order: bool):
    body = dict(cls.__dict__)
    specs = []
    for name, kind in cls.__dict__.get("__annotations__", {}).items():
        if str(kind).startswith("ClassVar"):
            continue
        specs.append((name, kind, body.pop(name, _MISSING)))
    for key in ("__dict__", "__weakref__"):
        body.pop(key, None)
    names = tuple(name for name, _, _ in specs)
    body["__slots__"] = names
    body["__qualname__"] = cls.__qualname__
    body["__match_args__"] = names
    body["__record_fields__"] = tuple(specs)
    body["__dataclass_fields__"] = _DataclassFields()
    namespace = {"_MISSING": _MISSING, "_setattr": object.__setattr__}
    params, lines = [], []
    for name, _, default in specs:
        if default is _MISSING:
            params.append(name)
        else:
            namespace[f"_d_{name}"] = default.make if isinstance(default, _Factory) else default
            params.append(f"{name}=_MISSING" if isinstance(default, _Factory) else f"{name}=_d_{name}")
        value = f"_d_{name}() if {name} is _MISSING else {name}" if isinstance(default, _Factory) else name
        lines.append(f"    _setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    fields_tuple = "(" + "".join(f"self.{n}, " for n in names) + ")"
    other_tuple = "(" + "".join(f"other.{n}, " for n in names) + ")"
    source = [
        f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(lines) or "    pass"),
        "def __repr__(self):\n    return type(self).__qualname__ + '(' + "
        + (" + ', ' + ".join(f"'{n}=' + repr(self.{n})" for n in names) or "''") + " + ')'",
        f"def __eq__(self, other):\n    if other.__class__ is not self.__class__:\n        return NotImplemented\n"
        f"    return {fields_tuple} == {other_tuple}",
        f"def _astuple(self):\n    return {fields_tuple}",
    ]
    if order:
        for op, sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
            source.append(f"def __{op}__(self, other):\n    if other.__class__ is not self.__class__:\n"
                          f"        return NotImplemented\n    return {fields_tuple} {sym} {other_tuple}")
    exec("\n".join(source), namespace)  # noqa: S102 - the text is built above from the class's own field names
    for name in ("__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__"):
        if name in namespace and name not in cls.__dict__:
            body[name] = namespace[name]
            namespace[name].__qualname__ = f"{cls.__qualname__}.{name}"
    body["_record_tuple"] = namespace["_astuple"]
    if frozen:
        body.setdefault("__hash__", lambda self: hash(self._record_tuple()))
        body["__setattr__"] = _frozen_setattr
        body["__delattr__"] = _frozen_setattr
        body["__getstate__"] = lambda self: self._record_tuple()
        body["__setstate__"] = _set_state
    elif "__hash__" not in cls.__dict__:
        body["__hash__"] = None
    return type(cls)(cls.__name__, cls.__bases__, body)


def _frozen_setattr(self, name, *value):
    raise FrozenError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _set_state(self, state):
    for name, value in zip(self.__slots__, state, strict=True):
        object.__setattr__(self, name, value)
