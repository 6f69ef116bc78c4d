"""Axolotl: its own step estimate (`utils/trainer.py::calculate_total_num_steps`) becomes HF's `max_steps`.

From 0.10.0 Axolotl passes `max_steps = cfg.max_steps or total_num_steps` to the Trainer, so the banner's
`Total optimization steps` is Axolotl's number and `Num Epochs` is back-computed by HF. `Num examples` is the
raw row count (packing happens inside Axolotl's sampler). Warmup and logging defaults are Axolotl's own.
"""

from __future__ import annotations

import math

from trainsteps.derivation import Derivation
from trainsteps.frameworks.count import Count
from trainsteps.versions import Timeline

NEWEST = "0.19.0"

MAX_STEPS_TO_TRAINER = Timeline("axolotl.max_steps", [("0.4.0", False), ("0.10.0", True)])
"""Whether Axolotl hands its total_num_steps estimate to HF as max_steps (PRs #2631/#2657)."""

DEFAULTS = {"micro_batch_size": 1, "num_epochs": 1.0, "sequence_len": 512, "val_set_size": 0.0}
"""Axolotl's schema defaults (utils/schemas/config.py, training.py, 0.19)."""


def batch_size(d: Derivation, micro_batch_size: int, ga: int, world: int, tp: int = 1, cp: int = 1) -> int:
    """`cfg.batch_size` = micro_batch_size x GA x (world // cp // tp) (`normalize_config`)."""
    ranks = world // cp // tp
    return d.add("axolotl.batch_size", micro_batch_size * ga * ranks, "mbs x GA x (W // cp // tp)", f"{micro_batch_size} x {ga} x {ranks}", "axolotl.batch_size")


def rows_after_val(d: Derivation, n: int, val_set_size: float) -> int:
    """`train_test_split(test_size=val_set_size, shuffle=False)`: a fraction takes ceil(v x n) rows, above 1 a count."""
    if not val_set_size:
        return n
    test = int(val_set_size) if val_set_size > 1 else math.ceil(val_set_size * n)
    return d.add("rows_train", n - test, "rows - val", f"{n} - {test}", "axolotl.val", val=test)


def total_num_steps(d: Derivation, rows: int, epochs: float, batch: int, *, sample_packing: bool = False,
                    eff_est: float | None = None, total_tokens: Count | None = None, sequence_len: int = 512,
                    micro_batch_size: int = 1, bins: Count | None = None, flash_packing: bool = True,
                    drop_last: bool = False) -> Count:
    """Axolotl's estimate of the optimizer steps, exactly as `calculate_total_num_steps` computes it."""
    if not sample_packing:
        return Count.of(d.add("axolotl.total_num_steps", math.ceil(rows * epochs / batch), "ceil(rows x epochs / batch_size)",
                              f"ceil({rows} x {_n(epochs)} / {batch})", "axolotl.steps.plain"))
    if eff_est:
        def by_tokens(tokens: int) -> int:
            return int(math.floor(0.99 * tokens / eff_est / sequence_len // batch) - 1) * epochs

        result = total_tokens.scaled(lambda t: int(by_tokens(t)))
        d.add("axolotl.total_num_steps", _show(result), "(floor(0.99 x tokens / eff_est / sequence_len // batch_size) - 1) x epochs",
              f"(floor(0.99 x {_show(total_tokens)} / {eff_est} / {sequence_len} // {batch}) - 1) x {_n(epochs)}", "axolotl.steps.eff_est")
        return result

    def by_bins(n_bins: int) -> int:
        sampler_len = n_bins if flash_packing else n_bins // micro_batch_size
        steps = int(math.floor(max(1, sampler_len * micro_batch_size // batch) * epochs))
        return steps - (math.ceil(epochs) if drop_last else 0)

    result = bins.scaled(by_bins)
    d.add("axolotl.total_num_steps", _show(result), "floor(max(1, sampler batches x mbs // batch_size) x epochs)",
          f"floor(max(1, {_show(bins)} x {micro_batch_size} // {batch}) x {_n(epochs)})", "axolotl.steps.sampler")
    return result


def bins_estimate(lengths_low: list[int], lengths_high: list[int], capacity: int) -> Count:
    """Multipack bins for unknown exact lengths: at least total tokens / capacity, first-fit leaves some room."""
    low = max(1, math.ceil(sum(min(x, capacity) for x in lengths_low) / capacity))
    high = max(1, math.ceil(sum(min(x, capacity) for x in lengths_high) / capacity * 1.05))
    return Count((low + high) // 2, low, high)


def warmup_steps(d: Derivation, total: int, warmup_steps: float | None, warmup_ratio: float | None) -> float:
    """Axolotl sets warmup itself (floor of ratio x total; default min(int(0.03 x total), 100); 1 becomes 2)."""
    if warmup_steps is not None:
        value = warmup_steps
    elif warmup_ratio is not None:
        value = d.add("warmup_steps", max(int(warmup_ratio * total), 0), "int(warmup_ratio x total)", f"int({warmup_ratio} x {total})", "axolotl.warmup.ratio")
    else:
        value = d.add("warmup_steps", min(int(0.03 * total), 100), "min(int(0.03 x total), 100)", f"min(int(0.03 x {total}), 100)", "axolotl.warmup.default")
    return 2 if value == 1 else value


def logging_steps(total: int) -> int:
    return max(min(int(0.005 * total), 10), 1)


def per_epoch_fraction(per_epoch: float, epochs: float) -> float | None:
    """`saves_per_epoch` / `evals_per_epoch` -> a fraction of max_steps (HF rounds it up); None when >= 1."""
    if per_epoch * epochs <= 0:  # no evaluation or save per epoch, or no epoch at all
        return None
    value = 1.0 / (per_epoch * epochs)
    return value if value < 1.0 else None


def _show(c: Count) -> str:
    return str(c.value) if c.exact else f"{c.low}..{c.high}"


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def first_fit_bins(lengths: list[int], capacity: int, bin_size: int = 200, group_size: int = 100_000) -> int:
    """Bins of Axolotl's multipack (>= 0.10) `pack_group` for one order of the rows: items in the given order, each
    into the first bin with room and fewer than `bin_size` items; groups of `group_size` items are packed apart.

    A max segment tree over the bins' remaining room finds the first bin that fits in O(log n); unopened bins hold
    the full capacity, so "no open bin fits" lands on the next new bin; a full bin's room is set to -1."""
    total = 0
    for g in range(0, len(lengths), group_size):
        group = lengths[g:g + group_size]
        size = 1 << max(1, (len(group) - 1).bit_length())
        tree = [capacity] * (2 * size)
        counts = [0] * size
        opened = 0
        for length in group:
            if tree[1] < length:  # longer than a bin: a bin of its own (as pack_group)
                leaf = opened
            else:
                node = 1
                while node < size:
                    node = 2 * node if tree[2 * node] >= length else 2 * node + 1
                leaf = node - size
            opened = max(opened, leaf + 1)
            counts[leaf] += 1
            room = tree[size + leaf] - length
            node = size + leaf
            tree[node] = room if counts[leaf] < bin_size else -1
            node //= 2
            while node:
                tree[node] = max(tree[2 * node], tree[2 * node + 1])
                node //= 2
        total += opened
    return total
