"""Compare ways to fit the time model's efficiency by leave-one-source-out over the calibration sources only.

Each calibration source in turn is left out; a fit (and its interval) is made on the others and scored on the left-out
rows, by category, against the napkin rule. The held-out sets are not read. The fits compared:

    pooled            one regression over every row, each source weighing the same; a stack's level is what its rows
                      give; interval: in-sample residuals per stack/method, at least as wide as the out-of-source ones
    pooled+oos        the same point estimate, the out-of-source interval of `sources`
    sources           tools/fit_efficiency.py unshrunk (PSEUDO_SOURCES 0): an intercept per (source, stack, fp8) cell, facts only from
                      contrasts inside sources, a stack's level the mean of its sources' intercepts; out-of-source interval
    blend-kK          pooled facts; a stack's level the mean of its sources' intercepts, shrunk toward the mean of every
                      source's by K pseudo-sources (interval: pooled's, or +oos: out-of-source)
    sources-kK        sources, with the stack's level shrunk the same way (toward the mean of every 16-bit cell)

The choice, fixed before the runs: a fit whose interval holds at least 75 % of the left-out figures; of those, the
one ahead of the napkin in the most categories; then the lowest median error with every source counted once; then the
narrower interval.

    python tools/compare_fits.py            # every fit: the LOSO table and each left-out source's errors
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_time_model as bench  # noqa: E402
import fit_efficiency as sources  # noqa: E402
from trainsteps.timing import efficiency  # noqa: E402

POOLED_RIDGE = 0.05
POOLED_LOW_Q, POOLED_HIGH_Q = 0.05, 0.95


def pooled_fit(rows) -> dict[str, float]:
    """The first release's fit: weighted ridge over all rows, stacks unpenalized."""
    import numpy as np

    names = sorted({k for m in rows for k in sources.design(m)})
    x = np.array([[sources.design(m).get(n, 0.0) for n in names] for m in rows])
    y = np.array([math.log(m.mfu) for m in rows])
    per_group = Counter(m.group for m in rows)
    w = np.array([1.0 / per_group[m.group] for m in rows])
    w = w / w.mean()
    penalty = np.diag([0.0 if n.startswith("stack_") else POOLED_RIDGE for n in names])
    beta = np.linalg.solve(x.T @ (w[:, None] * x) + penalty * len(rows) / 10, x.T @ (w * y))
    return {n: float(b) for n, b in zip(names, beta, strict=True)}


def pooled_residuals(fit):
    """The first release's interval: in-sample residual quantiles per stack/method, each widened to at least the
    quantiles of every row's out-of-source residual."""
    def residuals(rows, coefficients):
        groups, pooled = defaultdict(list), []
        scored_with = _out_of_source(rows, coefficients, fit)
        for m in rows:
            pooled.append(math.log(m.mfu) - sources.predicted(m, scored_with[m.row_id]))
            r = math.log(m.mfu) - sources.predicted(m, coefficients)
            for key in (f"{m.facts.stack}/{m.facts.method}", f"*/{m.facts.method}", "*/*"):
                groups[key].append(r)
        floor = (_quantile(sorted(pooled), POOLED_LOW_Q), _quantile(sorted(pooled), POOLED_HIGH_Q))
        return {key: (min(_quantile(sorted(v), POOLED_LOW_Q), floor[0]), max(_quantile(sorted(v), POOLED_HIGH_Q), floor[1]),
                      len(v)) for key, v in groups.items()}
    return residuals


def out_of_source_residuals(fit):
    """The `sources` interval (fit_efficiency.residuals) around another fit."""
    def residuals(rows, coefficients):
        saved = sources.fit
        sources.fit = fit
        try:
            return sources.residuals(rows, coefficients)
        finally:
            sources.fit = saved
    return residuals


def _out_of_source(rows, coefficients, fit):
    chosen = {}
    for group in sorted({m.group for m in rows}):
        rest, own = [m for m in rows if m.group != group], [m for m in rows if m.group == group]
        refit = fit(rest) if {m.facts.stack for m in own} <= {m.facts.stack for m in rest} else coefficients
        chosen.update({m.row_id: refit for m in own})
    return chosen


def _quantile(values, q):
    pos = q * (len(values) - 1)
    lo, hi = int(math.floor(pos)), int(math.ceil(pos))
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def shrunk_levels(fit, pseudo_sources: float):
    """`fit`'s facts; each stack's level the mean of its (source, stack) cells' intercepts, shrunk toward the mean of
    every cell's by `pseudo_sources` cells at that mean."""
    def shrunk(rows):
        coefficients = fit(rows)
        facts = {n: v for n, v in coefficients.items() if not n.startswith("stack_")}
        cells = defaultdict(list)
        for m in rows:
            if m.facts.dtype != "fp8":
                cells[(m.group, m.facts.stack)].append(math.log(m.mfu) - sources.predicted(m, facts))
        intercept = {cell: statistics.fmean(v) for cell, v in cells.items()}
        overall = statistics.fmean(intercept.values())
        for stack in {s for _, s in intercept}:
            mine = [b for (_, s), b in intercept.items() if s == stack]
            facts[f"stack_{stack}"] = (sum(mine) + pseudo_sources * overall) / (len(mine) + pseudo_sources)
        for stack in {m.facts.stack for m in rows} - {s for _, s in intercept}:
            facts[f"stack_{stack}"] = coefficients[f"stack_{stack}"]  # an fp8-only stack keeps its own level
        return facts
    return shrunk


def fits():
    unshrunk = functools.partial(sources.fit, pseudo_sources=0.0)
    out = {"pooled": (pooled_fit, pooled_residuals(pooled_fit)),
           "pooled+oos": (pooled_fit, out_of_source_residuals(pooled_fit)),
           "sources": (unshrunk, out_of_source_residuals(unshrunk))}
    for k in (1, 3):
        blend = shrunk_levels(pooled_fit, k)
        out[f"blend-k{k}"] = (blend, pooled_residuals(blend))
        out[f"blend-k{k}+oos"] = (blend, out_of_source_residuals(blend))
        shrunk = functools.partial(sources.fit, pseudo_sources=k)
        out[f"sources-k{k}"] = (shrunk, out_of_source_residuals(shrunk))
    return out


def loso(rows, fit, residuals):
    """Each calibration source scored by a fit and interval made without it: (bench summary, {source: errors})."""
    merged, by_source = defaultdict(lambda: defaultdict(list)), {}
    saved = dict(efficiency.COEFFICIENTS), dict(efficiency.RESIDUALS)
    try:
        for group in sorted({m.group for m in rows}):
            train, own = [m for m in rows if m.group != group], [m for m in rows if m.group == group]
            coefficients = fit(train)
            _install(coefficients, residuals(train, coefficients))
            table = bench.score(own)
            by_source[group] = table["all"]
            for category, columns in table.items():
                for name, values in columns.items():
                    merged[category][name].extend(values)
    finally:
        _install(*saved)
    return bench.summary(merged), by_source


def _install(coefficients, residuals):
    efficiency.COEFFICIENTS.clear()
    efficiency.COEFFICIENTS.update(coefficients)
    efficiency.RESIDUALS.clear()
    efficiency.RESIDUALS.update(residuals)


def main() -> None:
    rows = sources.load("calibration")
    print("Leave one calibration source out (the held-out sets are not read)\n")
    print("| fit | median error | interval holds | median width | ahead of the napkin | median error, every source once |")
    print("|---|---|---|---|---|---|")
    details = []
    for name, (fit, residuals) in fits().items():
        summary, by_source = loso(rows, fit, residuals)
        overall = next(r for r in summary if r["category"] == "all")
        ahead = [r["category"] for r in summary if r["category"] != "all" and r["model_error"] < r["napkin_error"]]
        per_source = statistics.median(statistics.median(abs(x) for x in t["model"]) for t in by_source.values())
        print(f"| {name} | {overall['model_error']:.1%} | {overall['model_inside']:.0%} | {overall['model_width']:.2f}x | "
              f"{', '.join(ahead) or 'none'} | {per_source:.1%} |")
        details.append((name, summary))
    for name, summary in details:
        print(f"\n{name}\n{bench.markdown(summary)}")


if __name__ == "__main__":
    main()
