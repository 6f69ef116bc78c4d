"""Window arithmetic, splits and blend sizes against megatron-core 0.16.1 and GPT-NeoX (recorded fixtures)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainsteps.frameworks import gptdata

from .conftest import load

MCORE = load("mcore")
NEOX = load("neox")


@pytest.mark.parametrize("case", NEOX["splits"], ids=lambda c: f"{c['split']}-{c['size']}")
def test_neox_split_boundaries(case):
    assert gptdata.split_neox(case["split"], case["size"]) == case["boundaries"]


@pytest.mark.parametrize("case", [c for c in MCORE["cases"] if len(c["data"]) == 1], ids=lambda c: f"{c['split']}-{c['sizes']}")
def test_mcore_split_ranges_and_window_counts(case):
    lengths = MCORE["datasets"][case["data"][0]]
    ranges = gptdata.split_mcore(case["split"], len(lengths))
    extra = int(case.get("extra", True))
    for rng, split, size, name in zip(ranges, case["splits"], case["sizes"], ("train", "valid", "test"), strict=False):
        if split is None:
            assert rng is None or size is None
            continue
        assert rng == (split["begin"], split["end"])
        tokens = sum(lengths[rng[0]:rng[1]])
        assert tokens == split["tokens_per_epoch"]
        epochs = gptdata.epochs_needed(tokens, case["S"], size, extra)
        assert epochs == split["epochs"]
        built = gptdata.samples_built(epochs, tokens, case["S"], extra)
        if name == "valid" and case.get("drop_last_valid") is False:
            built = -(-(epochs * tokens - extra) // case["S"])
        assert built == split["len"]


def test_mcore_split_matrix_is_logged_as_megatron_prints_it():
    line = next(ln for ln in MCORE["cases"][0]["log"] if ln.startswith("Let split_matrix"))
    matrix = [None if m is None else (0 if m[0] == 0 else m[0], m[1]) for m in gptdata.split_matrix("969,30,1")]
    assert line == f"Let split_matrix = {matrix}"


@pytest.mark.parametrize("case", NEOX["weights"], ids=lambda c: str(c["weights"]))
def test_neox_weighted_num_samples_has_the_half_percent_surplus(case):
    assert gptdata.neox_weighted_num_samples(case["weights"], case["num_samples"]) == case["result"][1]


@pytest.mark.parametrize("case", [c for c in MCORE["cases"] if c.get("weights")], ids=lambda c: str(c["weights"]))
def test_mcore_blend_lengths_and_draws(case):
    for size, split in zip(case["sizes"], case["splits"], strict=False):
        targets, built = gptdata.mcore_blend_num_samples(case["weights"], size)
        assert [d["num_samples_requested"] for d in split["datasets"]] == built
        assert split["len"] == sum(targets) == size
        assert split["draws"] == targets


@given(st.integers(1, 10**12), st.integers(1, 8192), st.integers(0, 10**9), st.integers(0, 1))
def test_epochs_needed_is_the_smallest_that_covers_the_request(tokens, seq, samples, extra):
    epochs = gptdata.epochs_needed(tokens, seq, samples, extra)
    assert gptdata.samples_built(epochs, tokens, seq, extra) >= samples
    if epochs > 1:
        assert gptdata.samples_built(epochs - 1, tokens, seq, extra) < samples


@given(st.integers(1, 10**9), st.integers(1, 64), st.integers(1, 8192), st.integers(0, 1))
def test_token_range_inverts_the_sample_count(samples, epochs, seq, extra):
    low, high = gptdata.tokens_range_from_samples(samples, epochs, seq, extra)
    for tokens in {low, high}:
        if low <= high:
            assert gptdata.samples_built(epochs, tokens, seq, extra) == samples


@pytest.mark.parametrize("case", MCORE["cases"], ids=lambda c: f"{c['split']}-{c['sizes']}")
def test_every_logged_split_matrix(case):
    line = next(ln for ln in case["log"] if ln.startswith("Let split_matrix"))
    matrix = [None if m is None else (0 if m[0] == 0 else m[0], m[1]) for m in gptdata.split_matrix(case["split"])]
    assert line == f"Let split_matrix = {matrix}"
