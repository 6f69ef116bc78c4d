"""Reading what the FLOPs model needs from local files: a model's config.json (a file or a model folder).

The one place of the time model that touches the disk; bounded in size, JSON only (never pickle or code)."""

from __future__ import annotations

import json
from pathlib import Path

from trainsteps.errors import InputError
from trainsteps.timing.flops import ModelShape, shape_from_config

MAX_CONFIG_BYTES = 8 * 1024 * 1024
"""A config.json is a few kilobytes; anything past this is not one."""


def read_model_shape(path: str) -> ModelShape:
    """The shape of the model at `path` (config.json, or a folder that holds one)."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
        if not p.is_file():
            raise InputError("time.error.no_config", "time.hint.no_config", path=path)
    elif not p.is_file():
        raise InputError("time.error.model_missing", "time.hint.no_config", path=path)
    if p.stat().st_size > MAX_CONFIG_BYTES:
        raise InputError("time.error.config_json", "time.hint.no_config", path=str(p), detail="larger than 8 MiB")
    try:
        config = json.loads(p.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError("time.error.config_json", "time.hint.no_config", path=str(p), detail=str(exc)[:80]) from exc
    if not isinstance(config, dict):
        raise InputError("time.error.config_json", "time.hint.no_config", path=str(p), detail="not a JSON object")
    return shape_from_config(config, source=p.name if p.parent == Path(".") else str(p))
