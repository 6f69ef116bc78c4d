"""Packed-sequence counts equal the frameworks' own packing code (fixtures recorded by tools/record_packing.py)."""

import importlib.util
import json
import random
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


def test_axolotl_range_never_goes_below_total_tokens_over_capacity():
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


# ---------------------------------------------------------------- Axolotl (MultipackBatchSampler, recorded)

def _axolotl(kind):
    return [r for r in _of("axolotl") if kind in r]


def _axolotl_ids(records):
    return [f"{r['case']['kind']}{r['case'].get('n', '')}-seq{r['sequence_len']}-mbs{r['micro_batch_size']}"
            f"{'-flash' if r['flash_packing'] else '-real'}-bin{r['bin_size']}-group{r['group_size']}"
            f"{'-sequential' if r['sequential'] else ''}-order{r.get('order_seed', 'random')}" for r in records]


def _rules(record):
    return packing.AxolotlPacking(record["sequence_len"], record["micro_batch_size"], record["flash_packing"],
                                  record["bin_size"], record["group_size"], record["sequential"])


def test_the_fixture_records_axolotl_orders_and_sampler_lengths():
    assert _axolotl("order_seed") and _axolotl("sampler_len")
    assert {r["sequential"] for r in _axolotl("sampler_len")} == {False, True}
    assert any(r["kept"] < len(lengths_for(r["case"])) for r in _of("axolotl"))  # rows over sequence_len (or < 2) dropped


@pytest.mark.parametrize("record", _of("axolotl"), ids=_axolotl_ids(_of("axolotl")))
def test_axolotl_keeps_the_rows_its_length_filter_keeps(record):
    assert len(packing.axolotl_kept(lengths_for(record["case"]), record["sequence_len"])) == record["kept"]


@pytest.mark.parametrize("record", _axolotl("order_seed"), ids=_axolotl_ids(_axolotl("order_seed")))
def test_axolotl_packs_a_given_order_into_as_many_batches_as_its_sampler(record):
    kept = packing.axolotl_kept(lengths_for(record["case"]), record["sequence_len"])
    order = random.Random(record["order_seed"]).sample(range(len(kept)), len(kept))
    rules = _rules(record)
    assert rules.batches(rules.bins([kept[i] for i in order])) == record["batches"]


@pytest.mark.parametrize("record", _axolotl("sampler_len"), ids=_axolotl_ids(_axolotl("sampler_len")))
def test_axolotl_range_holds_every_recorded_sampler_length(record):
    low, high = packing.axolotl_range(lengths_for(record["case"]), record["sequence_len"], record["micro_batch_size"],
                                      record["flash_packing"], bin_size=record["bin_size"], group_size=record["group_size"],
                                      sequential=record["sequential"])
    assert low <= min(record["sampler_len"]) and max(record["sampler_len"]) <= high
    assert high - low <= max(3, 5 * high // 100)  # and narrow: at most 5% (or 3 batches)


def test_minimum_of_k_normals_matches_the_order_statistics_table():
    # E[min] and SD[min] of k standard normals (Harter's tables), and a simulation for a larger k
    table = {1: (0.0, 1.0), 2: (0.5642, 0.8256), 3: (0.8463, 0.7480), 4: (1.0294, 0.7012)}
    for k, (shift, spread) in table.items():
        assert packing.min_of_normals(k) == pytest.approx((shift, spread), abs=1e-4)
    rng = random.Random(0)
    minima = [min(rng.gauss(0, 1) for _ in range(32)) for _ in range(20000)]
    mean = sum(minima) / len(minima)
    sd = (sum((m - mean) ** 2 for m in minima) / (len(minima) - 1)) ** 0.5
    assert packing.min_of_normals(32) == pytest.approx((-mean, sd), abs=0.02)


def test_axolotl_ranks_widen_the_range_between_one_order_and_the_minimum_over_all_ranks():
    rng = random.Random(5)
    lengths = [rng.randint(20, 1500) for _ in range(3000)]
    one_rank = packing.axolotl_range(lengths, 2048)
    assert packing.axolotl_range(lengths, 2048, world_size=1) == one_rank  # the recorded single-rank case
    two = packing.axolotl_range(lengths, 2048, world_size=2)  # 4 orders per rank: same orders, or 8
    assert two[0] <= one_rank[0] and two[1] == one_rank[1]
    eight = packing.axolotl_range(lengths, 2048, world_size=8)  # WORLD_SIZE >= 4: 1 order per rank, or 8 different
    single = packing.axolotl_range(lengths, 2048, count_samples=1)
    assert eight[1] == single[1] and eight[0] == packing.axolotl_range(lengths, 2048, count_samples=8)[0]
    assert eight[1] >= one_rank[1] and eight[0] <= one_rank[0]  # at least as wide on both sides


def test_axolotl_range_is_one_number_when_the_order_does_not_matter():
    assert packing.axolotl_range([600] * 2500, 2048) == (834, 834)  # 3 rows per bin
    assert packing.axolotl_range([600] * 2500, 2048, micro_batch_size=2, flash_packing=False) == (417, 417)


def test_next_fit_opens_a_bin_whenever_the_next_row_does_not_fit():
    assert packing.next_fit([5, 5, 3, 2, 6, 4], 10) == 3
    assert packing.next_fit([6, 5, 4], 10) == 2
