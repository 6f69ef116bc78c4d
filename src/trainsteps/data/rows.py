"""What the data readers hand on: a batch of rows with where it came from, and a row that a framework rejects. Their
own module, so that the readers, the formats and the .idx and chat-template readers share them without importing
each other."""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.data.sources import Source


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


class RowError(Exception):
    """A row that a framework would drop or reject; the reason is shown with file and line."""
