"""Reading the files users already have: YAML and JSON only, with the line of every top-level key.

Nothing here runs user code: YAML goes through `yaml.safe_load`/`yaml.compose` with the safe loader,
JSON through `json`, and pickled files (`training_args.bin`, `*.pt`) are refused before they are read.
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field

from trainsteps.errors import InputError

_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
_PICKLE_MAGIC = (b"\x80", b"PK\x03\x04")  # pickle protocol 2+ header; torch.save zip archive


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

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.path.name}:{line}" if line else self.path.name


def read_config(path: str | pathlib.Path) -> ConfigFile:
    """Parse a YAML or JSON file into a `ConfigFile`; bad input raises `InputError` with the line and column."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise InputError("configs.error.missing_file", "configs.hint.missing_file", path=str(path))
    raw = path.read_bytes()
    refuse_pickle(path, raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("configs.error.not_text", "configs.hint.not_text", path=str(path), offset=exc.start) from None
    if path.suffix.lower() == ".json":
        data, lines = _parse_json(path, text)
    else:
        data, lines = _parse_yaml(path, text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("configs.error.not_mapping", "configs.hint.not_mapping", path=str(path), found=type(data).__name__)
    return ConfigFile(path, data, lines)


def refuse_pickle(path: pathlib.Path, head: bytes) -> None:
    """A pickle can run any code when loaded, so a `training_args.bin` is never opened; say what to give instead."""
    if path.suffix.lower() in _PICKLE_SUFFIXES or head.startswith(_PICKLE_MAGIC):
        raise InputError("configs.error.pickle", "configs.hint.pickle", path=str(path))


def _parse_json(path: pathlib.Path, text: str) -> tuple[object, dict[str, int]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError("configs.error.json", "configs.hint.json", path=str(path), line=exc.lineno, column=exc.colno, detail=exc.msg) from None
    return data, _json_key_lines(text, data)


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

    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        detail = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError("configs.error.yaml", "configs.hint.yaml", path=str(path), line=line, column=column, detail=detail) from None
    except yaml.YAMLError as exc:
        raise InputError("configs.error.yaml", "configs.hint.yaml", path=str(path), line=0, column=0, detail=str(exc)) from None
    lines = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                lines[key_node.value] = key_node.start_mark.line + 1
    return data, lines
