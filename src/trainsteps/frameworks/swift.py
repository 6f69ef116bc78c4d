"""ms-swift: its own train sampler drops N mod world size, its default accumulation aims at a global batch of 16,
`--split_dataset_ratio` takes a floor share of each dataset, and `--max_epochs` stops early without changing
the learning-rate schedule."""

from __future__ import annotations

import math

from trainsteps.derivation import Derivation
from trainsteps.versions import Timeline

NEWEST = "4.6.0"

SPLIT_RATIO_DEFAULT = Timeline("swift.split_dataset_ratio", [("3.0.0", 0.01), ("3.6.0", 0.0)])
"""Default `--split_dataset_ratio`."""

OWN_SAMPLER = Timeline("swift.sampler", [("3.0.0", False), ("3.3.0", True)])
"""Whether training uses ms-swift's BatchSamplerShard (N // world per rank, the remainder dropped)."""

DEFAULT_BATCH = 1
"""Default `--per_device_train_batch_size`."""


def default_gradient_accumulation(d: Derivation, per_device_batch: int, world: int) -> int:
    """`max(1, ceil(16 / per_device_train_batch_size / world_size))`, logged as `Setting args.gradient_accumulation_steps`."""
    value = max(1, math.ceil(16 / per_device_batch / world))
    return d.add("gradient_accumulation_steps", value, "max(1, ceil(16 / bs / W))", f"max(1, ceil(16 / {per_device_batch} / {world}))",
                 "swift.default_ga")


def sample_rows(d: Derivation, name: str, rows: int, sample: int) -> int:
    """`dataset#N` (ms-swift `sample_dataset`): floor(N / len) whole copies of the dataset, then N mod len rows drawn
    without replacement (`RandomState(data_seed).permutation(len)[:N mod len]`): every row is used floor(N / len) or
    one more times, N / len passes over the source per epoch."""
    copies, rest = divmod(sample, rows) if rows else (0, 0)
    return d.add(f"rows_sampled[{name}]", sample, "floor(N / len) x len + N mod len", f"{copies} x {rows:,} + {rest:,}",
                 "swift.sample", name=name, copies=copies, rest=rest, passes=f"{sample / rows:.3g}" if rows else "0")


def split_rows(d: Derivation, name: str, rows: int, sample: int | None, ratio: float) -> int:
    """Train rows of one dataset after `#N` sampling and `--split_dataset_ratio` (val = max(int(min(len, N) x r), 1))."""
    n = sample if sample is not None else rows
    if not ratio:
        return n
    val = max(int(min(rows, n) * ratio), 1)
    return d.add(f"rows_train[{name}]", n - val, "N - max(int(min(len, N) x ratio), 1)", f"{n} - {val}", "swift.split", name=name, val=val)


def loader_rows(d: Derivation, n: int, world: int) -> int:
    """Rows the loader really uses: each rank takes N // W rows, the remainder is dropped (no padding)."""
    kept = (n // world) * world
    return d.add("rows_used", kept, "floor(N / W) x W", f"floor({n} / {world}) x {world}", "swift.sampler", dropped=n - kept)
