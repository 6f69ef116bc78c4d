"""Query strings -> RunSpec -> JSON, shared by every route. No I/O here."""

from __future__ import annotations

from dataclasses import fields
from urllib.parse import parse_qs

from trainsteps.errors import InputError
from trainsteps.spec import RunSpec

_BOOLEAN = {"dataloader_drop_last", "split_batches", "even_batches", "streaming", "logging_first_step", "greater_is_better"}


def spec_from_query(query: str) -> tuple[RunSpec, str]:
    """Parse `num_examples=1047&per_device_train_batch_size=10&lang=zh` into a RunSpec and a language."""
    values = {key: items[-1] for key, items in parse_qs(query, keep_blank_values=False).items()}
    lang = values.pop("lang", "en")
    kinds = {f.name: f.type for f in fields(RunSpec)}
    settings = {}
    for key, text in values.items():
        if key not in kinds:
            raise InputError("web.error.unknown_field", "web.hint.unknown_field", name=key)
        settings[key] = _convert(key, text, kinds[key])
    return RunSpec(**settings), lang if lang in ("en", "zh") else "en"


def _convert(key: str, text: str, kind: str):
    if key in _BOOLEAN:
        return text.lower() in ("1", "true", "on", "yes")
    try:
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("float"):
            return float(text)
    except ValueError:
        raise InputError("web.error.not_a_number", "web.hint.not_a_number", name=key, value=text) from None
    return text
