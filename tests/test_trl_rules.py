"""TRL's SFT packing and GRPO sampling, against TRL's own code (tools/record_wrappers.py trl)."""

import pytest

from conftest import load_fixture
from trainsteps.frameworks import trl

RECORDED = load_fixture("wrappers", "trl_functions.json")


@pytest.mark.parametrize("case", RECORDED["pack"], ids=lambda c: f"{c['name']}-{c['strategy']}-p{c['num_proc']}")
def test_packed_rows_match_trl_pack_dataset(case):
    assert trl.packed_rows(case["lengths"], case["max_length"], case["strategy"], case["num_proc"]) == case["rows"]


@pytest.mark.parametrize("case", RECORDED["grpo"], ids=lambda c: f"N{c['prompts']}-g{c['num_generations']}-bs{c['per_device_train_batch_size']}")
def test_grpo_micro_batches_per_epoch_match_the_repeat_sampler(case):
    generation_batch, loader_len = trl.grpo_steps_per_epoch(case["prompts"], case["num_generations"], case["per_device_train_batch_size"],
                                                            case["world_size"], case["steps_per_generation"], case["num_iterations"])
    assert generation_batch == case["generation_batch_size"]
    assert loader_len == case["loader_len"]


def test_steps_per_generation_defaults_to_the_accumulation_steps():
    for case in RECORDED["grpo"]:
        assert case["steps_per_generation"] == case["gradient_accumulation_steps"]


def test_the_default_packing_changed_across_releases():
    assert trl.PACKING.at("0.14.0") == "constant_length"
    assert trl.PACKING.at("0.18.2") == "wrapped"
    assert trl.PACKING.at("0.27.1") == "bfd_split"
    assert trl.PACKING.at(trl.NEWEST) == "bfd"
