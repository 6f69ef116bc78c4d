"""Rows out of files, in batches, with every malformed line recorded (file and line number) and the count going on."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from trainsteps.data.rows import RowBatch
from trainsteps.data.sources import Source
from trainsteps.errors import InputError

BATCH_ROWS = 1000
SHOWN_PROBLEMS = 5
MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line read (`count --max-line-bytes`): a longer one is reported as malformed and skipped without being
held in memory, so one hostile line or a compressed file with no newline cannot exhaust memory. Tokenizing a row
costs about 40 bytes of memory per byte: 16 MiB keeps one row under a second and 1 GB."""
JSON_ARRAY_LINES = 4
"""A JSON array file is parsed whole, as `datasets` does: at most this many times the line limit."""
_ZSTD_CHUNK = 8192  # compressed bytes fed at a time: zstd expands up to ~32,000x, so this bounds one step's output


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


def read(source: Source, problems: Problems, batch_rows: int = BATCH_ROWS, max_line: int | None = None) -> Iterator[RowBatch]:
    """Every row of one file, in order, as batches; lines over `max_line` bytes (default MAX_LINE_BYTES) are malformed."""
    limit = max_line or MAX_LINE_BYTES
    try:
        if source.kind == "json":
            yield from _read_json(source, problems, batch_rows, limit)
        elif source.kind == "csv":
            yield from _read_csv(source, batch_rows, limit)
        elif source.kind == "text":
            yield from _read_text(source, problems, batch_rows, limit)
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
    except RecursionError as exc:
        raise InputError("count.error.unreadable", "count.hint.unreadable", path=source.path, detail="nested too deeply") from exc
    except MemoryError as exc:
        raise InputError("count.error.unreadable", "count.hint.unreadable", path=source.path, detail="too large to hold in memory") from exc
    except Exception as exc:  # pyarrow and zstandard raise their own types for corrupt files
        if type(exc).__module__.split(".")[0] in ("pyarrow", "zstandard", "zstd", "_csv", "zlib"):  # zlib: a corrupt deflate stream
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
        return io.BufferedReader(_ZstdFrames(raw, zstandard), 1 << 20), raw
    return io.BufferedReader(raw, 1 << 20), raw


class _ZstdFrames(io.RawIOBase):
    """Every zstd frame of a file, decompressed a little at a time, checked to the end: a stream that stops inside a
    frame (truncated), or bytes after the last frame that do not start a complete one, raise instead of passing for
    the end of the data (zstandard's `stream_reader` returns EOF silently there)."""

    def __init__(self, raw, zstandard):
        self.raw = raw
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._frame = self._new()
        self._started = False  # the current frame has been fed at least one byte
        self._out = memoryview(b"")

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self._out:
            chunk = self.raw.read(_ZSTD_CHUNK)
            if not chunk:
                if self._started:
                    raise EOFError("truncated or corrupt zstd stream: it ends inside a frame")
                return 0
            self._out = memoryview(self._feed(chunk))
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _feed(self, chunk: bytes) -> bytes:
        parts = []
        while chunk:
            self._started = True
            parts.append(self._frame.decompress(chunk))
            if not self._frame.eof:
                break
            chunk = self._frame.unused_data  # the next frame starts in this chunk
            self._frame, self._started = self._new(), False
        return b"".join(parts)

    def close(self):
        self.raw.close()
        super().close()


def _bounded_lines(stream, limit: int, too_long) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of each line; a line over `limit` bytes yields None after `too_long(number, offset)` and is
    skipped a megabyte at a time, so no more than `limit` bytes are ever held for it."""
    readline = stream.readline
    number = offset = 0
    while True:
        line = readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not (len(line) == limit + 1 and line.endswith(b"\n")):
            too_long(number, offset)
            offset += len(line)
            del line
            while True:
                rest = readline(1 << 20)
                offset += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        offset += len(line)
        yield number, line


def _universal_lines(text: str) -> list[str]:
    """One newline-ended piece split as a text-mode file splits it (CR, LF and CRLF all end a line)."""
    if "\r" not in text:
        return [text.rstrip("\n")]
    return _NEWLINES.split(text.removesuffix("\n").removesuffix("\r"))


_NEWLINES = re.compile(r"\r\n|\r|\n")


def _too_long_reason(limit: int, offset: int) -> str:
    return f"line longer than {limit:,} bytes (starts at byte {offset:,} of the data; raise --max-line-bytes to read it)"


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


def _read_json(source: Source, problems: Problems, batch_rows: int, limit: int = MAX_LINE_BYTES) -> Iterator[RowBatch]:
    stream, raw = open_binary(source)
    with stream:
        if _first_char(stream) == b"[":
            yield from _read_json_array(source, stream, raw, batch_rows, limit * JSON_ARRAY_LINES)
            return
        rows, lines = [], []
        loads = json.loads
        too_long = lambda number, offset: problems.add(source.path, number, _too_long_reason(limit, offset))  # noqa: E731
        for number, line in _bounded_lines(stream, limit, too_long):
            if line is None:
                continue
            if not line.strip():
                problems.blank_lines += 1
                continue
            try:
                row = loads(line)
            except ValueError as exc:
                problems.add(source.path, number, f"not JSON ({_short(exc)})")
                continue
            except RecursionError:
                problems.add(source.path, number, "not JSON (nested too deeply)")
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


def _read_json_array(source: Source, stream, raw, batch_rows: int, limit: int) -> Iterator[RowBatch]:
    text = stream.read(limit + 1)
    if len(text) > limit:
        raise InputError("count.error.json_array_too_big", "count.hint.json_array_too_big", path=source.path, limit=limit)
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError("count.error.bad_json_file", "count.hint.bad_json_file", path=source.path, detail="nested too deeply") from None
    except ValueError as exc:
        raise InputError("count.error.bad_json_file", "count.hint.bad_json_file", path=source.path, detail=_short(exc)) from exc
    for start in range(0, len(data), batch_rows):
        chunk = data[start:start + batch_rows]
        for offset, row in enumerate(chunk):
            if not isinstance(row, dict):
                raise InputError("count.error.bad_json_file", "count.hint.bad_json_file", path=source.path,
                                 detail=f"item {start + offset + 1} is a JSON {type(row).__name__}, not an object")
        yield RowBatch(chunk, source, start + 1, raw.done, unit="item")


def _read_csv(source: Source, batch_rows: int, limit: int = MAX_LINE_BYTES) -> Iterator[RowBatch]:
    import csv

    stream, raw = open_binary(source)
    delimiter = "\t" if ".tsv" in os.path.basename(source.path).lower() else ","

    def too_long(number: int, offset: int) -> None:
        raise InputError("count.error.unreadable", "count.hint.unreadable", path=source.path,
                         detail=f"line {number}: {_too_long_reason(limit, offset)}")

    csv.field_size_limit(max(csv.field_size_limit(), limit))
    with stream:
        lines = (line.decode("utf-8") for _, line in _bounded_lines(stream, limit, too_long))
        reader = csv.DictReader(lines, delimiter=delimiter)
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


def _read_text(source: Source, problems: Problems, batch_rows: int, limit: int = MAX_LINE_BYTES) -> Iterator[RowBatch]:
    """`datasets`' text loader: one row per line, column `text`, line ending removed."""
    stream, raw = open_binary(source)
    too_long = lambda number, offset: problems.add(source.path, number, _too_long_reason(limit, offset))  # noqa: E731
    with stream:
        rows, first, number = [], 1, 0
        for _, data in _bounded_lines(stream, limit, too_long):
            if data is None:
                number += 1
                continue
            for line in _universal_lines(data.decode("utf-8")):
                number += 1
                if not rows:
                    first = number
                rows.append({"text": line})
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
            # The file's offsets and lengths are checked against its buffers before any value is read: a damaged
            # file would otherwise make pyarrow read outside the mapping (SIGSEGV, SIGBUS) or build negative sizes.
            batch.validate(full=True)
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
