"""Rows out of files, in batches, with every malformed line recorded (file and line number) and the count going on."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from trainsteps.data.sources import Source
from trainsteps.errors import InputError

BATCH_ROWS = 1000
SHOWN_PROBLEMS = 5


@dataclass
class Problems:
    """Lines or rows that could not be used; all are counted, the first few are kept to show."""

    count: int = 0
    """How many lines/rows were malformed."""
    first: list = field(default_factory=list)
    """Up to SHOWN_PROBLEMS of (path, line number, reason)."""
    blank_lines: int = 0
    """Empty lines of JSONL files (skipped by `datasets` too; not examples)."""

    def add(self, path: str, line: int, reason: str) -> None:
        self.count += 1
        if len(self.first) < SHOWN_PROBLEMS:
            self.first.append((path, line, reason))

    def to_dict(self) -> dict:
        return {"malformed": self.count, "blank_lines": self.blank_lines,
                "first": [{"path": p, "line": n, "reason": r} for p, n, r in self.first]}


@dataclass
class RowBatch:
    """Rows read from one file, with where they came from."""

    rows: list
    """The rows, as dicts."""
    source: Source
    """The file."""
    first_line: int
    """1-based line (JSONL/CSV/text) or row (JSON array, Parquet, Arrow) number of rows[0]."""
    bytes_done: int
    """Compressed bytes of this file read so far (for the progress bar)."""
    lines: list | None = None
    """Line number of each row when lines were skipped (JSONL)."""
    unit: str = "line"
    """What `first_line` counts: `line` (JSONL/CSV/text), `item` (JSON array) or `row` (Parquet, Arrow, .idx)."""


def read(source: Source, problems: Problems, batch_rows: int = BATCH_ROWS) -> Iterator[RowBatch]:
    """Every row of one file, in order, as batches."""
    try:
        if source.kind == "json":
            yield from _read_json(source, problems, batch_rows)
        elif source.kind == "csv":
            yield from _read_csv(source, batch_rows)
        elif source.kind == "text":
            yield from _read_text(source, batch_rows)
        elif source.kind == "parquet":
            yield from _read_parquet(source, batch_rows)
        elif source.kind == "arrow":
            yield from _read_arrow(source, batch_rows)
        elif source.kind == "idx":
            yield from _read_idx(source, batch_rows)
    except InputError:
        raise
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
        raise InputError("count.error.unreadable", "count.hint.unreadable", path=source.path, detail=_short(exc)) from exc
    except Exception as exc:  # pyarrow and zstandard raise their own types for corrupt files
        if type(exc).__module__.split(".")[0] in ("pyarrow", "zstandard", "zstd"):
            raise InputError("count.error.unreadable", "count.hint.unreadable", path=source.path, detail=_short(exc)) from exc
        raise


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


class _Counting(io.RawIOBase):
    """A file that remembers how many bytes were read from it (the compressed size, for progress)."""

    def __init__(self, raw):
        self.raw = raw
        self.done = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        n = self.raw.readinto(buffer)
        self.done += n or 0
        return n

    def close(self):
        self.raw.close()
        super().close()


def open_binary(source: Source) -> tuple[io.BufferedIOBase, _Counting]:
    """The decompressed byte stream of a file, and the counter of raw bytes read."""
    raw = _Counting(open(source.path, "rb", buffering=0))  # noqa: SIM115 - closed by the caller via the stream
    compression = source.compression or _sniff(source.path)
    if compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=io.BufferedReader(raw, 1 << 20)), raw
    if compression == "zstd":
        try:
            import zstandard
        except ImportError as exc:
            raise InputError("count.error.zstd_missing", "count.hint.zstd_missing", path=source.path) from exc
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True), 1 << 20), raw
    return io.BufferedReader(raw, 1 << 20), raw


def _sniff(path: str) -> str | None:
    with open(path, "rb") as f:
        head = f.read(4)
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head == b"\x28\xb5\x2f\xfd":
        return "zstd"
    return None


def _first_char(stream) -> bytes:
    head = stream.peek(4096)[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1]


def _read_json(source: Source, problems: Problems, batch_rows: int) -> Iterator[RowBatch]:
    stream, raw = open_binary(source)
    with stream:
        if _first_char(stream) == b"[":
            yield from _read_json_array(source, stream, raw, batch_rows)
            return
        rows, lines = [], []
        loads = json.loads
        for number, line in enumerate(stream, 1):
            if not line.strip():
                problems.blank_lines += 1
                continue
            try:
                row = loads(line)
            except ValueError as exc:
                problems.add(source.path, number, f"not JSON ({_short(exc)})")
                continue
            if not isinstance(row, dict):
                problems.add(source.path, number, f"a JSON {type(row).__name__}, not an object")
                continue
            rows.append(row)
            lines.append(number)
            if len(rows) >= batch_rows:
                yield RowBatch(rows, source, lines[0], raw.done, lines)
                rows, lines = [], []
        if rows:
            yield RowBatch(rows, source, lines[0], raw.done, lines)


def _read_json_array(source: Source, stream, raw, batch_rows: int) -> Iterator[RowBatch]:
    try:
        data = json.load(io.TextIOWrapper(stream, encoding="utf-8"))
    except ValueError as exc:
        raise InputError("count.error.bad_json_file", "count.hint.bad_json_file", path=source.path, detail=_short(exc)) from exc
    for start in range(0, len(data), batch_rows):
        chunk = data[start:start + batch_rows]
        for offset, row in enumerate(chunk):
            if not isinstance(row, dict):
                raise InputError("count.error.bad_json_file", "count.hint.bad_json_file", path=source.path,
                                 detail=f"item {start + offset + 1} is a JSON {type(row).__name__}, not an object")
        yield RowBatch(chunk, source, start + 1, raw.done, unit="item")


def _read_csv(source: Source, batch_rows: int) -> Iterator[RowBatch]:
    import csv

    stream, raw = open_binary(source)
    delimiter = "\t" if ".tsv" in os.path.basename(source.path).lower() else ","
    with io.TextIOWrapper(stream, encoding="utf-8", newline="") as text:
        reader = csv.DictReader(text, delimiter=delimiter)
        rows, first = [], 2
        for row in reader:
            if not rows:
                first = reader.line_num
            rows.append(row)
            if len(rows) >= batch_rows:
                yield RowBatch(rows, source, first, raw.done)
                rows = []
        if rows:
            yield RowBatch(rows, source, first, raw.done)


def _read_text(source: Source, batch_rows: int) -> Iterator[RowBatch]:
    """`datasets`' text loader: one row per line, column `text`, line ending removed."""
    stream, raw = open_binary(source)
    with io.TextIOWrapper(stream, encoding="utf-8") as text:
        rows, first = [], 1
        for number, line in enumerate(text, 1):
            if not rows:
                first = number
            rows.append({"text": line.rstrip("\n").rstrip("\r")})
            if len(rows) >= batch_rows:
                yield RowBatch(rows, source, first, raw.done)
                rows = []
        if rows:
            yield RowBatch(rows, source, first, raw.done)


def _read_parquet(source: Source, batch_rows: int) -> Iterator[RowBatch]:
    import pyarrow.parquet as pq

    size = os.path.getsize(source.path)
    parquet = pq.ParquetFile(source.path)
    total = max(parquet.metadata.num_rows, 1)
    row = 1
    for batch in parquet.iter_batches(batch_size=batch_rows):
        rows = batch.to_pylist()
        yield RowBatch(rows, source, row, int(size * min(row + len(rows) - 1, total) / total), unit="row")
        row += len(rows)


def _read_arrow(source: Source, batch_rows: int) -> Iterator[RowBatch]:
    """Arrow IPC: the stream format (`datasets` cache and save_to_disk shards) or the file format."""
    import pyarrow as pa

    size = os.path.getsize(source.path)
    with pa.memory_map(source.path, "r") as mapped:
        try:
            reader = pa.ipc.open_stream(mapped)
            batches = iter(reader)
        except pa.ArrowInvalid:
            mapped.seek(0)
            reader = pa.ipc.open_file(mapped)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        row = 1
        for batch in batches:
            for start in range(0, batch.num_rows, batch_rows):
                rows = batch.slice(start, batch_rows).to_pylist()
                yield RowBatch(rows, source, row, min(size, mapped.tell()), unit="row")
                row += len(rows)


def _read_idx(source: Source, batch_rows: int) -> Iterator[RowBatch]:
    """Megatron .idx/.bin: handled by `trainsteps.data.idx` (documents are already tokens)."""
    try:
        from trainsteps.data import idx
    except ImportError as exc:
        raise InputError("count.error.idx_unavailable", "count.hint.idx_unavailable", path=source.path) from exc
    yield from idx.read_rows(source, batch_rows)  # hook: rows carry `_token_count`, see formats.TOKEN_COUNT
