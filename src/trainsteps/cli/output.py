"""The single output sink: human text or JSON on stdout; errors as one line plus a hint on stderr, exit 2."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from contextvars import ContextVar

import click

from trainsteps.errors import TrainstepsError
from trainsteps.i18n import label, message

FORMAT_OPTION = click.option("--format", "fmt", type=click.Choice(["human", "json"]), default="human", show_default=True,
                             help="Human-readable text or JSON.")
LANG_OPTION = click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True,
                           help="Language of every message (English or Chinese).")

# Set by `captured()`: the web server runs a command in-process and keeps its JSON and its text instead of printing them.
_CAPTURE: ContextVar[list | None] = ContextVar("trainsteps_capture", default=None)


@contextmanager
def captured():
    """Run a command and collect what it emits as (JSON data, human text); errors are raised, not printed."""
    box: list = []
    token = _CAPTURE.set(box)
    try:
        yield box
    finally:
        _CAPTURE.reset(token)


def shown(fmt: str, form: str) -> bool:
    """Whether `emit` will use the answer's `form` ("json" or "human"): both are kept under `captured()`, else only the
    one `fmt` asks for, so a command may skip building the other (explain's JSON costs ~1 ms of a short log's start-up)."""
    return _CAPTURE.get() is not None or (fmt == "json") == (form == "json")


def emit(fmt: str, data: dict, human: str) -> None:
    """Print an answer (or keep it, under `captured()`): it is complete when it gets here."""
    box = _CAPTURE.get()
    if box is not None:
        box.append((data, human))
        return
    if fmt == "json":
        import json

        try:
            # default=str: a YAML value with no JSON form echoed from a file (`!!set`, a date, `!!binary`) is written as text
            text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False, default=str)
        except ValueError:  # a NaN echoed from a file's unused key: strict JSON has no NaN, so it is written as text
            text = json.dumps(_finite(data), ensure_ascii=False, indent=2, allow_nan=False, default=str)
        click.echo(text)
    else:
        click.echo(human)


_LONGEST = 1000


def _finite(value):
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def fail(text: str, hint: str | None, lang: str = "en") -> None:
    colon, opening, closing = ("：", "（", "）") if lang == "zh" else (": ", " (", ")")
    text = " ".join(part.strip() for part in text.splitlines())  # one line, even when it quotes a framework's message
    if len(text) > _LONGEST:  # a 10,000-character path or value quoted back stays readable
        text = text[: _LONGEST * 2 // 3] + " ... " + text[-_LONGEST // 3:]
    line = f"{label('error', lang)}{colon}{text}"
    if hint:
        line += f"{opening}{label('hint', lang)}{colon}{hint}{closing}"
    click.echo(line, err=True)
    sys.exit(2)


@contextmanager
def user_errors(lang: str = "en"):
    """Turn errors the user can fix into one line and exit 2; keep tracebacks for TRAINSTEPS_DEBUG=1."""
    try:
        yield
    except TrainstepsError as exc:
        if os.environ.get("TRAINSTEPS_DEBUG") == "1" or _CAPTURE.get() is not None:
            raise
        fail(*exc.render(lang), lang=lang)


def internal_error(exc: BaseException, lang: str = "en") -> None:
    fail(message("cli.error.internal", lang, detail=f"{type(exc).__name__}: {exc}"), message("cli.hint.internal", lang), lang)
