"""Dataset mixing as `datasets` does it: which row of which source lands at each position of the mix.

`interleave_indices` replays `datasets.interleave_datasets` for map-style datasets (`_interleave_map_style_datasets`,
datasets 2.x-4.x): without probabilities the sources are cycled (first_exhausted: min length rows of each;
all_exhausted: max length rows of each, shorter sources wrapping around); with probabilities, numpy's
`default_rng(seed).choice(k, size=1000, p=probabilities)` picks the source of each row, 1000 picks at a time, and a
source restarts from its first row when it runs out; the mix stops when one source (first_exhausted) or every source
(all_exhausted) has run out once. `all_exhausted_without_replacement` visits every row once. `concatenate_indices`
is `concatenate_datasets`. Exact, since both are deterministic for a given seed.

`per_source` summarises a mix: rows taken from each source and the epochs of it they make.
"""

from __future__ import annotations

from collections.abc import Sequence

STOPPING_STRATEGIES = ("first_exhausted", "all_exhausted", "all_exhausted_without_replacement")


def concatenate_indices(sizes: Sequence[int]) -> list[tuple[int, int]]:
    return [(source, i) for source, n in enumerate(sizes) for i in range(n)]


def interleave_indices(sizes: Sequence[int], probabilities: Sequence[float] | None = None, seed: int | None = None,
                       stopping_strategy: str = "first_exhausted") -> list[tuple[int, int]]:
    """(source, row) at each position of `interleave_datasets(datasets, probabilities, seed, stopping_strategy)`."""
    if stopping_strategy not in STOPPING_STRATEGIES:
        raise ValueError(f"stopping_strategy {stopping_strategy!r}: use one of {', '.join(STOPPING_STRATEGIES)}")
    k = len(sizes)
    if probabilities is None:
        if stopping_strategy == "first_exhausted":
            return [(s, i) for i in range(min(sizes)) for s in range(k)]
        if stopping_strategy == "all_exhausted":
            return [(s, i % sizes[s]) for i in range(max(sizes)) for s in range(k)]
        return _without_replacement(sizes, None, seed)
    if stopping_strategy == "all_exhausted_without_replacement":
        return _without_replacement(sizes, probabilities, seed)
    import numpy as np

    rng = np.random.default_rng(seed)
    stop = any if stopping_strategy == "first_exhausted" else all
    exhausted, position, out = [False] * k, [0] * k, []
    while True:
        for source in rng.choice(k, size=1000, p=probabilities):
            if stop(exhausted):
                return out
            source = int(source)
            out.append((source, position[source]))
            position[source] += 1
            if position[source] >= sizes[source]:
                exhausted[source] = True
                position[source] = 0


def _without_replacement(sizes, probabilities, seed) -> list[tuple[int, int]]:
    """Every row once. Without probabilities: cycle over the sources, skipping those that ran out; with them: the
    seeded draws, a draw of a source that ran out taking nothing."""
    k = len(sizes)
    if probabilities is None:
        return [(s, i) for i in range(max(sizes, default=0)) for s in range(k) if i < sizes[s]]
    import numpy as np

    rng = np.random.default_rng(seed)
    position, out = [0] * k, []
    exhausted = [n <= 0 for n in sizes]
    while True:
        for source in rng.choice(k, size=1000, p=probabilities):
            if all(exhausted):
                return out
            source = int(source)
            if not exhausted[source]:
                out.append((source, position[source]))
                position[source] += 1
            if position[source] >= sizes[source]:
                exhausted[source] = True


def per_source(indices: Sequence[tuple[int, int]], sizes: Sequence[int]) -> list[dict]:
    """Rows taken from each source, distinct rows used, and the epochs of the source they make."""
    taken = [0] * len(sizes)
    for source, _ in indices:
        taken[source] += 1
    return [{"source": s, "size": n, "rows": taken[s], "distinct_rows": min(taken[s], n),
             "epochs": round(taken[s] / n, 4) if n else 0.0} for s, n in enumerate(sizes)]
