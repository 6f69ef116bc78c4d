"""Preference trainers cost their passes: a DPO pair is two rows trained and two reference forwards, not one row."""

import pytest

from trainsteps.errors import InputError
from trainsteps.timing.flops import (
    ModelShape,
    eval_flops_per_token,
    preference_flops,
    train_flops_per_token,
)

SHAPE = ModelShape(7e9, 7.6e9, 28, 3584, "test")


def test_a_dpo_pair_costs_two_trained_rows_and_two_reference_forwards():
    cost = preference_flops(SHAPE, 1000, "dpo")
    one_row = train_flops_per_token(SHAPE, 1000).expected * 1000
    forward = eval_flops_per_token(SHAPE, 1000) * 1000
    assert cost.train.expected == pytest.approx(2 * one_row + 2 * forward)
    assert cost.train.expected / one_row == pytest.approx(8 / 3, rel=0.02)  # 2 x 6N + 2 x 2N over 6N
    assert cost.prepare == 0


def test_precomputed_reference_log_probs_move_the_reference_into_preparation():
    live = preference_flops(SHAPE, 1000, "dpo")
    pre = preference_flops(SHAPE, 1000, "dpo", precompute_reference=True)
    assert pre.train.expected + pre.prepare == pytest.approx(live.train.expected)
    assert pre.prepare > 0 and "precomputed" in pre.passes


def test_reference_free_trainers_cost_only_the_policy():
    for trainer in ("orpo", "simpo", "cpo", "reward"):
        cost = preference_flops(SHAPE, 500, trainer)
        assert cost.train.expected == pytest.approx(2 * train_flops_per_token(SHAPE, 500).expected * 500)


def test_kto_trains_one_completion_with_a_kl_completion_beside_it():
    cost = preference_flops(SHAPE, 800, "kto", training="lora")
    trained = train_flops_per_token(SHAPE, 800, "lora").expected * 800
    assert cost.train.expected == pytest.approx(trained + 3 * eval_flops_per_token(SHAPE, 800) * 800)


def test_an_unknown_trainer_is_refused():
    with pytest.raises(InputError):
        preference_flops(SHAPE, 500, "ppo")


def test_an_evaluation_scores_a_pair_through_the_policy_and_the_reference_unless_the_reference_was_precomputed():
    """TRL's DPOTrainer.get_eval_dataloader scores the evaluation set with the reference once when
    precompute_ref_log_probs is set; every evaluation then runs the policy alone, as a reference-free trainer does."""
    forward = eval_flops_per_token(SHAPE, 1000) * 1000
    assert preference_flops(SHAPE, 1000, "dpo").evaluate == pytest.approx(4 * forward)
    assert preference_flops(SHAPE, 1000, "dpo", precompute_reference=True).evaluate == pytest.approx(2 * forward)
    for trainer in ("orpo", "simpo", "cpo"):
        assert preference_flops(SHAPE, 1000, trainer).evaluate == pytest.approx(2 * forward), trainer
