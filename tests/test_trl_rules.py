"""TRL's SFT packing and GRPO sampling, against TRL's own code (tools/record_wrappers.py trl)."""

import json

import pytest

from trainsteps.frameworks import trl

from .conftest import FIXTURES

RECORDINGS = {p.stem.removeprefix("trl_functions_"): json.loads(p.read_text()) for p in sorted((FIXTURES / "wrappers").glob("trl_functions_*.json"))}
PACK_CASES = [(version, case) for version, rec in RECORDINGS.items() for case in rec["pack"]]
GRPO_CASES = [case for rec in RECORDINGS.values() for case in rec["grpo"]]


def effective(version: str, strategy: str) -> str:
    """What the strategy name meant in that release: "bfd" split long rows in 0.27-0.28."""
    return trl.PACKING.at(version) if strategy == "bfd" else strategy


@pytest.mark.parametrize("version, case", PACK_CASES, ids=lambda x: x if isinstance(x, str) else f"{x['name']}-{x['strategy']}-p{x['num_proc']}")
def test_packed_rows_match_trl_pack_dataset_of_each_release(version, case):
    assert trl.packed_rows(case["lengths"], case["max_length"], effective(version, case["strategy"]), case["num_proc"]) == case["rows"]


def test_the_release_matters_for_rows_longer_than_max_length():
    mixed = {v: c["rows"] for v, c in PACK_CASES if c["name"] == "mixed" and c["strategy"] == "bfd"}
    assert mixed["0.27.0"] > mixed["0.24.0"]  # 0.27 splits the 3000-token row, 0.24 truncates it


@pytest.mark.parametrize("case", GRPO_CASES, ids=lambda c: f"N{c['prompts']}-g{c['num_generations']}-bs{c['per_device_train_batch_size']}")
def test_grpo_micro_batches_per_epoch_match_the_repeat_sampler(case):
    generation_batch, loader_len = trl.grpo_steps_per_epoch(case["prompts"], case["num_generations"], case["per_device_train_batch_size"],
                                                            case["world_size"], case["steps_per_generation"], case["num_iterations"])
    assert generation_batch == case["generation_batch_size"]
    assert loader_len == case["loader_len"]


def test_steps_per_generation_defaults_to_the_accumulation_steps():
    for case in GRPO_CASES:
        assert case["steps_per_generation"] == case["gradient_accumulation_steps"]


def test_the_default_packing_changed_across_releases():
    assert trl.PACKING.at("0.14.0") == "constant_length"
    assert trl.PACKING.at("0.18.2") == "wrapped"
    assert trl.PACKING.at("0.27.1") == "bfd_split"
    assert trl.PACKING.at(trl.NEWEST) == "bfd"
