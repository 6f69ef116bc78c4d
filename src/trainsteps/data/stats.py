"""Figures about a list of token lengths: totals, percentiles, a histogram, what a cutoff does."""

from __future__ import annotations

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


def summary(lengths) -> dict:
    """min / mean / percentiles / max of per-example lengths (numpy array)."""
    import numpy as np

    if len(lengths) == 0:
        return {"min": 0, "mean": 0.0, "max": 0, **{f"p{p}": 0 for p in PERCENTILES}}
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
    if cutoff and cutoff not in edges:
        edges.append(cutoff + 1)
    edges = sorted(e for e in set(edges) if e <= max(top, edges[1]))
    if edges[-1] < top:
        edges.append(top)
    counts, _ = np.histogram(lengths, bins=edges)
    return [{"from": int(lo), "to": int(hi) - 1, "examples": int(c)} for lo, hi, c in zip(edges[:-1], edges[1:], counts, strict=False)]


def over_cutoff(lengths, cutoff: int) -> dict:
    """Examples longer than the cutoff and the tokens truncation would cut off."""
    import numpy as np

    over = lengths > cutoff
    return {"cutoff": cutoff, "examples_over": int(over.sum()), "tokens_cut": int(np.maximum(lengths - cutoff, 0).sum()),
            "tokens_in_dropped": int(lengths[over].sum())}
