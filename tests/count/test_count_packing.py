"""Packed-sequence counts equal the frameworks' own packing code (fixtures recorded by tools/record_packing.py)."""

import importlib.util
import json
from pathlib import Path

import pytest

from trainsteps.data import packing

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "count" / "packing.json"
RECORDS = json.loads(FIXTURE.read_text())["records"] if FIXTURE.exists() else []


def _recorder():
    spec = importlib.util.spec_from_file_location("record_packing", ROOT / "tools" / "record_packing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lengths_for = _recorder().lengths_for


def _ids(records):
    return [f"{r['framework']}-{r['case']['kind']}-{r.get('cutoff_len') or r.get('max_length') or r.get('packing_length')}"
            f"-{r.get('strategy', '')}-{r.get('binpacking', '')}-np{r.get('num_proc') or r.get('packing_num_proc')}" for r in records]


def _of(name):
    return [r for r in RECORDS if r["framework"] == name]


def test_the_fixture_covers_each_framework():
    assert {r["framework"] for r in RECORDS} >= {"llamafactory", "trl", "ms-swift"}


@pytest.mark.parametrize("record", _of("llamafactory"), ids=_ids(_of("llamafactory")))
def test_llamafactory_greedy_knapsack_per_map_batch(record):
    lengths = lengths_for(record["case"])
    assert packing.llamafactory_sft(lengths, record["cutoff_len"], record["num_proc"], record["version"]) == record["sequences"]


@pytest.mark.parametrize("record", _of("trl"), ids=_ids(_of("trl")))
def test_trl_pack_dataset(record):
    lengths = lengths_for(record["case"])
    assert packing.trl(lengths, record["max_length"], record["strategy"], record["num_proc"], record["version"]) == record["sequences"]


@pytest.mark.parametrize("record", _of("ms-swift"), ids=_ids(_of("ms-swift")))
def test_ms_swift_packing_dataset(record):
    lengths = lengths_for(record["case"])
    major = int(record["binpacking"].split(".")[0])
    assert packing.swift(lengths, record["packing_length"], record["packing_num_proc"], major) == record["sequences"]


def test_map_batches_are_contiguous_shards_then_batches_of_1000():
    assert list(packing.map_batches(2500, 1000, None)) == [(0, 1000), (1000, 2000), (2000, 2500)]
    assert list(packing.map_batches(2500, 1000, 3)) == [(0, 834), (834, 1667), (1667, 2500)]
    assert list(packing.map_batches(2, 1000, 4)) == [(0, 1), (1, 2)]


def test_llamafactory_capacity_follows_the_release():
    assert packing.llamafactory_sft([4, 4, 4, 4], 8, version="0.8.3") == 2  # capacity cutoff_len
    assert packing.llamafactory_sft([4, 4, 4, 4], 8, version="0.9.1") == 4  # cutoff_len - 1
    assert packing.llamafactory_sft([4, 4, 4, 4], 8, version="0.9.2") == 2
    assert packing.llamafactory_sft([4, 4, 4, 4], 8, version="0.9.5") == 4


def test_trl_refuses_a_strategy_its_release_does_not_have():
    with pytest.raises(ValueError):
        packing.trl([1, 2], 8, "bfd_split", version="0.26.0")
    assert packing.trl([10, 3], 8, "bfd", version="0.27.0") == packing.trl([10, 3], 8, "bfd_split", version="1.0.0")


def test_axolotl_range_brackets_every_order_and_respects_the_lower_bound():
    lengths = lengths_for({"kind": "uniform", "low": 100, "high": 2048, "n": 3000, "seed": 7})
    low, high = packing.axolotl_range(lengths, 2048)
    assert -(-sum(lengths) // 2048) <= low <= high
    assert packing.first_fit([5] * 450, 10_000, bin_size=200) == 3  # at most 200 rows per bin


def _naive_first_fit(lengths, capacity, bin_size):
    rooms, counts = [], []
    for n in lengths:
        for b, room in enumerate(rooms):
            if room >= n and counts[b] < bin_size:
                rooms[b] -= n
                counts[b] += 1
                break
        else:
            rooms.append(capacity - n)
            counts.append(1)
    return len(rooms)


def _naive_constant_volume(weights, capacity, fullest):
    order = sorted(range(len(weights)), key=lambda k: -weights[k])
    sums = []
    for k in order:
        fits = [b for b in range(len(sums)) if sums[b] + weights[k] <= capacity]
        if fits:
            b = max(fits, key=lambda b: (sums[b], -b)) if fullest else min(fits, key=lambda b: (sums[b], b))
            sums[b] += weights[k]
        else:
            sums.append(weights[k])
    return len(sums)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 64), max_size=300), st.integers(64, 200), st.integers(1, 8))
def test_first_fit_with_a_segment_tree_is_plain_first_fit(lengths, capacity, bin_size):
    assert packing.first_fit(lengths, capacity, bin_size=bin_size) == _naive_first_fit(lengths, capacity, bin_size)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 50), max_size=200), st.integers(50, 120), st.booleans())
def test_constant_volume_bins_match_the_plain_scan(weights, capacity, fullest):
    assert len(packing.constant_volume(weights, capacity, fullest)) == _naive_constant_volume(weights, capacity, fullest)
