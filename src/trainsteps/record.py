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

from operator import attrgetter

_MISSING = object()
_function = type(lambda: None)  # types.FunctionType, without importing types


class _Factory:
    __slots__ = ("make", "deferred")

    def __init__(self, make, deferred: bool = False) -> None:
        self.make = make
        self.deferred = deferred


def field(*, default_factory=None, deferred: bool = False):
    """A default built per instance, as `dataclasses.field(default_factory=...)`; `deferred=True` lets the field
    also take a `Deferred(fn, *args)`, computed on its first read (required when no default_factory is given)."""
    return _Factory(default_factory, deferred)


class Deferred:
    """The value of a `field(deferred=True)`, computed by `fn(*args)` when the field is first read.

    Why: a plan builds text (the banner, the settings as a dict) that most callers never read; explain and
    `--compare-versions` plan hundreds of candidates. The arguments must not change after construction."""

    __slots__ = ("fn", "args")

    def __init__(self, fn, *args) -> None:
        self.fn = fn
        self.args = args


class _DeferrableField:
    """The class attribute of a deferrable field: the value lives in a hidden slot; a Deferred is resolved once."""

    __slots__ = ("slot",)

    def __init__(self, slot) -> None:
        self.slot = slot  # the hidden slot's member descriptor

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.slot.__get__(instance, owner)
        if type(value) is Deferred:
            value = value.fn(*value.args)
            self.slot.__set__(instance, value)
        return value

    def __set__(self, instance, value) -> None:
        self.slot.__set__(instance, value)


class FrozenError(AttributeError):
    """Assigning to a field of a frozen record."""


class _DataclassFields:
    """`__dataclass_fields__`, built on first use so that the `dataclasses` helpers accept records."""

    def __get__(self, instance, owner):
        import dataclasses

        built = {}
        for name, kind, default in owner.__record_fields__:
            if isinstance(default, _Factory) and default.make is not None:
                f = dataclasses.field(default_factory=default.make)
            elif default is _MISSING or isinstance(default, _Factory):
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
    specs, deferrable = [], []
    for name, kind in cls.__dict__.get("__annotations__", {}).items():
        if str(kind).startswith("ClassVar"):
            continue
        default = body.pop(name, _MISSING)
        if isinstance(default, _Factory) and default.deferred:
            deferrable.append(name)
            if default.make is None:
                default = _MISSING
        specs.append((name, kind, default))
    for key in ("__dict__", "__weakref__"):
        body.pop(key, None)
    names = tuple(name for name, _, _ in specs)
    body["__slots__"] = tuple(_hidden(name) if name in deferrable else name for name in names)
    body["__qualname__"] = cls.__qualname__
    body["__match_args__"] = names
    body["__record_fields__"] = tuple(specs)
    body["__dataclass_fields__"] = _DataclassFields()
    init = _make_init(cls.__qualname__, specs, frozen)
    if len(names) > 1:
        values = attrgetter(*names)  # a tuple of the fields' values, in C
    else:
        values = (lambda self, get=attrgetter(*names): (get(self),)) if names else (lambda self: ())
    methods = {"__init__": init, "__repr__": _repr, "__eq__": _eq}
    if order:
        methods.update(__lt__=_lt, __le__=_le, __gt__=_gt, __ge__=_ge)
    for name, method in methods.items():
        if name not in cls.__dict__:
            body[name] = method
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    body["_record_values"] = staticmethod(values)
    if frozen:
        body.setdefault("__hash__", lambda self: hash(self._record_values(self)))
        body["__setattr__"] = _frozen_setattr
        body["__delattr__"] = _frozen_setattr
        body["__getstate__"] = lambda self: self._record_values(self)
        body["__setstate__"] = _set_state
    elif "__hash__" not in cls.__dict__:
        body["__hash__"] = None
    built = type(cls)(cls.__name__, cls.__bases__, body)
    for name in deferrable:
        type.__setattr__(built, name, _DeferrableField(built.__dict__[_hidden(name)]))
    return built


def replace(instance, /, **changes):
    """A copy of a record with some fields changed, as `dataclasses.replace` (which would import `dataclasses` and build
    the record's `__dataclass_fields__`: about 2 ms of `trainsteps explain`'s start-up). A name that is not a field is
    refused, as there."""
    values = dict(zip(instance.__match_args__, instance._record_values(instance), strict=True))
    unknown = changes.keys() - values.keys()
    if unknown:
        raise TypeError(f"{type(instance).__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return type(instance)(**values)


SOURCES: list[tuple[str, str]] = []
"""(class qualname, `__init__` source) of every record built in this process, in order (tools/gen_record_inits.py)."""
COMPILED: list[str] = []
"""Qualnames of the records whose `__init__` was compiled here because `_record_inits` lacked its source."""
_PRECOMPILED: dict | None = None


def _make_init(qualname: str, specs: list, frozen: bool):
    """The record's `__init__`: its source is built from the fields, then taken precompiled from `_record_inits`
    when that module holds the same source, else compiled here.

    Why: compiling a generated `__init__` costs 0.1-0.3 ms a class, and `trainsteps plan` builds a dozen records at
    start-up; the generated module's bytecode is cached by Python like any module's. The source is the key, so a
    changed class is never given a stale `__init__`: it is compiled here (and a test asks to regenerate the module)."""
    global _PRECOMPILED
    namespace = {"_MISSING": _MISSING, "_setattr": object.__setattr__}
    params, lines, defaults = [], [], []
    for name, _, default in specs:
        if default is _MISSING:
            params.append(name)
        else:
            factory = isinstance(default, _Factory)
            namespace[f"_d_{name}"] = default.make if factory else default
            params.append(f"{name}=_MISSING" if factory else f"{name}=_d_{name}")
            defaults.append(_MISSING if factory else default)
        value = f"_d_{name}() if {name} is _MISSING else {name}" if isinstance(default, _Factory) else name
        lines.append(f"    _setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(lines) or "    pass")
    SOURCES.append((qualname, source))
    if _PRECOMPILED is None:
        from trainsteps._record_inits import INITS

        _PRECOMPILED = dict(INITS)
    code = _PRECOMPILED.get(source)
    if code is None and not _LOG_INITS_LOADED:
        code = _load_log_inits().get(source)
    if code is not None:
        return _function(code, namespace, "__init__", tuple(defaults) or None)
    COMPILED.append(qualname)
    exec(source, namespace)  # noqa: S102 - the text is built above from the class's own field names
    return namespace["__init__"]


_LOG_INITS_LOADED = False


def _load_log_inits() -> dict:
    """The `__init__`s of the records only `explain` builds (`_record_inits_logs`), added on the first record that
    `_record_inits` lacks: `trainsteps plan` never loads them."""
    global _LOG_INITS_LOADED
    from trainsteps._record_inits_logs import INITS

    _LOG_INITS_LOADED = True
    _PRECOMPILED.update(INITS)
    return _PRECOMPILED


def _hidden(name: str) -> str:
    return "_deferrable_" + name


def _repr(self):
    return type(self).__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__match_args__) + ")"


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return self._record_values(self) == other._record_values(other)


def _lt(self, other):
    return self._record_values(self) < other._record_values(other) if other.__class__ is self.__class__ else NotImplemented


def _le(self, other):
    return self._record_values(self) <= other._record_values(other) if other.__class__ is self.__class__ else NotImplemented


def _gt(self, other):
    return self._record_values(self) > other._record_values(other) if other.__class__ is self.__class__ else NotImplemented


def _ge(self, other):
    return self._record_values(self) >= other._record_values(other) if other.__class__ is self.__class__ else NotImplemented


def _frozen_setattr(self, name, *value):
    raise FrozenError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _set_state(self, state):
    for name, value in zip(self.__match_args__, state, strict=True):
        object.__setattr__(self, name, value)
