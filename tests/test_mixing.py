"""Mixes replayed by trainsteps.mixing equal what `datasets.interleave_datasets` / `concatenate_datasets` build."""

import pytest

from trainsteps import mixing

datasets = pytest.importorskip("datasets")

CASES = [
    ([3, 4, 5], None, None, "first_exhausted"),
    ([3, 4, 5], None, None, "all_exhausted"),
    ([3, 4, 5], None, None, "all_exhausted_without_replacement"),
    ([50, 200], [0.3, 0.7], 42, "first_exhausted"),
    ([50, 200], [0.3, 0.7], 42, "all_exhausted"),
    ([50, 200], [0.3, 0.7], 7, "all_exhausted_without_replacement"),
    ([1200, 40, 700], [0.5, 0.1, 0.4], 42, "first_exhausted"),
    ([1200, 40, 700], [0.5, 0.1, 0.4], 3, "all_exhausted"),
    ([2500, 2500], [0.9, 0.1], 42, "first_exhausted"),
]


def _sources(sizes):
    return [datasets.Dataset.from_dict({"source": [s] * n, "row": list(range(n))}) for s, n in enumerate(sizes)]


@pytest.mark.parametrize("sizes,probabilities,seed,stopping", CASES)
def test_interleave_equals_datasets(sizes, probabilities, seed, stopping):
    mixed = datasets.interleave_datasets(_sources(sizes), probabilities=probabilities, seed=seed, stopping_strategy=stopping)
    expected = list(zip(mixed["source"], mixed["row"], strict=True))
    assert mixing.interleave_indices(sizes, probabilities, seed, stopping) == expected


def test_concatenate_equals_datasets():
    mixed = datasets.concatenate_datasets(_sources([3, 0, 5]))
    assert mixing.concatenate_indices([3, 0, 5]) == list(zip(mixed["source"], mixed["row"], strict=True))


def test_per_source_rows_and_epochs():
    indices = mixing.interleave_indices([50, 200], [0.3, 0.7], 42, "all_exhausted")
    summary = mixing.per_source(indices, [50, 200])
    assert sum(s["rows"] for s in summary) == len(indices)
    assert summary[1]["epochs"] >= 1 and summary[0]["epochs"] > 1  # the rarer source wraps around more often
