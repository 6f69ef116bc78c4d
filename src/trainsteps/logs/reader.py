"""Read a log from a file, a directory, stdin (`-`) or pasted text, line by line in constant memory."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from trainsteps.errors import InputError
from trainsteps.logs import axolotl, deepspeed, hf, launch, llamafactory, progress, unsloth
from trainsteps.logs.context import ScanContext
from trainsteps.logs.observed import LogObservations
from trainsteps.logs.text import CHUNK, iter_lines, iter_text_lines, unglued
from trainsteps.logs.trainer_state import MAX_BYTES, looks_like_state, parse_state

# Order matters: Unsloth's banner before the Trainer's labels (it reuses some of them).
PARSERS = (unsloth.scan, hf.scan, llamafactory.scan, axolotl.scan, deepspeed.scan, launch.scan)
# Any line a parser could use contains one of these; the rest (most of a long log) is skipped.
# Plain substring tests: much faster than one alternation regex.
_NEEDLES = ("=", "poch", "Running", "%|", " [", "Training completed", "global step", "_num_", "data_loader_len", "batch_size",
            "gradient_accumulation", "nproc", "num_processes", "num-processes", "GPU number", "CUDA_VISIBLE", "Unsloth",
            "adjusted to", "max_steps is given", "trainer.py:", "training_args.py:", "Maximum number", "total_supervised",
            # progress, timing, crashes, printed releases and settings (progress.py)
            "/it", "it/s", "Traceback", "Killed", "memory", "NCCL", "rror", "Interrupt", "SIGTERM", "CANCELL", "ransformers",
            "Version:", "num_rows", "train_dataset", "raw training samples", "core dumped", "ault", "dist_world_size", "num_local_procs",
            "WORLD_SIZE", "micro_batch", "global_step", "current_steps", "iteration", "Trainer.fit", "Watchdog", "metrics")
PASTED = "<pasted text>"
"""The name of input given with --text (rendered as "pasted text")."""


def _useful(line: str) -> bool:
    for needle in _NEEDLES:
        if needle in line:
            return True
    return False


_LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".jsonl", ".md"}


def read_log(path: str | None = None, text: str | None = None, also: Callable[[str], None] | None = None) -> LogObservations:
    """Everything readable in a path (`-` for stdin) or a pasted text.

    `also`, if given, sees every line too (in the same pass), e.g. the pretraining-log collector."""
    out = LogObservations(also=also)
    if text is not None:
        data = text.encode("utf-8", "replace")
        if looks_like_state(data[:CHUNK]):
            _read_stream(io.BytesIO(data), PASTED, out)
            return out
        _scan(iter_text_lines(text), PASTED, out)
        out.files.append(PASTED)
        out.bytes_read += len(data)
        return out
    if path is None or path == "-":
        _read_stream(sys.stdin.buffer, "-", out)
        return out
    p = Path(path)
    if p.is_dir():
        files = _log_files(p)
        if not files:
            raise InputError("explain.error.empty_dir", "explain.hint.empty_dir", path=str(p))
        for f in files:
            _read_file(f, out)
        return out
    if not p.exists():
        raise InputError("explain.error.no_file", "explain.hint.no_file", path=str(p))
    _read_file(p, out)
    return out


def read_bytes(data: bytes, name: str = "-") -> LogObservations:
    out = LogObservations()
    _read_stream(io.BytesIO(data), name, out)
    return out


def _log_files(directory: Path) -> list[Path]:
    files = sorted(f for f in directory.iterdir() if f.is_file() and (f.suffix in _LOG_SUFFIXES or f.name == "trainer_state.json"))
    if not any(f.name == "trainer_state.json" for f in files):
        checkpoints = sorted((c for c in directory.glob("checkpoint-*/trainer_state.json")),
                             key=lambda c: int(c.parent.name.split("-")[-1]) if c.parent.name.split("-")[-1].isdigit() else -1)
        files += checkpoints[-1:]
    return files


def _read_file(path: Path, out: LogObservations) -> None:
    try:
        with path.open("rb") as stream:
            _read_stream(stream, str(path), out)
    except OSError as exc:
        raise InputError("explain.error.unreadable", "explain.hint.no_file", path=str(path), detail=exc.strerror or str(exc)) from None


def _read_stream(stream, name: str, out: LogObservations) -> None:
    head = stream.read(CHUNK)
    out.files.append(name)
    if looks_like_state(head):
        data = head + stream.read(MAX_BYTES)
        out.bytes_read += len(data)
        run = parse_state(data, name)
        out.lines_read += data.count(b"\n") + 1
        if run is not None:
            out.runs.append(run)
            return
        stream = io.BytesIO(data)
        head = b""
    _scan(iter_lines(_Chained(head, stream, out)), name, out)


class _Chained(io.RawIOBase):
    """The bytes already peeked at, then the rest of the stream; counts what was read."""

    def __init__(self, head: bytes, rest, out: LogObservations):
        self.head, self.rest, self.out = head, rest, out

    def read(self, size: int = -1) -> bytes:
        if self.head:
            data, self.head = self.head, b""
        else:
            data = self.rest.read(size)
        self.out.bytes_read += len(data)
        return data


def _topic(line: str, out: LogObservations) -> None:
    """Prose about streaming or GPT-NeoX gets a hint of its own when no run is found."""
    if "NeoX" in line or "neox" in line or "NEOX" in line:
        out.topic = "neox"
    elif "stream" in line or "流式" in line or "Stream" in line:
        out.topic = "stream"


def _scan(lines: Iterable[str], name: str, out: LogObservations) -> None:
    ctx = ScanContext(file=name, out=out)
    also = out.also
    for number, physical in enumerate(lines, 1):
        if out.topic is None and not out.runs:
            _topic(physical, out)
        for line in unglued(physical):  # a banner whose line breaks were lost is read label by label
            ctx.line_no, ctx.line = number, line
            if also is not None:
                also(line)
            if not _useful(line):
                continue
            for parse in PARSERS:
                if parse(line, ctx):
                    break
            progress.observe(line, ctx)
    out.lines_read += ctx.line_no
    ctx.finish()
