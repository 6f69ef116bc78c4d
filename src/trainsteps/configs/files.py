"""Reading the files users already have: YAML and JSON, with the line of every top-level key (and training scripts,
parsed with `ast` by configs/script.py).

Nothing here runs user code: YAML is composed once with the safe loader (libyaml's `CSafeLoader` where installed),
JSON goes through `json`, and pickled files (`training_args.bin`, `*.pt`) are refused before they are read.
Hostile files stay cheap: a file over `MAX_BYTES` is refused before it is read, a YAML document whose aliases expand
to more than `MAX_NODES` values ("billion laughs") is refused before it is built, and nesting deeper than `MAX_DEPTH`
is refused in either format.
"""

from __future__ import annotations

import json
import pathlib
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from trainsteps.errors import InputError

_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
_PICKLE_MAGIC = (b"\x80", b"PK\x03\x04")  # pickle protocol 2+ header; torch.save zip archive
MAX_BYTES = 16 * 1024 * 1024
"""Largest config file read: real ones (dataset_info.json included) are kilobytes."""
MAX_NODES = 200_000
"""Most values a YAML document may hold once its aliases are expanded."""
MAX_DEPTH = 100
"""Deepest nesting of mappings and lists: real configs stay under 10."""
_PARSED: dict[tuple, tuple[dict, dict]] = {}
"""The last files parsed, by their kind and a hash of their bytes: one plan reads its config several times (what kind
it is, the planner it goes to, the import), and a file of 100,000 keys takes a second and a half to compose. Reading
and hashing the bytes again costs milliseconds, and an edited file never gets a stale parse."""
_PARSED_KEPT = 4


@dataclass(slots=True)
class ConfigFile:
    """One parsed config file."""

    path: pathlib.Path
    """Where it was read from."""
    data: dict
    """Its top-level mapping."""
    lines: dict[str, int] = field(default_factory=dict)
    """1-based line of each top-level key, for provenance."""
    kind: str = ""
    """What it is: llamafactory, axolotl, trl, swift, hf_args, trainer_state, deepspeed, accelerate."""
    script: dict | None = None
    """For a training script (`.py`, read with `ast`): the config call, its keywords not read, Unsloth's import."""

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.path.name}:{line}" if line else self.path.name


_ROOT: ContextVar[pathlib.Path | None] = ContextVar("trainsteps_files_root", default=None)
"""While set (the web calculator, per request), files named by configs are read only inside this folder."""


@contextmanager
def confined(folder: str | pathlib.Path):
    """Within this block (this thread only), a file a config names is found only inside `folder`: a posted config
    cannot make the server read or probe any other path (absolute paths, `..`, links out, the server's own folder)."""
    token = _ROOT.set(pathlib.Path(folder).resolve())
    try:
        yield
    finally:
        _ROOT.reset(token)


def reachable(path: pathlib.Path) -> bool:
    root = _ROOT.get()
    if root is None:
        return True
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return resolved == root or root in resolved.parents


def find_local(name, bases, directory_too: bool = False) -> pathlib.Path | None:
    """The first `base / name` that is a file (or a folder, with `directory_too`) and may be read; None for anything
    else: a name that is no text, a name too long for the system, a path outside the confined folder."""
    if not isinstance(name, str) or not name or "\x00" in name:
        return None
    for base in bases:
        candidate = pathlib.Path(base) / name
        try:
            found = candidate.exists() if directory_too else candidate.is_file()
        except (OSError, ValueError):  # ENAMETOOLONG and the like: no such file
            found = False
        if found and reachable(candidate):
            return candidate
    return None


def read_config(path: str | pathlib.Path) -> ConfigFile:
    """Parse a YAML or JSON file into a `ConfigFile`; bad input raises `InputError` with the line and column."""
    path = pathlib.Path(path)
    if find_local(str(path), [pathlib.Path()]) is None:
        raise InputError("configs.error.missing_file", "configs.hint.missing_file", path=str(path))
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise InputError("configs.error.too_big", "configs.hint.too_big", path=str(path), size=size, limit=MAX_BYTES)
    raw = path.read_bytes()
    identity = _identity(path, raw)
    if identity in _PARSED:
        import copy

        data, lines = _PARSED[identity]
        return ConfigFile(path, copy.deepcopy(data), dict(lines))  # each reader gets its own copy to change
    refuse_pickle(path, raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("configs.error.not_text", "configs.hint.not_text", path=str(path), offset=exc.start) from None
    if path.suffix.lower() == ".py":
        from trainsteps.configs.script import read_script

        return ConfigFile(path, *read_script(path, text))
    if path.suffix.lower() == ".json":
        data, lines = _parse_json(path, text)
    elif path.suffix.lower() == ".toml":
        data, lines = _parse_toml(path, text), {}  # tomllib keeps no line numbers
    else:
        data, lines = _parse_yaml(path, text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("configs.error.not_mapping", "configs.hint.not_mapping", path=str(path), found=type(data).__name__)
    _remember(identity, data, lines)
    return ConfigFile(path, data, lines)


def parse_text(text: str, name: str = "posted.yaml") -> object:
    """A config's text that is not a file on disk (a file posted to the web page), through the same guards as a file:
    the size, the aliases' expansion and the depth are checked before anything walks it. JSON is read as YAML (a
    superset) unless `name` ends in .json."""
    path = pathlib.Path(name)
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_BYTES:
        raise InputError("configs.error.too_big", "configs.hint.too_big", path=str(path), size=size, limit=MAX_BYTES)
    data, _ = _parse_json(path, text) if path.suffix.lower() == ".json" else _parse_yaml(path, text)
    return data


def _identity(path: pathlib.Path, raw: bytes) -> tuple:
    import hashlib

    return path.suffix.lower(), hashlib.blake2b(raw, digest_size=20).digest()


def _remember(identity: tuple, data: dict, lines: dict) -> None:
    import copy

    if len(_PARSED) >= _PARSED_KEPT:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[identity] = (copy.deepcopy(data), dict(lines))  # kept apart from the copy the caller may change


def read_toml(path: str | pathlib.Path) -> dict:
    """A `.toml` file (torchtitan's job config, prime-rl's rl.toml): `read_config`'s guards and cache, its table."""
    return read_config(path).data


def _parse_toml(path: pathlib.Path, text: str) -> dict:
    tomllib = _tomllib()
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError("tt.error.toml", "tt.hint.toml", path=path.name, detail=str(exc)[:200]) from None


def _tomllib():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise InputError("tt.error.no_toml", "tt.hint.no_toml") from None
    return tomllib


def refuse_pickle(path: pathlib.Path, head: bytes) -> None:
    """A pickle can run any code when loaded, so a `training_args.bin` is never opened; say what to give instead."""
    if path.suffix.lower() in _PICKLE_SUFFIXES or head.startswith(_PICKLE_MAGIC):
        raise InputError("configs.error.pickle", "configs.hint.pickle", path=str(path))


def _parse_json(path: pathlib.Path, text: str) -> tuple[object, dict[str, int]]:
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError("configs.error.json", "configs.hint.json", path=str(path), line=exc.lineno, column=exc.colno, detail=exc.msg) from None
    except RecursionError:
        raise _too_deep(path) from None
    except _Constant as exc:  # NaN / Infinity
        raise InputError("configs.error.json_constant", "configs.hint.json_constant", path=str(path), name=str(exc)) from None
    except ValueError:  # Python reads whole numbers of at most 4,300 digits
        raise _long_number(path) from None
    _check_depth(path, data)
    return data, _json_key_lines(text, data)


class _Constant(ValueError):
    """NaN, Infinity, -Infinity: Python's json reads them, strict JSON has none."""


def _no_constant(name: str):
    raise _Constant(name)


def _long_number(path: pathlib.Path) -> InputError:
    return InputError("configs.error.long_number", "configs.hint.long_number", path=str(path), limit=sys.get_int_max_str_digits())


def _too_deep(path: pathlib.Path) -> InputError:
    return InputError("configs.error.too_deep", "configs.hint.too_deep", path=str(path), limit=MAX_DEPTH)


def _check_depth(path: pathlib.Path, data: object) -> None:
    """Walk without recursion: a 100,000-deep list must not reach Python's recursion limit."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(path)
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def _json_key_lines(text: str, data: object) -> dict[str, int]:
    """Line of each top-level key: the first line holding `"key":` (good enough for provenance)."""
    if not isinstance(data, dict):
        return {}
    rows = text.splitlines()
    lines = {}
    for key in data:
        needle = json.dumps(key) + ":"
        needle_spaced = json.dumps(key) + " :"
        for number, row in enumerate(rows, 1):
            if needle in row or needle_spaced in row:
                lines[key] = number
                break
    return lines


def _parse_yaml(path: pathlib.Path, text: str) -> tuple[object, dict[str, int]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        aliases = _prescan(path, text)
        node = loader.get_single_node()
        if node is not None and aliases:
            _check_nodes(path, node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        detail = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        hint = "configs.hint.yaml_tag" if "could not determine a constructor" in detail else \
            "configs.hint.too_deep" if "nesting depth" in detail else "configs.hint.yaml"
        raise InputError("configs.error.yaml", hint, path=str(path), line=line, column=column, detail=detail) from None
    except yaml.YAMLError as exc:
        raise InputError("configs.error.yaml", "configs.hint.yaml", path=str(path), line=0, column=0, detail=str(exc)) from None
    except RecursionError:
        raise _too_deep(path) from None
    except ValueError as exc:  # a whole number past Python's 4,300 digits, a date like 2024-13-45
        if "digits" in str(exc):
            raise _long_number(path) from None
        raise InputError("configs.error.yaml", "configs.hint.yaml", path=str(path), line=0, column=0, detail=str(exc)) from None
    finally:
        loader.dispose()
    lines = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                lines[key_node.value] = key_node.start_mark.line + 1
    return data, lines


def _prescan(path: pathlib.Path, text: str) -> bool:
    """Count the values and the depth from the parser's events, before any node is built, and stop at MAX_NODES: a
    file of 500,000 keys is refused in a fraction of a second instead of being composed (seconds, a gigabyte).
    Returns whether the document uses aliases: only then can it expand past what its events count (`_check_nodes`)."""
    import yaml

    parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    starts, ends, scalar, alias = (yaml.MappingStartEvent, yaml.SequenceStartEvent), (yaml.MappingEndEvent, yaml.SequenceEndEvent), \
        yaml.ScalarEvent, yaml.AliasEvent
    values = depth = 0
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, alias):
                return True
            if isinstance(event, scalar):
                values += 1
            elif isinstance(event, starts):
                values += 1
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(path)
            elif isinstance(event, ends):
                depth -= 1
            if values > MAX_NODES:  # no alias seen: the values are written out
                raise InputError("configs.error.too_many_written", "configs.hint.too_many_written", path=str(path), limit=MAX_NODES)
    finally:
        parser.dispose()
    return False


def _check_nodes(path: pathlib.Path, root) -> None:
    """Count the values the document expands to (an alias counts its whole target again) and its depth, without
    expanding it and without recursion: an alias bomb of a few hundred bytes expands to billions of values."""
    import yaml

    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are being counted: exactly the ancestors of the node popped
    stack = [(root, 1, False)]
    while stack:
        node, level, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            children = _children(node)
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            if size[key] > MAX_NODES or depth[key] > MAX_DEPTH:
                break
            continue
        if key in size:
            continue
        if key in open_ or level > MAX_DEPTH:  # an alias to its own ancestor expands without end
            size[id(root)] = MAX_NODES + 1
            break
        open_.add(key)
        stack.append((node, level, True))
        if not isinstance(node, yaml.ScalarNode):
            stack.extend((child, level + 1, False) for child in _children(node))
    if size.get(id(root), 0) > MAX_NODES or any(value > MAX_NODES for value in size.values()):
        raise InputError("configs.error.too_many_values", "configs.hint.too_many_values", path=str(path), limit=MAX_NODES)
    if level > MAX_DEPTH or max(depth.values(), default=0) > MAX_DEPTH:
        raise _too_deep(path)


def _children(node) -> list:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
