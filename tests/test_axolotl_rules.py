"""Axolotl's total_num_steps, against fixtures recorded from Axolotl 0.19.0's own `calculate_total_num_steps`."""

import random

import pytest

from trainsteps.derivation import Derivation
from trainsteps.frameworks import axolotl as ax
from trainsteps.frameworks.llamafactory import Count

from .conftest import load_fixture

RECORDED = load_fixture("wrappers", "axolotl_steps.json")
CASES = {c["name"]: c for c in RECORDED["cases"]}


def lengths_of(case):
    spec = case["lengths"]
    if spec["kind"] == "same":
        return [spec["a"]] * spec["n"]
    rng = random.Random(spec["seed"])
    return [rng.randint(spec["a"], spec["b"]) for _ in range(spec["n"])]


def steps(case, **kw):
    cfg = case["cfg"]
    d = Derivation()
    batch = ax.batch_size(d, cfg["micro_batch_size"], cfg["gradient_accumulation_steps"], cfg["world"])
    return ax.total_num_steps(d, case["lengths"]["n"], cfg["num_epochs"], batch, sample_packing=cfg.get("sample_packing", False),
                              eff_est=cfg.get("sample_packing_eff_est"), sequence_len=cfg.get("sequence_len", 512),
                              micro_batch_size=cfg["micro_batch_size"], **kw)


@pytest.mark.parametrize("name", ["plain", "plain_fraction_epochs"])
def test_without_packing_axolotl_rounds_the_whole_run_once(name):
    assert steps(CASES[name]).value == CASES[name]["total_num_steps"][0]


def test_with_an_efficiency_estimate_steps_come_from_the_token_count():
    case = CASES["eff_est"]
    assert steps(case, total_tokens=Count.of(case["total_tokens"])).value == case["total_num_steps"][0]


def test_with_equal_lengths_the_multipack_count_is_exact():
    case = CASES["sampler_equal"]
    cap = case["cfg"]["micro_batch_size"] * case["cfg"]["sequence_len"]
    bins = ax.first_fit_bins(lengths_of(case), cap)
    assert steps(case, bins=Count.of(bins), flash_packing=True).value == case["total_num_steps"][0]


def test_with_random_lengths_every_recorded_run_falls_in_the_estimated_range():
    case = CASES["sampler_random"]
    lengths = lengths_of(case)
    cap = case["cfg"]["micro_batch_size"] * case["cfg"]["sequence_len"]
    estimate = steps(case, bins=ax.bins_estimate(lengths, lengths, cap), flash_packing=True)
    assert not estimate.exact
    for recorded in case["total_num_steps"]:
        assert estimate.low <= recorded <= estimate.high
    assert len(set(case["total_num_steps"])) > 1  # Axolotl's own count moves between runs: an exact claim would be false


def test_axolotl_passes_its_estimate_as_max_steps_from_0_10():
    assert ax.MAX_STEPS_TO_TRAINER.at("0.9.2") is False
    assert ax.MAX_STEPS_TO_TRAINER.at("0.10.0") is True
