"""The users' cases behind the product, checked against the banners their real runs printed."""

import re

import trainsteps

from .conftest import FIXTURES

BANNER_LINE = re.compile(r">>\s+(?P<label>[A-Z][^=]+?) = (?P<value>[\d,]+)")


def printed(name: str) -> dict[str, str]:
    text = (FIXTURES / "seeds" / name).read_text(encoding="utf-8")
    return {m["label"]: m["value"] for m in BANNER_LINE.finditer(text)}


def test_seed_003_is_four_processes_on_a_floor_release():
    seen = printed("seed003_banner.log")
    s = trainsteps.plan(num_examples=128770, per_device_train_batch_size=8, gradient_accumulation_steps=8, world_size=4,
                        num_train_epochs=3, trainable_parameters=20971520, transformers="4.42.4")
    assert s.banner == seen


def test_seed_001_prints_3900_on_4_49_and_stops_before_epoch_300():
    seen = printed("seed001_banner.log")
    s = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,
                        num_train_epochs=300, transformers="4.49.0")
    assert {k: v for k, v in s.banner.items()} == {k: v for k, v in seen.items() if k in s.banner}
    assert s.derivation["num_update_steps_per_epoch"].substituted == "max(floor(105 / 8), 1)"
    assert [t.code for t in s.warnings] == ["HF_PLAN_LOOP_MISMATCH"]
