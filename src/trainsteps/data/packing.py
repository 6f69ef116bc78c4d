"""How many sequences each framework's packing makes of a list of token lengths (pure functions, no I/O).

Each algorithm follows the framework's own code at the cited release; tests compare them with fixtures recorded by
`tools/record_packing.py`, which runs the frameworks' real functions. Packing runs inside `datasets.map(batched=True)`
in every framework below, so it works on batches of 1000 rows, per worker shard: the batch layout is part of the rule.
"""

from __future__ import annotations

import bisect
import functools
import math
import random
from dataclasses import dataclass

from trainsteps.frameworks.axolotl import first_fit_bins as first_fit

# The packing primitives belong to the frameworks' rule modules; this module applies them to counted lengths.
from trainsteps.frameworks.llamafactory import greedy_knapsack as lf_greedy_knapsack
from trainsteps.frameworks.llamafactory import map_batches
from trainsteps.frameworks.trl import best_fit_decreasing
from trainsteps.versions import Timeline

MAP_BATCH = 1000  # datasets.map default batch_size, used by LLaMA-Factory (preprocessing_batch_size) and TRL


def greedy_knapsack(lengths: list[int], capacity: int) -> int:
    """LLaMA-Factory `processor_utils.greedy_knapsack`: bins made (the rule lives in frameworks.llamafactory)."""
    return len(lf_greedy_knapsack(lengths, capacity))


# capacity of a pack relative to cutoff_len, by LLaMA-Factory release (packing: true)
LF_CAPACITY_OFFSET = Timeline("llamafactory.packing_capacity", [
    ("0.8.0", 0),    # greedy_knapsack, capacity cutoff_len
    ("0.9.0", -1),   # rows encoded with cutoff_len - 1, capacity cutoff_len - 1
    ("0.9.2", 0),    # capacity cutoff_len, padded to cutoff_len + 1
    ("0.9.3", -1),   # DataArguments.__post_init__: cutoff_len -= 1 when packing
])


def llamafactory_sft(lengths: list[int], cutoff_len: int, num_proc: int | None = None, version: str = "0.9.5",
                     batch_size: int = MAP_BATCH) -> int:
    """Rows after LLaMA-Factory SFT packing (`PackedSupervisedDatasetProcessor`): greedy knapsack per map batch.

    `lengths` are the encoded lengths of the valid rows; rows are first truncated to the capacity (infer_seqlen), so
    none is dropped for length.
    """
    capacity = cutoff_len + LF_CAPACITY_OFFSET.at(version)
    lengths = [min(length, capacity) for length in lengths]
    return sum(greedy_knapsack(lengths[s:e], capacity) for s, e in map_batches(len(lengths), batch_size, num_proc))


def llamafactory_pt(lengths: list[int], cutoff_len: int, packing_set: bool = False, num_proc: int | None = None,
                    batch_size: int = MAP_BATCH) -> int:
    """Blocks after LLaMA-Factory pre-training (`PretrainDatasetProcessor`): each map batch's tokens (text + EOS)
    concatenated and cut into blocks; the remainder of each batch is dropped. `packing: true` written out makes the
    block cutoff_len - 1 (>= 0.9.3)."""
    block = cutoff_len - 1 if packing_set else cutoff_len
    return sum(sum(lengths[s:e]) // block for s, e in map_batches(len(lengths), batch_size, num_proc))


# ---------------------------------------------------------------- TRL

@dataclass(frozen=True)
class TrlPacking:
    """What TRL's `packing_strategy` names do in a release."""

    strategies: tuple
    """Strategy names accepted."""
    overflow: dict
    """strategy -> 'truncate' | 'split' | 'wrap' (how a row longer than max_length is handled)."""
    drops_empty: bool
    """Whether empty rows are filtered before packing."""


TRL_PACKING = Timeline("trl.packing", [
    ("0.15.0", TrlPacking(("wrapped",), {"wrapped": "wrap"}, False)),
    ("0.22.0", TrlPacking(("bfd", "wrapped"), {"bfd": "truncate", "wrapped": "wrap"}, False)),
    ("0.27.0", TrlPacking(("bfd", "wrapped"), {"bfd": "split", "wrapped": "wrap"}, False)),
    ("0.29.0", TrlPacking(("bfd", "bfd-requeue", "wrapped"), {"bfd": "truncate", "bfd-requeue": "split", "wrapped": "wrap"}, False)),
    ("1.0.0", TrlPacking(("bfd", "bfd_split", "bfd-requeue", "wrapped"),
                         {"bfd": "truncate", "bfd_split": "split", "bfd-requeue": "split", "wrapped": "wrap"}, True)),
])
TRL_UNMODELLED = (("0.7.5", "0.15.0", "count.trl.cld"), ("0.19.0", "0.22.0", "count.trl.segment_tree_bug"))


def trl(lengths: list[int], max_length: int, strategy: str = "bfd", num_proc: int | None = None, version: str = "1.16.0",
        batch_size: int = MAP_BATCH) -> int:
    """Rows after TRL `pack_dataset(strategy)` in `SFTTrainer` (per map batch of 1000 rows, per `dataset_num_proc` shard)."""
    rules = TRL_PACKING.at(version)
    if strategy not in rules.strategies:
        raise ValueError(f"TRL {version} has no packing_strategy {strategy!r} (it has {', '.join(rules.strategies)})")
    overflow = rules.overflow[strategy]
    total = 0
    for s, e in map_batches(len(lengths), batch_size, num_proc):
        batch = lengths[s:e]
        if overflow == "wrap":
            total += math.ceil(sum(batch) / max_length)
            continue
        if rules.drops_empty:
            batch = [n for n in batch if n > 0]
        if overflow == "truncate":
            batch = [min(n, max_length) for n in batch]
        else:
            batch = [max_length] * sum(n // max_length for n in batch) + [n % max_length for n in batch if n % max_length]
        total += best_fit_decreasing(batch, max_length)
    return total


# ---------------------------------------------------------------- ms-swift

def constant_volume(weights: list[int], capacity: int, fullest: bool) -> list[list[int]]:
    """`binpacking.to_constant_volume`: heaviest first; each item into a bin it fits in, the fullest one (binpacking
    <= 1.5.2; ties: the lowest index) or the emptiest one (>= 2.0.0; ties: the lowest index); a new bin otherwise.
    Returns bins of item indices (in order of creation)."""
    import heapq

    order = sorted(range(len(weights)), key=lambda k: -weights[k])
    bins: list[list[int]] = []
    if fullest:
        loads: list[tuple[int, int]] = []  # sorted (load, -index): the fullest fitting bin is the last one <= capacity - w
        for k in order:
            w = weights[k]
            i = bisect.bisect_right(loads, (capacity - w, 0))
            if i:
                load, neg = loads.pop(i - 1)
                bisect.insort(loads, (load + w, neg))
                bins[-neg].append(k)
            else:
                bins.append([k])
                bisect.insort(loads, (w, -(len(bins) - 1)))
        return bins
    heap: list[tuple[int, int]] = []  # (load, index): the emptiest bin fits, or none does
    for k in order:
        w = weights[k]
        if heap and heap[0][0] + w <= capacity:
            load, index = heapq.heappop(heap)
            bins[index].append(k)
            heapq.heappush(heap, (load + w, index))
        else:
            bins.append([k])
            heapq.heappush(heap, (w, len(bins) - 1))
    return bins


def swift(lengths: list[int], packing_length: int, packing_num_proc: int = 1, binpacking_major: int = 2,
          slice_rows: int = MAP_BATCH) -> int:
    """Rows after ms-swift `PackingDataset` (v3.4+): per worker chunk, 1000-row slices; the last bin of each slice is
    carried into the next one."""
    import numpy as np

    n = len(lengths)
    procs = max(1, min(packing_num_proc, math.ceil(n / slice_rows)))
    bounds = np.linspace(0, n, procs + 1, dtype=np.int64)
    total = 0
    for r in range(procs):
        chunk = lengths[bounds[r]:bounds[r + 1]]
        carry: list[int] = []
        for start in range(0, len(chunk), slice_rows):
            items = carry + list(chunk[start:start + slice_rows])
            finished = start + slice_rows >= len(chunk)
            bins = constant_volume(items, packing_length, fullest=binpacking_major < 2)
            if bins and not finished:
                carry = [items[k] for k in bins[-1]]
                bins = bins[:-1]
            else:
                carry = []
            total += len(bins)
    return total


# ---------------------------------------------------------------- Axolotl

def next_fit(lengths: list[int], capacity: int) -> int:
    """Axolotl `allocate_sequentially` (`sample_packing_sequentially`): rows in the given order, a new bin whenever the
    next row does not fit in the current one (no row limit per bin). Bins made."""
    bins, room = 0, 0
    for length in lengths:
        if bins and length <= room:
            room -= length
        else:
            bins, room = bins + 1, capacity - length
    return bins


AXOLOTL_MIN_SAMPLE_LEN = 2  # min_sample_len unset -> 2 (`filter_sequences_by_length`)


def axolotl_kept(lengths: list[int], sequence_len: int) -> list[int]:
    """Rows Axolotl keeps before packing with `excess_length_strategy: drop` (the default): 2 <= length <= sequence_len."""
    return [n for n in lengths if AXOLOTL_MIN_SAMPLE_LEN <= n <= sequence_len]


@dataclass(frozen=True)
class AxolotlPacking:
    """The multipack settings that decide how many bins Axolotl's sampler makes (`calculate_total_num_steps`)."""

    sequence_len: int
    """`sequence_len`: rows longer are dropped; the bin holds micro_batch_size x sequence_len tokens with flash packing."""
    micro_batch_size: int = 1
    """`micro_batch_size`."""
    flash_packing: bool = True
    """`attn_supports_packing and not multipack_real_batches`: one bin of mbs x sequence_len per micro batch (else
    bins of sequence_len, micro_batch_size of them per batch)."""
    bin_size: int = 200
    """`sample_packing_bin_size`: at most this many rows per bin (first-fit only)."""
    group_size: int = 100_000
    """`sample_packing_group_size`: rows packed per group, groups apart (first-fit only)."""
    sequential: bool = False
    """`sample_packing_sequentially`: next-fit in the sampler's order instead of first-fit."""

    @property
    def capacity(self) -> int:
        return self.micro_batch_size * self.sequence_len if self.flash_packing else self.sequence_len

    def bins(self, kept_in_order: list[int]) -> int:
        """Bins for one order of the kept rows."""
        if self.sequential:
            return next_fit(kept_in_order, self.capacity)
        return first_fit(kept_in_order, self.capacity, self.bin_size, self.group_size)

    def batches(self, bins: int) -> int:
        """Sampler batches (drop_last): one bin each with flash packing, else micro_batch_size bins each."""
        return bins if self.flash_packing else bins // self.micro_batch_size


AXOLOTL_COUNT_SAMPLES = 4  # MultipackBatchSampler num_count_samples (1 when WORLD_SIZE >= 4)
AXOLOTL_ORDERS = 16        # random orders trainsteps packs to describe the spread of Axolotl's minimum
AXOLOTL_Z = 3.0            # two-sided 99.7% of a normal (the sd comes from 16 orders: some margin)


def axolotl_orders_per_rank(world_size: int) -> int:
    """`MultipackBatchSampler.num_count_samples`: 4 random orders per rank, only 1 when WORLD_SIZE >= 4."""
    return 1 if world_size >= AXOLOTL_COUNT_SAMPLES else AXOLOTL_COUNT_SAMPLES


def axolotl_min_range(single: list[int], count_samples: int = AXOLOTL_COUNT_SAMPLES) -> tuple[int, int]:
    """Where the minimum of `count_samples` random orders (what `len(MultipackBatchSampler)` returns) falls, 99% of the
    time, given bin counts of single random orders: a normal fit of the single counts (mean m, sd s), whose minimum of
    k has mean m - a_k s and sd b_k s (order statistics of the normal: k = 4 gives 1.029 and 0.701), widened by z = 3
    since s itself comes from 16 orders; with 1 sample, m +- z s. Never above the largest count seen (a minimum of 4
    fresh orders exceeding 16 earlier ones is rarer than 1 in 4800)."""
    n = len(single)
    mean = sum(single) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in single) / (n - 1)) if n > 1 else 0.0
    shift, spread = min_of_normals(count_samples)
    centre = mean - shift * sd
    low = math.floor(centre - AXOLOTL_Z * spread * sd)
    high = math.ceil(centre + AXOLOTL_Z * spread * sd)
    return max(low, 0), min(high, max(single))


@functools.cache
def min_of_normals(k: int) -> tuple[float, float]:
    """(-E[min], SD[min]) of k independent standard normals, by integrating the density k phi(x) (1 - Phi(x))^(k-1)."""
    step, moments = 0.002, [0.0, 0.0, 0.0]
    for i in range(-5000, 5001):
        x = i * step
        density = k * math.exp(-x * x / 2) / math.sqrt(2 * math.pi) * (0.5 * math.erfc(x / math.sqrt(2))) ** (k - 1)
        for power in range(3):
            moments[power] += density * x ** power * step
    mean = moments[1] / moments[0]
    return -mean, math.sqrt(moments[2] / moments[0] - mean * mean)


def axolotl_range(lengths: list[int], sequence_len: int, micro_batch_size: int = 1, flash_packing: bool = True,
                  orders: int = AXOLOTL_ORDERS, seed: int = 0, bin_size: int = 200, group_size: int = 100_000,
                  sequential: bool = False, count_samples: int = AXOLOTL_COUNT_SAMPLES,
                  world_size: int | None = None) -> tuple[int, int]:
    """Range of `len(MultipackBatchSampler)` as Axolotl's `calculate_total_num_steps` computes it: sampler batches of
    the kept rows, the minimum over 4 unseeded random orders (so only a range can be given): (low, high).

    Each of `orders` random orders is packed as Axolotl packs it; `axolotl_min_range` turns their spread into the
    range of the minimum of 4. Equal lengths (or any data whose packing does not depend on the order) give low == high.

    With `world_size` W, each rank packs `axolotl_orders_per_rank(W)` orders and the smallest count over the ranks is
    taken (`gather_len_batches`). Ranks whose random state is the same draw the same orders (minimum of c orders);
    ranks that differ draw W c orders: the range runs from the low end of the second to the high end of the first.
    """
    if world_size is not None:
        per_rank = axolotl_orders_per_rank(world_size)
        same = axolotl_range(lengths, sequence_len, micro_batch_size, flash_packing, orders, seed, bin_size, group_size,
                             sequential, per_rank)
        apart = axolotl_range(lengths, sequence_len, micro_batch_size, flash_packing, orders, seed, bin_size, group_size,
                              sequential, per_rank * world_size)
        return min(same[0], apart[0]), max(same[1], apart[1])
    rules = AxolotlPacking(sequence_len, micro_batch_size, flash_packing, bin_size, group_size, sequential)
    kept = axolotl_kept(lengths, sequence_len)
    rng = random.Random(seed)
    single = []
    for _ in range(orders):
        order = kept[:]
        rng.shuffle(order)
        single.append(rules.batches(rules.bins(order)))
    low, high = axolotl_min_range(single, count_samples)
    fewest = rules.batches(math.ceil(sum(kept) / rules.capacity))  # no packing beats total tokens / capacity
    return max(low, fewest), high
