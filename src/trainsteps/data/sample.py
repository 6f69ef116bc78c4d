"""Estimate examples and tokens of a huge JSONL corpus from a few thousand random rows, read by seeking.

Sampling design: draw a byte offset uniformly over all files (concatenated) and take the line that contains it.
A line of b bytes is drawn with probability p = b / F (F = total bytes), so each draw gives an unbiased estimate of
any total (Hansen-Hurwitz): N = mean(F / b), tokens = mean(F * t / b). Draws are independent (with replacement),
so the 95% interval is mean +- 1.96 * sd / sqrt(n). Nothing is scanned: each draw reads a few KB around its offset.
Lengths for percentiles, the histogram and packing are resampled with weights 1/b, which undoes the length bias.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass

from trainsteps.data import formats, sources
from trainsteps.data.count import Counted, CountOptions, Lengths
from trainsteps.data.readers import Problems
from trainsteps.errors import InputError

Z95 = 1.959963984540054
CHUNK = 1 << 10  # first read around an offset; doubled while no newline is found


@dataclass
class Draw:
    """One sampled line."""

    path: str
    """File it came from."""
    line_bytes: int
    """Bytes of the line, newline included."""
    text: bytes
    """The line."""


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
    chunk = CHUNK
    while True:
        block = f.read(chunk)
        chunk *= 2
        if not block:
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
    offsets = sorted(rng.randrange(total) for _ in range(n))  # sorted: seeks go forward through each file
    draws, index, base = [], 0, 0
    handles = {}
    try:
        for offset in offsets:
            while offset >= base + sizes[index]:
                base += sizes[index]
                index += 1
            path = files[index]
            f = handles.get(path) or handles.setdefault(path, open(path, "rb"))  # noqa: SIM115 - closed below
            _, line = line_at(f, offset - base)
            draws.append(Draw(path, len(line), line))
    finally:
        for f in handles.values():
            f.close()
    rng.shuffle(draws)  # the resampled lengths feed packing, which depends on order
    return draws


def interval(values, n: int) -> dict:
    """Estimate and 95% interval of a total from per-draw estimates."""
    import numpy as np

    mean = float(np.mean(values))
    sd = float(np.std(values, ddof=1)) if n > 1 else 0.0
    half = Z95 * sd / np.sqrt(n)
    return {"estimate": mean, "low": mean - half, "high": mean + half, "standard_error": sd / np.sqrt(n)}


def estimate(options: CountOptions, n: int, seed: int = 0) -> tuple[Counted, dict]:
    """Estimates with 95% intervals, and a `Counted` whose lengths are a length-debiased resample of the drawn rows."""
    import numpy as np

    from trainsteps.data.tokenize import load

    if n < 2:
        raise InputError("count.error.sample_size", "count.hint.sample_size", value=n)
    started = time.perf_counter()
    files, hint = sources.expand(options.paths, options.dataset, options.split)
    for s in files:
        if s.kind != "json" or s.compression or _sniff_array(s.path):
            raise InputError("count.error.sample_format", "count.hint.sample_format", path=s.path,
                             kind=s.compression or ("a JSON array" if s.kind == "json" else s.kind))
    total_bytes = sum(os.path.getsize(s.path) for s in files)
    draws = draw_lines([s.path for s in files], n, seed)
    tokenizer = load(options.tokenizer, options.threads)
    template = formats.TEMPLATES[options.template]
    malformed, invalid = Problems(), Problems()
    fmt = None
    texts, owner, sup_flags = [], [], []
    valid = np.zeros(len(draws), dtype=bool)
    plain = True
    for i, d in enumerate(draws):
        if not d.text.strip():
            malformed.blank_lines += 1
            continue
        try:
            row = json.loads(d.text)
        except ValueError as exc:
            malformed.add(d.path, 0, f"not JSON ({str(exc)[:80]}) at a sampled offset")
            continue
        if not isinstance(row, dict):
            malformed.add(d.path, 0, "not a JSON object at a sampled offset")
            continue
        if fmt is None:
            fmt = formats.resolve(hint, options.data_format, row, options.text_field)
            formats.check_columns(fmt, row)
            plain = fmt.kind == "text"
        try:
            pieces = formats.segments(fmt, row, template)
        except formats.RowError as exc:
            invalid.add(d.path, 0, str(exc))
            continue
        valid[i] = True
        for text, sup in pieces:
            texts.append(text)
            owner.append(i)
            sup_flags.append(sup)
    lengths = np.asarray(tokenizer.lengths(texts), dtype=np.int64)
    owner_array = np.asarray(owner, dtype=np.int64)
    extra = ((tokenizer.special_tokens if options.add_special_tokens else 0) if plain else 0) + (1 if options.add_eos else 0)
    tokens = np.bincount(owner_array, weights=lengths, minlength=len(draws)).astype(np.int64) + extra * valid
    supervised = np.bincount(owner_array, weights=lengths * np.asarray(sup_flags, dtype=bool), minlength=len(draws)).astype(np.int64)
    supervised = supervised + extra * valid
    weight = total_bytes / np.asarray([d.line_bytes for d in draws], dtype=np.float64)  # 1 / p for each draw

    summary = {
        "sampled_rows": len(draws),
        "seed": seed,
        "total_bytes": total_bytes,
        "examples": interval(weight * valid, len(draws)),
        "tokens": interval(weight * tokens, len(draws)),
        "supervised_tokens": interval(weight * supervised, len(draws)),
        "confidence": 0.95,
    }
    resampled = _debiased(tokens[valid], supervised[valid], weight[valid], seed)
    counted = Counted([s.path for s in files], fmt.describe() if fmt else "-",
                      options.template if fmt and fmt.kind not in ("text", "prompt_completion") else "-", resampled,
                      len(draws), invalid, malformed, time.perf_counter() - started)
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
