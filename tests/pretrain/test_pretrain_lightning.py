"""Lightning step counting against lightning 2.6.6 on CPU, 1 process and 2 gloo ranks (tests/fixtures/pretrain/lightning.json)."""

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.lightning import LightningSpec, plan_lightning

from .conftest import load

CASES = load("lightning")["cases"]


def _spec(case):
    return LightningSpec(num_samples=case["n"], batch_size=case["bs"], world_size=case.get("world", 1), accumulate_grad_batches=case["acc"],
                         max_epochs=case["max_epochs"], max_steps=case["max_steps"], limit_train_batches=case["limit"],
                         drop_last=case.get("drop_last", False))


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items() if k in ("n", "bs", "acc", "max_epochs",
                                                                                                          "max_steps", "limit", "world")))
def test_batches_steps_and_epochs_match_lightning(case):
    schedule = plan_lightning(_spec(case))
    d = schedule.derivation
    assert schedule.run.batches_per_epoch == case["num_training_batches"]
    assert d["estimated_stepping_batches"].value == case["estimated_stepping_batches"]
    assert schedule.run.optimizer_steps == case["global_step"]
    assert d["batches_run"].value == case["batches_run"]
    assert d["current_epoch"].value == case["current_epoch"]
    assert schedule.run.samples_seen == case["rows_seen_all_ranks"]


def test_the_partial_accumulation_window_is_flagged():
    schedule = plan_lightning(_spec(CASES[0]))  # 25 batches, accumulate 8
    assert "LIGHTNING_PARTIAL_WINDOW" in [t.code for t in schedule.warnings]


def test_a_fraction_below_one_batch_is_refused():
    with pytest.raises(InputError):
        plan_lightning(LightningSpec(num_samples=8, batch_size=4, max_epochs=1, limit_train_batches=0.1))
