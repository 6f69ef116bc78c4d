"""The whole count: read every row, render it, tokenize it, and keep two lengths per example (all and supervised)."""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from trainsteps.data import formats, readers, sources
from trainsteps.data.readers import Problems
from trainsteps.errors import InputError


@dataclass
class CountOptions:
    """What to count and how to render rows; defaults match `trainsteps count` without options."""

    paths: list
    """Files, globs, folders, save_to_disk folders or a LLaMA-Factory dataset_info.json."""
    tokenizer: str | None
    """Path to a tokenizer.json or a local model folder (not needed for already tokenized .idx files)."""
    data_format: str = "auto"
    """auto | text | alpaca | sharegpt | openai | prompt_completion"""
    text_field: str | None = None
    """Column holding the text (format text); default `text`, else `content`."""
    template: str = "chatml"
    """Chat template for chat formats: chatml | llama3 | plain."""
    dataset: str | None = None
    """Entry name in a LLaMA-Factory dataset_info.json."""
    split: str = "train"
    """Split of a DatasetDict saved with save_to_disk."""
    add_special_tokens: bool = True
    """Add the tokenizer's post-processor tokens (BOS/EOS) to each plain-text example, as `tokenizer(text)` does."""
    add_eos: bool = False
    """Append one EOS token per example (LLaMA-Factory pre-training and TRL append one)."""
    threads: int | None = None
    """Tokenizer threads (RAYON_NUM_THREADS); default all cores."""
    progress: bool | None = None
    """Progress bar on stderr; None: only when stderr is a terminal."""
    rows_only: bool = False
    """Without a tokenizer, count rows only (every length 0) instead of refusing text."""
    keep_order: bool = True
    """Keep each example's lengths in file order (packing needs them: 16 bytes per example). False keeps only how
    many examples have each length (`stats.Distribution`), so memory stays flat whatever the corpus size."""
    engine_tokenizer: str = "auto"
    """Which engine counts tokens: auto | tokenizers | fast-bpe (see data/tokenize.py)."""
    max_line_bytes: int | None = None
    """Longest line read; a longer one is reported as malformed (default `readers.MAX_LINE_BYTES`, 16 MiB)."""


@dataclass
class Lengths:
    """Per-example token counts, in file order (or only their distribution, with `keep_order=False`)."""

    tokens: object
    """numpy int64 array (or `stats.Distribution`): all tokens of each example as tokenized (before any cutoff)."""
    supervised: object
    """numpy int64 array (or `stats.Distribution`): tokens whose labels are not masked (assistant turns; everything
    for plain text)."""


class LengthTally:
    """Examples per length, grown as longer examples arrive."""

    def __init__(self) -> None:
        import numpy as np

        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, lengths) -> None:
        import numpy as np

        self.add_counts(np.bincount(lengths))

    def add_counts(self, counts) -> None:
        """Add a tally made elsewhere (`counts[l]` examples of length l)."""
        import numpy as np

        if len(counts) > len(self.counts):
            self.counts = np.concatenate([self.counts, np.zeros(len(counts) - len(self.counts), dtype=np.int64)])
        self.counts[:len(counts)] += counts


@dataclass
class Counted:
    """The result of a full count."""

    files: list
    """The files read, in order."""
    row_format: str
    """Format and columns used, e.g. `alpaca {'prompt': 'instruction', ...}`."""
    template: str
    """Chat template used (chat formats only)."""
    lengths: Lengths
    """Lengths of the valid examples."""
    rows_read: int = 0
    """Rows parsed from the files (valid or not)."""
    invalid: Problems = field(default_factory=Problems)
    """Rows a framework would drop (wrong roles, no response...), with file and line."""
    malformed: Problems = field(default_factory=Problems)
    """Lines that are not JSON objects, with file and line."""
    seconds: float = 0.0
    """Wall time of the count."""
    tokenizer_engine: dict | None = None
    """`{"engine": ..., "why": ...}`: which engine counted the tokens and why (None without a tokenizer)."""
    from_cache: bool = False
    """True when the count was read from the count cache (`data.cache`) instead of the files."""
    cache_rebuilt: bool = False
    """True when the cached count of these files was damaged: it was removed and the files counted again."""

    @property
    def examples(self) -> int:
        return len(self.lengths.tokens)


class RowsOnly:
    """No tokenizer, and only rows are wanted (`plan --data` without packing): every text counts 0 tokens, so the rows
    (and the rows a framework drops) are counted exactly and the token totals are known to be unknown."""

    special_tokens = 0

    def lengths(self, texts: list[str]) -> list[int]:
        return [0] * len(texts)


class _NoTokenizer:
    """Stands in when no tokenizer was given: fine for pre-tokenized rows, an error as soon as text must be encoded."""

    special_tokens = 0

    def lengths(self, texts: list[str]) -> list[int]:
        if texts:
            raise InputError("count.error.tokenizer_needed", "count.hint.tokenizer_needed")
        return []


def count(options: CountOptions) -> Counted:
    import numpy as np

    from trainsteps.data.tokenize import load

    started = time.perf_counter()
    files, hint = sources.expand(options.paths, options.dataset, options.split)
    # Megatron .idx rows arrive already tokenized; only text needs a tokenizer.
    if options.tokenizer:
        tokenizer = load(options.tokenizer, options.threads, options.engine_tokenizer)
    else:
        tokenizer = RowsOnly() if options.rows_only else _NoTokenizer()
    template = formats.template_for(options.template, options.tokenizer)
    malformed, invalid = Problems(), Problems()
    per_example_extra = (tokenizer.special_tokens if options.add_special_tokens else 0) + (1 if options.add_eos else 0)
    state = {"format": None, "checked": None}
    token_parts, supervised_parts = [], []
    token_tally, supervised_tally = LengthTally(), LengthTally()
    rows_read = 0
    progress = Progress(sum(_size(s.path) for s in files), options.progress)

    def prepare(batch: readers.RowBatch):
        """Rows -> flat list of texts, the example each text belongs to, and which texts are supervised."""
        nonlocal rows_read
        fmt = state["format"]
        if fmt is None:
            fmt = state["format"] = formats.resolve(hint, options.data_format, batch.rows[0], options.text_field)
        if state["checked"] != batch.source.path:  # every file must have the columns the format reads
            formats.check_columns(fmt, batch.rows[0], batch.source.path)
            state["checked"] = batch.source.path
        if fmt.kind == "tokens":
            rows_read += len(batch.rows)
            given = [int(row[formats.TOKEN_COUNT]) for row in batch.rows]
            return [], list(range(len(given))), [True] * len(given), len(given), "tokens", given
        texts, owner, supervised, valid = [], [], [], 0
        for i, row in enumerate(batch.rows):
            try:
                pieces = formats.segments(fmt, row, template)
            except formats.RowError as exc:
                where = _where(batch, i)
                if batch.unit == "line":
                    invalid.add(batch.source.path, where, str(exc))
                else:  # a row or item number is not a line number: say which it is
                    invalid.add(batch.source.path, 0, f"{batch.unit} {where}: {exc}")
                continue
            for text, sup in pieces:
                texts.append(text)
                owner.append(valid)
                supervised.append(sup)
            valid += 1
        rows_read += len(batch.rows)
        return texts, owner, supervised, valid, fmt.kind, None

    def keep(tokens, supervised) -> None:
        if options.keep_order:
            token_parts.append(tokens)
            supervised_parts.append(supervised)
        else:
            token_tally.add(tokens)
            supervised_tally.add(supervised)

    def finish(prepared, lengths):
        texts, owner, supervised, valid, kind, given = prepared
        if given is not None:  # pre-tokenized rows: every token is trained on, nothing added
            keep(np.asarray(given, dtype=np.int64), np.asarray(given, dtype=np.int64))
            return
        plain = kind == "text"
        owner_array = np.asarray(owner, dtype=np.int64)
        length_array = np.asarray(lengths, dtype=np.int64)
        token_weight, supervised_weight = formats.piece_weights(supervised)
        tokens = np.bincount(owner_array, weights=length_array * token_weight, minlength=valid).astype(np.int64)
        sup = np.bincount(owner_array, weights=length_array * supervised_weight, minlength=valid).astype(np.int64)
        extra = per_example_extra if plain else (1 if options.add_eos else 0)
        keep(tokens + extra, sup + extra)

    # Read and render the next batch while the tokenizer (which releases the GIL) encodes the current one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = None
        done_before = 0
        for source in files:
            for batch in readers.read(source, malformed, max_line=options.max_line_bytes):
                prepared = prepare(batch)
                future = pool.submit(tokenizer.lengths, prepared[0])
                if pending is not None:
                    finish(pending[0], pending[1].result())
                pending = (prepared, future)
                progress.update(done_before + batch.bytes_done)
            done_before += _size(source.path)
        if pending is not None:
            finish(pending[0], pending[1].result())
    progress.close()

    empty = np.zeros(0, dtype=np.int64)
    if options.keep_order:
        lengths = Lengths(np.concatenate(token_parts) if token_parts else empty,
                          np.concatenate(supervised_parts) if supervised_parts else empty)
    else:
        from trainsteps.data.stats import Distribution

        lengths = Lengths(Distribution(token_tally.counts), Distribution(supervised_tally.counts))
    fmt = state["format"]
    return Counted([s.path for s in files], fmt.describe() if fmt else "-", options.template if fmt and fmt.kind not in
                   ("text", "prompt_completion") else "-", lengths, rows_read, invalid, malformed, time.perf_counter() - started,
                   engine_of(tokenizer))


def engine_of(tokenizer) -> dict | None:
    """Which engine a loaded tokenizer counts with, and why, for the report."""
    engine = getattr(tokenizer, "engine", None)
    return {"engine": engine, "why": tokenizer.engine_reason} if engine else None


def _where(batch: readers.RowBatch, index: int) -> int:
    lines = getattr(batch, "lines", None)
    return lines[index] if lines else batch.first_line + index


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class Progress:
    """A one-line progress bar on stderr (bytes read of all files); silent when stderr is not a terminal."""

    def __init__(self, total: int, enabled: bool | None):
        self.total = max(total, 1)
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.started = time.perf_counter()
        self.last = 0.0

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < 0.2:
            return
        self.last = now
        fraction = min(done / self.total, 1.0)
        rate = done / max(now - self.started, 1e-9) / 1e6
        bar = "#" * int(fraction * 30)
        sys.stderr.write(f"\r[{bar:<30}] {fraction:6.1%} {done / 1e6:,.0f}/{self.total / 1e6:,.0f} MB {rate:,.1f} MB/s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()


def count_cached(options: CountOptions, no_cache: bool = False, extra_settings: dict | None = None) -> Counted:
    """`count(options)`, answered from the count cache (`data.cache`) when the same files, tokenizer and settings were
    counted before; a fresh count is stored for the next time."""
    from trainsteps.data import cache

    if not cache.enabled(no_cache):
        return count(options)
    started = time.perf_counter()
    files, _ = sources.expand(options.paths, options.dataset, options.split)
    settings = {"format": options.data_format, "text_field": options.text_field, "template": options.template,
                "dataset": options.dataset, "split": options.split, "special": options.add_special_tokens,
                "eos": options.add_eos, "max_line_bytes": options.max_line_bytes,  # a longer line is skipped: fewer rows
                **(extra_settings or {})}
    try:
        cache_key = cache.key([s.path for s in files], options.tokenizer, settings)
    except OSError:
        return count(options)
    hit = cache.load(cache_key, _trusted)
    if hit not in (None, cache.DAMAGED) and not (options.keep_order and hit[1]["tallied"]):  # an ordered count also serves a tally
        return _from_cache(*hit, seconds=time.perf_counter() - started, tally=not options.keep_order)
    counted = count(options)
    counted.cache_rebuilt = hit == cache.DAMAGED
    cache.store(cache_key, *_to_cache(counted))
    return counted


def _trusted(arrays: dict, meta: dict) -> bool:
    """An entry `_from_cache` can read: the arrays and keys it uses, whole non-negative numbers, one length per example
    in each array (a tally holds examples per length instead, so its two arrays may differ in size)."""
    import numpy as np

    tokens, supervised = arrays.get("tokens"), arrays.get("supervised")
    if tokens is None or supervised is None or tokens.ndim != 1 or supervised.ndim != 1:
        return False
    if meta.get("tallied") is False and tokens.shape != supervised.shape:
        return False
    if not (np.issubdtype(tokens.dtype, np.integer) and np.issubdtype(supervised.dtype, np.integer)):
        return False
    if tokens.size and (tokens.min() < 0 or supervised.min() < 0):
        return False
    problems = meta.get("problems")
    return (isinstance(meta.get("files"), list) and isinstance(meta.get("tallied"), bool) and isinstance(meta.get("rows_read"), int)
            and isinstance(problems, dict) and {"invalid", "malformed"} <= set(problems)
            and all(isinstance(p, dict) and isinstance(p.get("count"), int) and isinstance(p.get("blank_lines"), int)
                    and isinstance(p.get("first"), list) and all(isinstance(x, list) for x in p["first"]) for p in problems.values()))


def _to_cache(counted: Counted) -> tuple[dict, dict]:
    from trainsteps.data.stats import Distribution

    lengths = counted.lengths
    tallied = isinstance(lengths.tokens, Distribution)
    arrays = {"tokens": lengths.tokens.counts if tallied else lengths.tokens,
              "supervised": lengths.supervised.counts if tallied else lengths.supervised}
    problems = {name: {"count": p.count, "first": [list(x) for x in p.first], "blank_lines": p.blank_lines}
                for name, p in (("invalid", counted.invalid), ("malformed", counted.malformed))}
    meta = {"files": counted.files, "row_format": counted.row_format, "template": counted.template, "tallied": tallied,
            "rows_read": counted.rows_read, "problems": problems}
    return arrays, meta


def _from_cache(arrays: dict, meta: dict, seconds: float, tally: bool) -> Counted:
    import numpy as np

    from trainsteps.data.stats import Distribution

    if tally and not meta["tallied"]:
        lengths = Lengths(Distribution(np.bincount(arrays["tokens"])), Distribution(np.bincount(arrays["supervised"])))
    elif meta["tallied"]:
        lengths = Lengths(Distribution(arrays["tokens"]), Distribution(arrays["supervised"]))
    else:
        lengths = Lengths(arrays["tokens"], arrays["supervised"])
    problems = {}
    for name, stored in meta["problems"].items():
        p = Problems(stored["count"], [tuple(x) for x in stored["first"]], stored["blank_lines"])
        problems[name] = p
    return Counted(meta["files"], meta["row_format"], meta["template"], lengths, meta["rows_read"], problems["invalid"],
                   problems["malformed"], seconds, from_cache=True)
