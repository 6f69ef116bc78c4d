"""TRL: SFT packing (how many packed rows the Trainer sees) and GRPO's repeated prompts (how many steps).

SFT: with `packing`, `Num examples` is the number of packed rows of `max_length` tokens, packed per
`datasets.map` batch of 1000 rows in each `dataset_num_proc` shard. GRPO: every prompt is sampled
`num_generations` times and each generation batch is reused `num_iterations x steps_per_generation` times,
so one epoch over N prompts is about N x num_generations / (global batch) optimizer steps.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from trainsteps.frameworks.llamafactory import map_batches
from trainsteps.versions import Timeline

NEWEST = "1.16.0"

PACKING = Timeline("trl.packing", [
    ("0.7.5", "constant_length"),   # ConstantLengthDataset precomputed (PR #979)
    ("0.15.0", "wrapped"),          # pack_examples / pack_dataset: concatenate and cut per map batch
    ("0.19.0", "bfd"),              # best-fit decreasing per map batch, long rows truncated (0.19-0.21 segment-tree bug)
    ("0.27.0", "bfd_split"),        # "bfd" splits long rows into max_length pieces (PR #4632)
    ("0.29.0", "bfd"),              # "bfd" truncates again; splitting is "bfd-requeue", later "bfd_split" (PR #5076)
])
"""What `packing: true` does by default in each release."""

MAX_LENGTH_KEY = Timeline("trl.max_length_key", [("0.7.5", "max_seq_length"), ("0.16.0", "max_length")])
"""Name of the sequence-length option (`max_seq_length` stays a deprecated alias for a while)."""

MAX_LENGTH_DEFAULT = 1024
"""Default `max_length` of SFTConfig."""

NUM_GENERATIONS_DEFAULT = 8
"""GRPOConfig default `num_generations`."""


def best_fit_decreasing(lengths: Sequence[int], capacity: int) -> int:
    """TRL `_pack_bfd`'s placement: longest first, each into the open bin with the least room that still fits; bins made.

    Open bins are kept as a sorted list of their free room, so the best fit is one bisection (O(n log n))."""
    bins = 0
    rooms: list[int] = []
    for length in sorted(lengths, reverse=True):
        index = bisect.bisect_left(rooms, length)
        if index < len(rooms):
            room = rooms.pop(index) - length
        else:
            bins += 1
            room = capacity - length
        if room > 0:
            bisect.insort(rooms, room)
    return bins


def bfd_bins(lengths: Sequence[int], capacity: int, split: bool = False) -> int:
    """Rows out of TRL's best-fit-decreasing packing of one map batch (`_pack_bfd`): empty rows skipped, long rows
    truncated (or split into `capacity` pieces), each row into the bin with the least room that still fits."""
    items = [x for x in lengths if x > 0]
    if split:
        items = [capacity] * sum(x // capacity for x in items) + [x % capacity for x in items if x % capacity]
    else:
        items = [min(x, capacity) for x in items]
    return best_fit_decreasing(items, capacity)


def wrapped_rows(lengths: Sequence[int], capacity: int) -> int:
    """Rows out of "wrapped" packing of one map batch: all tokens concatenated and cut, the last piece kept."""
    return math.ceil(sum(lengths) / capacity)


def packed_rows(lengths: Sequence[int], capacity: int, strategy: str = "bfd", num_proc: int | None = None) -> int:
    total = 0
    for start, end in map_batches(len(lengths), 1000, num_proc):
        chunk = lengths[start:end]
        if strategy == "wrapped":
            total += wrapped_rows(chunk, capacity)
        else:
            total += bfd_bins(chunk, capacity, split=strategy in ("bfd_split", "bfd-requeue"))
    return total


def grpo_steps_per_epoch(prompts: int, num_generations: int, per_device_batch: int, world: int, steps_per_generation: int,
                         num_iterations: int = 1) -> tuple[int, int]:
    """(generation batch in completions, micro-batches per epoch on each rank) for GRPO's RepeatSampler.

    The sampler takes whole chunks of generation_batch_size / num_generations prompts (an incomplete chunk is
    dropped), repeats each prompt num_generations times and each chunk num_iterations x steps_per_generation times."""
    generation_batch = per_device_batch * world * steps_per_generation
    chunks = (prompts * num_generations) // generation_batch
    return generation_batch, chunks * num_iterations * steps_per_generation
