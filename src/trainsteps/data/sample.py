"""Estimate examples and tokens of a huge JSONL corpus from a few thousand random rows, read by seeking.

Tokens: draw a byte offset uniformly over all files (concatenated) and take the line that contains it. A line of b
bytes is drawn with probability p = b / F (F = total bytes), so each draw gives an unbiased estimate of any total
(Hansen-Hurwitz): tokens = mean(F * t / b). Tokens per byte vary little between rows, so this is precise.

Examples: the same estimator for rows, mean(F / b), is noisy (a short line is rarely drawn but weighs F / b), so lines
are counted another way: newlines in n blocks of B bytes at uniform random starts in [-B+1, F-1] (every byte is
covered by exactly B of the F+B-1 starts, so F+B-1 / B x newlines in a block is unbiased). Each block covers many
lines, so n blocks of 64 KiB see as many lines as a scan of 256 MiB would. Files no bigger than that are counted
exactly. Examples = lines x the share of lines that are valid rows (a ratio of the drawn lines weighted by 1/p).

Draws are independent (with replacement), so a 95% interval is mean +- 1.96 * sd / sqrt(n). Nothing is scanned: each
draw reads a few KB around its offset, each block B bytes. Lengths for percentiles, the histogram and packing are
resampled with weights 1/b, which undoes the length bias.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from trainsteps.data import formats, sources
from trainsteps.data.count import Counted, CountOptions, Lengths
from trainsteps.data.readers import MAX_LINE_BYTES, Problems
from trainsteps.errors import InputError

Z95 = 1.959963984540054
CHUNK = 1 << 10  # first read around an offset; doubled while no newline is found
BLOCK_BYTES = 64 << 10
"""Bytes of each block whose newlines are counted to estimate lines (one block per sampled row)."""
SCAN = 1 << 20  # read size of an exact line count
READERS = 16  # reads in flight at once (random reads: a disk's queue serves them faster together)


@dataclass
class Draw:
    """One sampled line."""

    path: str
    """File it came from."""
    line_bytes: int
    """Bytes of the line, newline included."""
    text: bytes
    """The line."""
    start: int = 0
    """Byte offset of the line in its file (its line number is unknown without a scan)."""


def line_at(f, offset: int) -> tuple[int, bytes]:
    """(start, bytes) of the line containing byte `offset` of an open binary file; the newline belongs to its line."""
    start, chunk = offset, CHUNK
    while start > 0:  # back to the byte after the previous newline
        low = max(0, start - chunk)
        chunk *= 2
        f.seek(low)
        block = f.read(start - low)
        cut = block.rfind(b"\n")
        if cut >= 0:
            start = low + cut + 1
            break
        start = low
    f.seek(start)
    parts = []  # no newline lies in [start, offset), so the first one from start ends the line
    chunk, held = CHUNK, 0
    while True:
        block = f.read(chunk)
        chunk *= 2
        if not block:
            break
        held += len(block)
        if held > MAX_LINE_BYTES:  # a hostile line: keep no more than the line cap; it is then reported as not JSON
            parts.append(block[:max(MAX_LINE_BYTES - held + len(block), 0)])
            break
        cut = block.find(b"\n")
        if cut >= 0:
            parts.append(block[:cut + 1])
            break
        parts.append(block)
    return start, b"".join(parts)


def draw_lines(files: list[str], n: int, seed: int) -> list[Draw]:
    """n lines, each drawn with probability proportional to its length in bytes (uniform byte offsets)."""
    sizes = [os.path.getsize(p) for p in files]
    total = sum(sizes)
    if total == 0:
        return []
    rng = random.Random(seed)
    offsets = sorted(rng.randrange(total) for _ in range(n))  # sorted: nearby reads reach the disk together
    wanted, index, base = [], 0, 0
    for offset in offsets:
        while offset >= base + sizes[index]:
            base += sizes[index]
            index += 1
        wanted.append((files[index], offset - base))
    with ThreadPoolExecutor(READERS) as pool:  # many reads in flight: a disk serves random reads faster in parallel
        draws = list(pool.map(_draw, wanted))
    rng.shuffle(draws)  # the resampled lengths feed packing, which depends on order
    return draws


def _draw(where: tuple[str, int]) -> Draw:
    path, offset = where
    with open(path, "rb") as f:
        start, line = line_at(f, offset)
    return Draw(path, len(line), line, start)


@dataclass
class LineCount:
    """Lines of all files together, and the blank ones among them: counted exactly, or estimated from random blocks."""

    lines: float
    """Lines (newlines, plus each file's last line when it has no newline)."""
    blank: float
    """Lines holding only whitespace (not rows)."""
    standard_error: float
    """Of lines - blank; 0 when counted exactly."""
    blocks: int
    """Blocks read; 0 when the files were scanned."""
    block_bytes: int
    """Bytes per block."""


class Concatenated:
    """All files as one byte range, read by (start, end) across file boundaries; safe to read from several threads."""

    def __init__(self, files: list[str]) -> None:
        self.files, self.sizes = files, [os.path.getsize(p) for p in files]
        self.total = sum(self.sizes)
        self.fds: dict[str, int] = {}
        self.lock = threading.Lock()

    def read(self, start: int, end: int) -> bytes:
        parts, base = [], 0
        for path, size in zip(self.files, self.sizes, strict=True):
            low, high = max(start, base), min(end, base + size)
            if low < high:
                parts.append(os.pread(self._fd(path), high - low, low - base))
            base += size
        return b"".join(parts)

    def _fd(self, path: str) -> int:
        with self.lock:
            if path not in self.fds:
                self.fds[path] = os.open(path, os.O_RDONLY)
            return self.fds[path]

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)


BLANK_AFTER = re.compile(rb"\n(?=[ \t\r\x0b\x0c]*\n)")  # a newline whose next line holds only whitespace
MARGIN = 256  # bytes read past a block to see whether the line after its last newline is blank


def _tally(data: bytes, limit: int) -> tuple[int, int]:
    """(newlines, blank lines) attributed to data[:limit]: a line to its newline, a blank line to the newline before it."""
    blank = sum(1 for _ in BLANK_AFTER.finditer(data, 0, min(len(data), limit + MARGIN)) if _.start() < limit)
    return data.count(b"\n", 0, limit), blank


def count_lines(files: list[str], blocks: int, block_bytes: int, seed: int) -> LineCount:
    """Lines of the files: exact when `blocks` blocks would read as much as the files hold, else a block estimate."""
    reader = Concatenated(files)
    total = reader.total
    try:
        if blocks * block_bytes >= total:
            return _scan(reader, block_bytes)
        rng = random.Random(f"lines-{seed}")  # a stream of its own: blocks do not depend on the drawn rows
        starts = total + block_bytes - 1  # block starts in [-B+1, F-1]; each byte lies in exactly B blocks
        firsts = sorted(rng.randrange(starts) - block_bytes + 1 for _ in range(blocks))

        def tally(a: int) -> tuple[int, int]:
            low = max(0, a)
            return _tally(reader.read(low, min(total, a + block_bytes + MARGIN)), min(total, a + block_bytes) - low)

        with ThreadPoolExecutor(READERS) as pool:  # reads in flight together; pread and count release the GIL
            tallies = list(pool.map(tally, firsts))
        edges = _edges(reader)
    finally:
        reader.close()
    scale = starts / block_bytes
    lines = interval([n * scale for n, _ in tallies], blocks)
    blank = interval([b * scale for _, b in tallies], blocks)
    rows = interval([(n - b) * scale for n, b in tallies], blocks)
    return LineCount(lines["estimate"] + edges[0], blank["estimate"] + edges[1], rows["standard_error"], blocks, block_bytes)


def _scan(reader: Concatenated, block_bytes: int) -> LineCount:
    newlines = blank = 0
    for i in range(0, reader.total, SCAN):
        n, b = _tally(reader.read(i, min(reader.total, i + SCAN + MARGIN)), min(reader.total, i + SCAN) - i)
        newlines, blank = newlines + n, blank + b
    lines, blank_first = _edges(reader)
    return LineCount(newlines + lines, blank + blank_first, 0.0, 0, block_bytes)


def _edges(reader: Concatenated) -> tuple[int, int]:
    """What the newlines of the joined files miss: a file's last line without a newline, and a blank first line with
    no newline before it (the first file's, or one after a file whose last line has no newline)."""
    unterminated = blank_first = 0
    base, newline_before = 0, False
    for size in reader.sizes:
        if size:
            if not newline_before:
                blank_first += BLANK_AFTER.match(b"\n" + reader.read(base, min(base + size, base + MARGIN))) is not None
            newline_before = reader.read(base + size - 1, base + size) == b"\n"
            unterminated += not newline_before
        base += size
    return unterminated, blank_first


def examples_from_lines(lines: LineCount, valid, blank, weight) -> dict:
    """Examples = non-blank lines x the share of them that are valid rows (drawn lines weighted by 1/p), with a
    delta-method interval. Blank lines are counted with the lines, since they are too short to be drawn reliably."""
    import numpy as np

    kept = ~blank
    w, v = weight[kept], valid[kept]
    n = len(w)
    share = float(np.sum(w * v) / np.sum(w)) if n else 0.0
    share_var = float(np.var(w * (v - share) / np.mean(w), ddof=1)) / n if n > 1 else 0.0
    rows = lines.lines - lines.blank
    estimate = rows * share
    standard_error = float(np.sqrt((share * lines.standard_error) ** 2 + rows ** 2 * share_var))
    half = Z95 * standard_error
    return {"estimate": estimate, "low": estimate - half, "high": estimate + half, "standard_error": standard_error,
            "lines": lines.lines, "blank_lines": lines.blank, "valid_share": share, "blocks": lines.blocks,
            "block_bytes": lines.block_bytes}


def interval(values, n: int) -> dict:
    """Estimate and 95% interval of a total from per-draw estimates."""
    import numpy as np

    mean = float(np.mean(values))
    sd = float(np.std(values, ddof=1)) if n > 1 else 0.0
    half = Z95 * sd / np.sqrt(n)
    return {"estimate": mean, "low": mean - half, "high": mean + half, "standard_error": sd / np.sqrt(n)}


def estimate(options: CountOptions, n: int, seed: int = 0, block_bytes: int = BLOCK_BYTES) -> tuple[Counted, dict]:
    """Estimates with 95% intervals, and a `Counted` whose lengths are a length-debiased resample of the drawn rows."""
    import numpy as np

    from trainsteps.data.tokenize import load

    if n < 2:
        raise InputError("count.error.sample_size", "count.hint.sample_size", value=n)
    started = time.perf_counter()
    files, hint = sources.expand(options.paths, options.dataset, options.split)
    for s in files:
        if s.kind != "json" or s.compression or _sniff_array(s.path):
            raise InputError("count.error.sample_format",
                             "count.hint.sample_compressed" if s.compression else "count.hint.sample_format", path=s.path,
                             kind=s.compression or ("a JSON array" if s.kind == "json" else s.kind))
    total_bytes = sum(os.path.getsize(s.path) for s in files)
    background = ThreadPoolExecutor(1)  # lines are counted from the blocks while the drawn rows are tokenized
    lines_future = background.submit(count_lines, [s.path for s in files], n, block_bytes, seed)
    background.shutdown(wait=False)
    draws = draw_lines([s.path for s in files], n, seed)
    # A few thousand rows: building the fast engine (seconds) would cost more than it saves, so auto means tokenizers.
    auto = options.engine_tokenizer == "auto"
    tokenizer = load(options.tokenizer, options.threads, "tokenizers" if auto else options.engine_tokenizer)
    if auto:
        tokenizer.engine_reason = "--sample tokenizes a few thousand rows, too few for fast-bpe to pay for its start-up"
    template = formats.template_for(options.template, options.tokenizer)
    malformed, invalid = Problems(), Problems()
    fmt = None
    texts, owner, sup_flags = [], [], []
    valid = np.zeros(len(draws), dtype=bool)
    plain = True
    blank = np.zeros(len(draws), dtype=bool)
    listed = set()

    def report(problems: Problems, d: Draw, reason: str) -> None:  # a line drawn twice is listed once
        if (d.path, d.start) not in listed:
            listed.add((d.path, d.start))
            problems.add(d.path, 0, f"{reason}, the line at byte {d.start:,}")

    for i, d in enumerate(draws):
        if not d.text.strip():
            malformed.blank_lines += 1
            blank[i] = True
            continue
        try:
            row = json.loads(d.text)
        except (ValueError, RecursionError) as exc:
            report(malformed, d, f"not JSON ({str(exc)[:80]})")
            continue
        if not isinstance(row, dict):
            report(malformed, d, "not a JSON object")
            continue
        if fmt is None:
            fmt = formats.resolve(hint, options.data_format, row, options.text_field)
            formats.check_columns(fmt, row)
            plain = fmt.kind == "text"
        try:
            pieces = formats.segments(fmt, row, template)
        except formats.RowError as exc:
            report(invalid, d, str(exc))
            continue
        valid[i] = True
        for text, sup in pieces:
            texts.append(text)
            owner.append(i)
            sup_flags.append(sup)
    lengths = np.asarray(tokenizer.lengths(texts), dtype=np.int64)
    owner_array = np.asarray(owner, dtype=np.int64)
    extra = ((tokenizer.special_tokens if options.add_special_tokens else 0) if plain else 0) + (1 if options.add_eos else 0)
    token_weight, supervised_weight = formats.piece_weights(sup_flags)
    tokens = np.bincount(owner_array, weights=lengths * token_weight, minlength=len(draws)).astype(np.int64) + extra * valid
    supervised = np.bincount(owner_array, weights=lengths * supervised_weight, minlength=len(draws)).astype(np.int64)
    supervised = supervised + extra * valid
    weight = total_bytes / np.asarray([d.line_bytes for d in draws], dtype=np.float64)  # 1 / p for each draw

    summary = {
        "sampled_rows": len(draws),
        "seed": seed,
        "total_bytes": total_bytes,
        "examples": examples_from_lines(lines_future.result(), valid, blank, weight),
        "tokens": interval(weight * tokens, len(draws)),
        "supervised_tokens": interval(weight * supervised, len(draws)),
        "confidence": 0.95,
    }
    resampled = _debiased(tokens[valid], supervised[valid], weight[valid], seed)
    counted = Counted([s.path for s in files], fmt.describe() if fmt else "-",
                      options.template if fmt and fmt.kind not in ("text", "prompt_completion") else "-", resampled,
                      len(draws), invalid, malformed, time.perf_counter() - started)
    from trainsteps.data.count import engine_of

    counted.tokenizer_engine = engine_of(tokenizer)
    return counted, summary


def _debiased(tokens, supervised, weight, seed: int) -> Lengths:
    """Resample the drawn rows with probability proportional to 1/p, so lengths follow the corpus, not the byte-weighted draw."""
    import numpy as np

    if len(tokens) == 0:
        return Lengths(tokens, supervised)
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(tokens), size=len(tokens), p=weight / weight.sum())
    return Lengths(tokens[picks], supervised[picks])


def _sniff_array(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["
