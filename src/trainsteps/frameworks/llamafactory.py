"""LLaMA-Factory: how its data pipeline turns the rows of `dataset:` into the `Num examples` the Trainer sees.

Order per dataset (`data/loader.py::_load_single_dataset`): `num_samples` from dataset_info.json, then
`max_samples` (the first N rows of EACH dataset), then format conversion. Then the datasets are merged
(`mix_strategy`), split (`val_size`; before tokenization from 0.9.4, after it before that), tokenized and,
with `packing`, packed per `datasets.map` batch. Steps are then plain HF Trainer on `len(train_dataset)`.

Pure functions only: counts and token lengths come in as numbers; readers live in `trainsteps.configs`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.count import Count
from trainsteps.versions import Timeline

NEWEST = "0.9.5"

VAL_SPLIT_STAGE = Timeline("llamafactory.val_split", [("0.6.0", "after_preprocess"), ("0.9.4", "before_preprocess")])
"""Where `val_size` cuts: after tokenization/packing (a fraction of packed rows) up to 0.9.3, raw rows from 0.9.4."""

CUTOFF_LEN_DEFAULT = Timeline("llamafactory.cutoff_len", [("0.6.0", 1024), ("0.9.1", 2048)])
"""Default `cutoff_len`."""

PACK_CAPACITY_OFFSET = Timeline(
    "llamafactory.pack_capacity", [("0.6.0", 0), ("0.9.0", -1), ("0.9.2", 0), ("0.9.3", -1)]
)
"""Tokens per packed SFT row = cutoff_len + offset (0.9.0-0.9.1 reserve one pad token; 0.9.3+ decrement
`cutoff_len` in DataArguments when `packing` is set)."""

SFT_PACKING = Timeline("llamafactory.sft_packing", [("0.6.0", "concat_blocks"), ("0.8.0", "greedy_knapsack")])
"""SFT packing algorithm: fixed blocks of the concatenated tokens before 0.8.0, greedy knapsack after."""

CUTOFF_DECREMENT_IN_ARGS = Timeline("llamafactory.pt_block", [("0.6.0", False), ("0.9.3", True)])
"""Whether `DataArguments.__post_init__` does `cutoff_len -= 1` when `packing` is set (0.9.3+): it shortens
the packed SFT rows and the pretraining blocks, but only when `packing` is written in the config."""

MIX_STRATEGIES = Timeline(
    "llamafactory.mix_strategy",
    [("0.6.0", ("concat", "interleave_under", "interleave_over")),
     ("0.9.5", ("concat", "interleave_under", "interleave_over", "interleave_once"))],
)
"""Values `mix_strategy` accepts."""

TRANSFORMERS_CEILING = Timeline(
    "llamafactory.transformers",
    [("0.8.0", None), ("0.9.0", "4.45.0"), ("0.9.1", "4.46.1"), ("0.9.2", "4.49.0"), ("0.9.3", "4.52.4"), ("0.9.4", "4.57.1"), ("0.9.5", "5.6.0")],
)
"""Newest transformers each release accepts (its `Requires-Dist`), the default release to model for it."""

STOPPING = {"interleave_under": "first_exhausted", "interleave_over": "all_exhausted",
            "interleave_once": "all_exhausted_without_replacement"}


# ---- datasets.map batching --------------------------------------------------------------------------------


def map_batches(n: int, batch_size: int = 1000, num_proc: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each batch `datasets.Dataset.map(batched=True)` hands the processor: `num_proc`
    contiguous shards (cut to `n`), each cut into batches of `batch_size`, the last one shorter."""
    procs = max(1, min(num_proc or 1, n))
    div, mod = divmod(n, procs)
    for rank in range(procs):
        start = div * rank + min(rank, mod)
        end = start + div + (rank < mod)
        for b in range(start, end, batch_size):
            yield b, min(b + batch_size, end)


# ---- packing ------------------------------------------------------------------------------------------------


def greedy_knapsack(lengths: Sequence[int], capacity: int) -> list[list[int]]:
    """LLaMA-Factory `processor_utils.greedy_knapsack`: fill one bin at a time with the largest item that fits."""
    numbers = sorted(lengths)
    bins = []
    while numbers:
        current, remaining = [], capacity
        while True:
            i = bisect.bisect(numbers, remaining)
            if i == 0:
                break
            remaining -= numbers[i - 1]
            current.append(numbers.pop(i - 1))
        if not current:  # an item longer than the bin: the processor drops it before packing
            numbers.pop()
            continue
        bins.append(current)
    return bins


def sft_packed_rows(lengths: Sequence[int], capacity: int, batch_size: int = 1000, num_proc: int | None = None,
                    algorithm: str = "greedy_knapsack") -> int:
    """Packed SFT rows: each map batch is packed on its own; rows longer than `capacity` are dropped."""
    total = 0
    for start, end in map_batches(len(lengths), batch_size, num_proc):
        chunk = [x for x in lengths[start:end] if x <= capacity] if algorithm == "greedy_knapsack" else lengths[start:end]
        if algorithm == "greedy_knapsack":
            total += len(greedy_knapsack(chunk, capacity))
        else:
            total += sum(chunk) // capacity
    return total


def pt_blocks(lengths_with_eos: Sequence[int], block: int, batch_size: int = 1000, num_proc: int | None = None) -> int:
    """Pretraining blocks: each map batch is concatenated and cut into `block` tokens, the remainder dropped."""
    return sum(sum(lengths_with_eos[s:e]) // block for s, e in map_batches(len(lengths_with_eos), batch_size, num_proc))


def pack_capacity(version: str, cutoff_len: int, packing_set_explicitly: bool) -> int:
    """Tokens per packed SFT row for this release."""
    offset = PACK_CAPACITY_OFFSET.at(version)
    if offset and not packing_set_explicitly and CUTOFF_DECREMENT_IN_ARGS.at(version):
        offset = 0  # 0.9.3+: the decrement lives in DataArguments and only fires when `packing` is set
    return cutoff_len + offset


def pt_block_size(version: str, cutoff_len: int, packing_set_explicitly: bool) -> int:
    return cutoff_len - 1 if packing_set_explicitly and CUTOFF_DECREMENT_IN_ARGS.at(version) else cutoff_len


# ---- sampling, splitting, mixing ---------------------------------------------------------------------------


def rows_after_sampling(rows: int, num_samples: int | None, max_samples: int | None, streaming: bool) -> int:
    """`num_samples` (dataset_info.json, with replacement beyond the size) then `max_samples` (first N)."""
    if num_samples is not None and not streaming:
        rows = num_samples
    if max_samples is not None:
        rows = min(max_samples, rows)
    return rows


def train_test_sizes(n: int, val_size: float) -> tuple[int, int]:
    """`datasets.Dataset.train_test_split(test_size=v)` as LLaMA-Factory calls it: a value above 1 is a row
    count, a fraction gives ceil(v * n) test rows (float arithmetic, as datasets does it)."""
    if val_size <= 1e-6:
        return n, 0
    if val_size > 1:
        test = int(val_size)
    else:
        test = math.ceil(val_size * n)
    return n - test, test


def interleave_rows(sizes: Sequence[int], strategy: str, probabilities: Sequence[float] | None = None, seed: int = 42) -> Count:
    """Rows after `datasets.interleave_datasets` with LLaMA-Factory's stopping strategy."""
    stopping = STOPPING[strategy]
    k = len(sizes)
    if probabilities is None:
        if stopping == "first_exhausted":
            return Count.of(k * min(sizes))
        if stopping == "all_exhausted":
            return Count.of(k * max(sizes))
        return Count.of(sum(sizes))
    try:
        return Count.of(_interleave_with_probabilities(sizes, probabilities, seed, stopping))
    except ImportError:  # numpy missing: the draw cannot be replayed, give the expected size and its bounds
        expected = min(s / p for s, p in zip(sizes, probabilities, strict=True) if p > 0)
        low, high = (min(sizes), sum(sizes)) if stopping == "first_exhausted" else (max(sizes), k * max(sizes) * 4)
        return Count(round(expected) if stopping == "first_exhausted" else sum(sizes), low, high)


def _interleave_with_probabilities(sizes, probabilities, seed, stopping) -> int:
    """Replays the seeded draw of `datasets` `_interleave_map_style_datasets` (blocks of 1000 choices)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    k = len(sizes)
    taken, position, exhausted = 0, [0] * k, [False] * k
    if stopping == "all_exhausted_without_replacement":
        return sum(sizes)
    stop = any if stopping == "first_exhausted" else all
    while True:
        for source in rng.choice(k, size=1000, p=probabilities):
            if stop(exhausted):
                return taken
            taken += 1
            position[source] += 1
            if position[source] >= sizes[source]:
                exhausted[source] = True
                position[source] = 0


# ---- the whole pipeline -------------------------------------------------------------------------------------


@dataclass(slots=True)
class Rows:
    """Rows of a dataset at one stage of the pipeline, with what is known about each row."""

    n: int
    """Number of rows."""
    valid: list[bool] | None = None
    """Whether LLaMA-Factory keeps each row (string response, well-formed roles); None = all assumed valid."""
    lengths: list[int] | None = None
    """Token length of each row after LLaMA-Factory's truncation, when a tokenizer was available."""
    low: list[int] | None = None
    """Lower estimate of each row's token length (from its characters)."""
    high: list[int] | None = None
    """Upper estimate of each row's token length."""
    invalid_unplaced: int = 0
    """Invalid rows whose position is no longer known (after a random draw): they give a range."""
    supervised: list[int] | None = None
    """Tokens of each row whose label is trained on, with `lengths` (same truncation)."""

    def _lists(self):
        return ("valid", "lengths", "low", "high", "supervised")

    def head(self, k: int) -> Rows:
        if k >= self.n:
            return self
        return Rows(k, **{f: None if getattr(self, f) is None else getattr(self, f)[:k] for f in self._lists()})

    def select(self, indices) -> Rows:
        picked = [int(i) for i in indices]
        return Rows(len(picked), **{f: None if getattr(self, f) is None else [getattr(self, f)[i] for i in picked] for f in self._lists()})

    def shuffled_size(self, n: int) -> Rows:
        """Same rows in an order we cannot replay: only the count and the number of invalid rows survive."""
        invalid = self.invalid + self.invalid_unplaced
        return Rows(n, invalid_unplaced=min(invalid, n))

    @property
    def invalid(self) -> int:
        return 0 if self.valid is None else self.valid.count(False)

    @staticmethod
    def concat(parts: list[Rows]) -> Rows:
        def joined(f):
            lists = [getattr(r, f) for r in parts]
            if f == "valid":
                return None if all(x is None for x in lists) else [v for r in parts for v in (r.valid or [True] * r.n)]
            return None if any(x is None for x in lists) else [v for x in lists for v in x]

        return Rows(sum(r.n for r in parts), joined("valid"), joined("lengths"), joined("low"), joined("high"),
                    sum(r.invalid_unplaced for r in parts), joined("supervised"))

    def keep_valid(self) -> Rows:
        if self.valid is None:
            return self
        keep = [i for i, ok in enumerate(self.valid) if ok]
        kept = self.select(keep)
        kept.valid = None
        kept.invalid_unplaced = self.invalid_unplaced
        return kept


@dataclass(slots=True)
class DatasetRows:
    """One entry of `dataset:` as read from disk."""

    name: str
    """Name in dataset_info.json."""
    rows: Rows
    """Its rows, before `num_samples` / `max_samples`."""
    num_samples: int | None = None
    """`num_samples` from dataset_info.json (a seeded random draw, with replacement beyond the size)."""


@dataclass(slots=True)
class PipelineInput:
    """The data settings of a LLaMA-Factory run (YAML keys of the same names)."""

    datasets: list[DatasetRows]
    stage: str = "sft"
    version: str = NEWEST
    cutoff_len: int | None = None
    max_samples: int | None = None
    val_size: float = 0.0
    packing: bool | None = None
    neat_packing: bool = False
    streaming: bool = False
    mix_strategy: str = "concat"
    interleave_probs: list[float] | None = None
    seed: int = 42
    preprocessing_batch_size: int = 1000
    preprocessing_num_workers: int | None = None


def train_examples(p: PipelineInput, d: Derivation, kept: list | None = None) -> Count:
    """`len(train_dataset)` as the Trainer will see it, with every step recorded in `d`; `kept`, when given, receives
    the rows that reach tokenization (before packing), for their tokens."""
    rows = _merge([_one_dataset(ds, p, d) for ds in p.datasets], p, d)
    if VAL_SPLIT_STAGE.at(p.version) == "before_preprocess":
        rows = _split_rows(rows, p, d)
        valid = _drop_invalid(rows, d)
        if kept is not None:
            kept.append(valid)
        return _pack(valid, p, d) if _packing_on(p) else _as_count(valid)
    valid = _drop_invalid(rows, d)
    if kept is not None:
        kept.append(valid)
    packed = _pack(valid, p, d) if _packing_on(p) else _as_count(valid)
    return _split_count(packed, p, d)


def _one_dataset(ds: DatasetRows, p: PipelineInput, d: Derivation) -> Rows:
    rows = ds.rows
    d.given(f"rows[{ds.name}]", rows.n, "llamafactory.rows", name=ds.name)
    if ds.num_samples is not None and not p.streaming:
        rows = rows.shuffled_size(ds.num_samples)
        d.add(f"rows[{ds.name}]", ds.num_samples, "num_samples", str(ds.num_samples), "llamafactory.num_samples", name=ds.name)
    if p.max_samples is not None and p.max_samples < rows.n:
        d.add(f"rows[{ds.name}]", p.max_samples, "min(max_samples, rows)", f"min({p.max_samples}, {rows.n})", "llamafactory.max_samples", name=ds.name)
        rows = rows.head(p.max_samples) if ds.num_samples is None else rows.shuffled_size(p.max_samples)
    return rows


def _merge(parts: list[Rows], p: PipelineInput, d: Derivation) -> Rows:
    if len(parts) == 1:
        return parts[0]
    sizes = [r.n for r in parts]
    if p.mix_strategy == "concat":
        d.add("rows_merged", sum(sizes), "sum(rows)", " + ".join(map(str, sizes)), "llamafactory.mix.concat")
        return Rows.concat(parts)
    count = interleave_rows(sizes, p.mix_strategy, p.interleave_probs, p.seed)
    why = "llamafactory.mix.interleave_probs" if p.interleave_probs else "llamafactory.mix.interleave"
    d.add("rows_merged", count.value, STOPPING[p.mix_strategy], ", ".join(map(str, sizes)), why,
          strategy=p.mix_strategy, stopping=STOPPING[p.mix_strategy], seed=p.seed)
    order = _interleave_order(sizes, p)
    if order is None:
        return Rows.concat(parts).shuffled_size(count.value)
    from trainsteps.mixing import per_source

    for source, facts in zip(p.datasets, per_source(order, sizes), strict=True):
        d.add(f"rows_from[{source.name}]", facts["rows"], "rows drawn from the source", f"{facts['rows']} / {facts['size']}",
              "llamafactory.mix.per_source", name=source.name, epochs=facts["epochs"])
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    return Rows.concat(parts).select(offsets[source] + row for source, row in order)


def _interleave_order(sizes: list[int], p: PipelineInput):
    """The exact (source, row) order of the mix (`mixing.interleave_indices`); None without numpy or when a source
    was itself drawn at random (num_samples), whose rows we cannot place."""
    if any(ds.num_samples is not None for ds in p.datasets):
        return None
    try:
        from trainsteps.mixing import interleave_indices

        return interleave_indices(sizes, p.interleave_probs, p.seed, STOPPING[p.mix_strategy])
    except ImportError:
        return None


def split_indices(n: int, val_size: float, seed: int) -> list[int] | None:
    """Train row indices of `train_test_split(test_size, seed)`: datasets draws one permutation with
    `np.random.default_rng(seed)`, test = the first n_test, train = the next n_train. None without numpy."""
    train, test = train_test_sizes(n, val_size)
    try:
        import numpy as np
    except ImportError:
        return None
    permutation = np.random.default_rng(seed).permutation(n)
    return [int(i) for i in permutation[test:test + train]]


def _split_rows(rows: Rows, p: PipelineInput, d: Derivation) -> Rows:
    if p.val_size <= 1e-6:
        return rows
    train, test = train_test_sizes(rows.n, p.val_size)
    formula = "rows - int(val_size)" if p.val_size > 1 else "rows - ceil(val_size x rows)"
    d.add("rows_train", train, formula, f"{rows.n} - {test}", "llamafactory.val.before", version=p.version, val=test)
    needs_order = rows.valid is not None or rows.lengths is not None or rows.low is not None
    indices = split_indices(rows.n, p.val_size, p.seed) if needs_order and not p.streaming else None
    if indices is not None:
        return rows.select(indices)
    return _proxy(rows, train)


def _proxy(rows: Rows, n: int) -> Rows:
    """`n` rows drawn in an order we cannot replay: keep the first `n` as a stand-in for the length estimate,
    and treat the invalid rows and exact lengths as unknown."""
    head = rows.head(n)
    exact = head.lengths
    return Rows(n, None, None, exact if exact is not None else head.low, exact if exact is not None else head.high,
                min(rows.invalid + rows.invalid_unplaced, n))


def _drop_invalid(rows: Rows, d: Derivation) -> Rows:
    placed = rows.invalid
    if placed:
        d.add("rows_valid", rows.n - placed, "rows - invalid", f"{rows.n} - {placed}", "llamafactory.invalid", invalid=placed)
    kept = rows.keep_valid()
    if kept.invalid_unplaced:
        d.add("rows_valid", f"{kept.n - kept.invalid_unplaced}..{kept.n}", "rows - invalid rows drawn", f"{kept.n} - (0..{kept.invalid_unplaced})",
              "llamafactory.invalid.range", invalid=kept.invalid_unplaced)
    return kept


def _as_count(rows: Rows) -> Count:
    if rows.invalid_unplaced:
        return Count(rows.n - rows.invalid_unplaced // 2, rows.n - rows.invalid_unplaced, rows.n)
    return Count.of(rows.n)


def _packing_on(p: PipelineInput) -> bool:
    if p.stage == "pt":
        return p.packing is not False
    return p.stage == "sft" and bool(p.packing or p.neat_packing)


def _pack(rows: Rows, p: PipelineInput, d: Derivation) -> Count:
    explicit = p.packing is not None or p.neat_packing
    cutoff = p.cutoff_len or CUTOFF_LEN_DEFAULT.at(p.version)
    if p.stage == "pt":
        block = pt_block_size(p.version, cutoff, explicit)
        d.add("block_size", block, "cutoff_len + offset", f"{cutoff} + ({block - cutoff})", "llamafactory.pt_block")
        count = lambda ls: pt_blocks(ls, block, p.preprocessing_batch_size, p.preprocessing_num_workers)  # noqa: E731
        why = "llamafactory.pack.pt"
    else:
        cap = pack_capacity(p.version, cutoff, explicit)
        d.add("pack_capacity", cap, "cutoff_len + offset", f"{cutoff} + ({cap - cutoff})", "llamafactory.pack.capacity", version=p.version)
        algorithm = SFT_PACKING.at(p.version)
        count = lambda ls: sft_packed_rows(ls, cap, p.preprocessing_batch_size, p.preprocessing_num_workers, algorithm)  # noqa: E731
        why = "llamafactory.pack.sft"
    batch, workers = p.preprocessing_batch_size, p.preprocessing_num_workers or 1
    if rows.lengths is not None and not rows.invalid_unplaced:
        return Count.of(d.add("rows_packed", count(rows.lengths), "packed rows per map batch", f"{rows.n} rows", why, batch=batch, workers=workers))
    if rows.low is not None and rows.high is not None:
        clip = (lambda ls: ls) if p.stage == "pt" else (lambda ls: [min(x, cap) for x in ls])  # noqa: E731 - rows are truncated to the cap first
        lo, hi = sorted((count(clip(rows.low)), count(clip(rows.high))))
        mid = count(clip([(a + b) // 2 for a, b in zip(rows.low, rows.high, strict=True)]))
        d.add("rows_packed", f"{lo}..{hi}", "packed rows per map batch (estimated lengths)", f"{rows.n} rows", "llamafactory.pack.estimate", batch=batch, workers=workers)
        return Count(mid, lo, hi)
    d.add("rows_packed", f"1..{rows.n}", "unknown token lengths", "", "llamafactory.pack.unknown")
    return Count(rows.n, 1, rows.n)


def _split_count(rows: Count, p: PipelineInput, d: Derivation) -> Count:
    if p.val_size <= 1e-6:
        return rows
    if rows.exact:
        train, test = train_test_sizes(rows.value, p.val_size)
        formula = "rows - int(val_size)" if p.val_size > 1 else "rows - ceil(val_size x rows)"
        return Count.of(d.add("rows_train", train, formula, f"{rows.value} - {test}", "llamafactory.val.after", version=p.version, val=test))
    result = rows.scaled(lambda n: train_test_sizes(n, p.val_size)[0])
    d.add("rows_train", f"{result.low}..{result.high}", "rows - ceil(val_size x rows)", "", "llamafactory.val.after", version=p.version, val="?")
    return result
