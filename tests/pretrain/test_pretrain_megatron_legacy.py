"""Legacy Megatron-LM (v2.6 megatron/data) against its own code (tests/fixtures/pretrain/megatron_legacy.json)."""

import pytest

from trainsteps.derivation import Derivation
from trainsteps.frameworks import gptdata
from trainsteps.frameworks.gptdata import SequenceLengths
from trainsteps.frameworks.megatron import MegatronSpec, _dataset_splits, legacy_lines
from trainsteps.logs.pretrain import explain_pretrain, parse_pretrain_log

from .conftest import load

LEGACY = load("megatron_legacy")
LENGTHS = load("neox")["lengths"]["L1000"]


@pytest.mark.parametrize("run", LEGACY["runs"], ids=lambda r: f"{r['split']}-{r['sizes']}")
def test_legacy_splits_lengths_and_printed_lines(run):
    assert gptdata.split_neox(run["split"], len(LENGTHS)) == run["boundaries"]
    spec = MegatronSpec(world_size=1, micro_batch_size=1, train_iters=1, seq_length=run["S"], split=run["split"], code="legacy")
    splits = _dataset_splits(spec, SequenceLengths(tuple(LENGTHS)), run["sizes"], Derivation(), [])
    for split, recorded in zip(splits, run["splits"], strict=True):
        assert split.length == recorded["len"]  # legacy: len = N (no NeoX off-by-one)
        assert split.printed_samples == recorded["sample_idx_rows"]  # prints N + 1
        expected = [ln for ln in recorded["log"] if not ln.startswith((" > WARNING", " > building shuffle"))]
        assert legacy_lines(split, run["S"]) == expected


def test_legacy_seed004_prints_one_epoch_outright():
    seed = LEGACY["seed004"]
    observed = parse_pretrain_log(seed["log"])
    assert observed["samples_per_epoch_line"] == 15_633_743
    facts = explain_pretrain(observed, seq_length=seed["S"], global_batch_size=1024, flavor="legacy").facts
    assert facts["iterations_per_epoch"] == 15_267
    assert facts["samples_built"] == seed["len"]
