"""Figures about a list of token lengths: totals, percentiles, a histogram, what a cutoff does."""

from __future__ import annotations

import math
from dataclasses import dataclass

PERCENTILES = (50, 90, 95, 99)


@dataclass(frozen=True)
class CutoffRule:
    """What a framework does with an example longer than its cutoff (max_length / cutoff_len / sequence_len)."""

    framework: str
    """Framework name as given to --packing."""
    action: str
    """truncate | drop"""
    setting: str
    """The framework's name for the cutoff setting."""
    why: str
    """Message id explaining the rule (with the source of the default)."""


# Defaults of each framework (see docs/count.md for the source lines)
CUTOFF_RULES = (
    CutoffRule("llamafactory", "truncate", "cutoff_len", "count.cutoff.llamafactory"),
    CutoffRule("trl", "truncate", "max_length", "count.cutoff.trl"),
    CutoffRule("ms-swift", "drop", "max_length", "count.cutoff.swift"),
    CutoffRule("axolotl", "drop", "sequence_len", "count.cutoff.axolotl"),
)


class Distribution:
    """Examples per token length (`counts[l]` examples of l tokens): all the statistics need when the order of the
    examples does not matter (no packing). Its size follows the longest example, not the number of examples, so a
    count that keeps only this runs in flat memory however big the corpus is. Acts like the array it summarises."""

    def __init__(self, counts) -> None:
        import numpy as np

        self.counts = np.trim_zeros(np.asarray(counts, dtype=np.int64), "b")
        self.values = np.arange(len(self.counts), dtype=np.int64)

    def __len__(self) -> int:
        return int(self.counts.sum())

    def sum(self) -> int:
        return int(self.counts @ self.values)

    def min(self) -> int:
        return int(self.counts.nonzero()[0][0])

    def max(self) -> int:
        return len(self.counts) - 1

    def mean(self) -> float:
        return self.sum() / len(self)

    def percentiles(self, ps) -> list[int]:
        """numpy's `inverted_cdf` percentiles: the smallest length whose share of examples at or below it is >= p%."""
        import numpy as np

        cumulative = np.cumsum(self.counts)
        ranks = [max(1, math.ceil(p / 100 * len(self))) for p in ps]
        return [int(np.searchsorted(cumulative, r, side="left")) for r in ranks]

    def histogram(self, edges) -> list[int]:
        import numpy as np

        return np.histogram(self.values, bins=edges, weights=self.counts)[0].astype(np.int64)


def summary(lengths) -> dict:
    """min / mean / percentiles / max of per-example lengths (numpy array or Distribution)."""
    import numpy as np

    if len(lengths) == 0:
        return {"min": 0, "mean": 0.0, "max": 0, **{f"p{p}": 0 for p in PERCENTILES}}
    if isinstance(lengths, Distribution):
        values = lengths.percentiles(PERCENTILES)
    else:
        values = np.percentile(lengths, PERCENTILES, method="inverted_cdf")  # an observed length, not an interpolation
    return {"min": int(lengths.min()), "mean": round(float(lengths.mean()), 2), **{f"p{p}": int(v) for p, v in zip(PERCENTILES, values, strict=False)},
            "max": int(lengths.max())}


def histogram(lengths, cutoff: int | None = None) -> list[dict]:
    """Examples per power-of-two length band [lo, hi); the cutoff, when given, is also a band edge."""
    import numpy as np

    if len(lengths) == 0:
        return []
    top = int(lengths.max()) + 1
    edges = [0] + [2 ** k for k in range(4, max(5, top.bit_length() + 1))]
    if cutoff:
        edges.append(cutoff + 1)  # examples of exactly `cutoff` tokens are kept: their band ends there
    edges = sorted(e for e in set(edges) if e <= max(top, edges[1]))
    if edges[-1] < top:
        edges.append(top)
    counts = lengths.histogram(edges) if isinstance(lengths, Distribution) else np.histogram(lengths, bins=edges)[0]
    return [{"from": int(lo), "to": int(hi) - 1, "examples": int(c)} for lo, hi, c in zip(edges[:-1], edges[1:], counts, strict=False)]


def over_cutoff(lengths, cutoff: int) -> dict:
    """Examples longer than the cutoff and the tokens truncation would cut off."""
    import numpy as np

    if isinstance(lengths, Distribution):
        over = lengths.values > cutoff
        return {"cutoff": cutoff, "examples_over": int(lengths.counts[over].sum()),
                "tokens_cut": int(lengths.counts[over] @ (lengths.values[over] - cutoff)),
                "tokens_in_dropped": int(lengths.counts[over] @ lengths.values[over])}
    over = lengths > cutoff
    return {"cutoff": cutoff, "examples_over": int(over.sum()), "tokens_cut": int(np.maximum(lengths - cutoff, 0).sum()),
            "tokens_in_dropped": int(lengths[over].sum())}
