"""DeepSpeed's batch triple, against DeepSpeedConfig 0.19.8 (tests/fixtures/pretrain/deepspeed.json)."""

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.deepspeed import DeepSpeedSpec, derive_batch, resolve_auto, resolve_hf_batch

from .conftest import load

CASES = load("deepspeed")["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"tb{c['tb']}-mb{c['mb']}-ga{c['ga']}-dp{c['dp']}")
def test_batch_triple_matches_deepspeed(case):
    spec = DeepSpeedSpec(case["dp"], case["tb"], case["mb"], case["ga"])
    if case["error"] is None:
        triple = derive_batch(spec)
        assert [triple.train_batch_size, triple.micro_batch, triple.gradient_accumulation_steps] == case["result"]
    else:
        with pytest.raises(InputError) as info:
            derive_batch(spec)
        assert info.value.framework_error == case["error"]


def test_a_floor_to_zero_is_explained_with_a_hint():
    with pytest.raises(InputError) as info:
        derive_batch(DeepSpeedSpec(8, 16, 4, None))
    text, hint = info.value.render("en")
    assert "Gradient accumulation steps: 0 has to be greater than 0" in text
    assert "floor" in hint
    assert info.value.render("zh")[0] != text


def test_auto_takes_the_trainer_value():
    assert resolve_auto("auto", 8) == 8
    assert resolve_auto(4, 8) == 4


HF = load("deepspeed")["hf_auto"]["cases"]


@pytest.mark.parametrize("case", HF, ids=lambda c: str(c["config"]))
def test_hf_auto_values_are_filled_and_mismatches_reported_like_transformers(case):
    filled, mismatches = resolve_hf_batch(case["config"], case["bs"], case["ga"], case["world"])
    assert filled == case["filled"]
    assert mismatches == case["mismatches"]
