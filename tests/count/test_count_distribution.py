"""Without packing, `count` keeps only how many examples have each length: the same figures, in flat memory."""

import numpy as np
import pytest

from trainsteps.data import report
from trainsteps.data.count import CountOptions, count
from trainsteps.data.stats import PERCENTILES, Distribution, histogram, over_cutoff, summary

from .conftest import TINY_TOKENIZER, alpaca_rows, sharegpt_rows, text_rows, write_jsonl


@pytest.mark.parametrize("seed", range(20))
def test_distribution_statistics_equal_those_of_the_lengths_themselves(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, [5, 300, 5000][seed % 3], size=int(rng.integers(1, 3000)))
    dist = Distribution(np.bincount(lengths))
    assert (len(dist), dist.sum(), dist.min(), dist.max()) == (len(lengths), lengths.sum(), lengths.min(), lengths.max())
    assert dist.percentiles(PERCENTILES) == [int(v) for v in np.percentile(lengths, PERCENTILES, method="inverted_cdf")]
    assert summary(dist) == summary(lengths)
    cutoff = int(rng.integers(1, lengths.max() + 2))
    assert histogram(dist, cutoff) == histogram(lengths, cutoff)
    assert over_cutoff(dist, cutoff) == over_cutoff(lengths, cutoff)


@pytest.mark.parametrize("rows", [text_rows(3000, seed=2), alpaca_rows(1500, seed=3), sharegpt_rows(800, seed=4)],
                         ids=["text", "alpaca", "sharegpt"])
def test_a_count_without_order_reports_the_same_as_one_with_it(tmp_path, rows):
    path = str(write_jsonl(tmp_path / "d.jsonl", rows))
    ordered = count(CountOptions([path], str(TINY_TOKENIZER), progress=False))
    flat = count(CountOptions([path], str(TINY_TOKENIZER), progress=False, keep_order=False))
    assert isinstance(flat.lengths.tokens, Distribution)
    a = report.to_json(report.build(ordered, 128, [], None)[0], "en")
    b = report.to_json(report.build(flat, 128, [], None)[0], "en")
    for data in (a, b):
        data.pop("seconds")
    assert a == b
    assert a["examples"] == len(rows)


@pytest.mark.parametrize("cutoff", [512, 500])
def test_the_histogram_separates_rows_of_exactly_the_cutoff_from_longer_ones(cutoff):
    lengths = np.array([100, cutoff, cutoff, cutoff + 1, 900])
    bands = {(b["from"], b["to"]): b["examples"] for b in histogram(lengths, cutoff)}
    kept_band = next(band for band in bands if band[1] == cutoff)
    assert bands[kept_band] == 2 and (cutoff + 1) in {band[0] for band in bands}
