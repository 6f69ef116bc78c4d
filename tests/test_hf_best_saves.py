"""save_strategy="best", logging_first_step and eval_delay as the Trainer applies them (rules in docs/hf-trainer-rules.md §4).

The recorded runs in tests/fixtures/hf check the same rules against the real Trainer; these tests pin down the
options that the recordings cannot choose (which evaluations improve) and the refusals.
"""

from __future__ import annotations

import pytest

import trainsteps
from trainsteps.errors import InputError

EVAL_EVERY_7 = dict(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, max_steps=50,
                    eval_strategy="steps", eval_steps=7, save_strategy="best", metric_for_best_model="loss")


def test_best_saves_at_every_evaluation_by_default_and_says_it_is_an_upper_bound():
    s = trainsteps.plan(**EVAL_EVERY_7, transformers="4.49.0")
    assert s.run.save_steps == s.run.eval_steps
    assert "HF_BEST_SAVES_UPPER_BOUND" in [w.code for w in s.warnings]


def test_best_saves_only_at_the_evaluations_the_user_names():
    first = trainsteps.plan(**EVAL_EVERY_7, transformers="4.49.0", improving_evals="first")
    assert first.run.save_steps == first.run.eval_steps[:1]
    chosen = trainsteps.plan(**EVAL_EVERY_7, transformers="4.49.0", improving_evals="14, 35")
    assert chosen.run.save_steps == [14, 35]
    assert "HF_BEST_SAVES_UPPER_BOUND" not in [w.code for w in chosen.warnings]


def test_best_never_saves_without_evaluations():
    s = trainsteps.plan(**{**EVAL_EVERY_7, "eval_strategy": "no"}, transformers="5.23.0")
    assert s.run.save_steps == []
    assert "HF_BEST_NEVER_SAVES" in [w.code for w in s.warnings]


@pytest.mark.parametrize("improving", ["15", "7,abc"])
def test_improving_evals_must_name_evaluation_steps(improving):
    with pytest.raises(InputError):
        trainsteps.plan(**EVAL_EVERY_7, transformers="4.49.0", improving_evals=improving)


def test_best_is_refused_before_4_47_in_the_trainers_words():
    with pytest.raises(InputError) as caught:
        trainsteps.plan(**EVAL_EVERY_7, transformers="4.46.3")
    assert "best is not a valid IntervalStrategy" in str(caught.value)
    trainsteps.plan(**EVAL_EVERY_7, transformers="4.47.0")  # the first release with SaveStrategy.BEST


def test_best_needs_a_metric():
    with pytest.raises(InputError) as caught:
        trainsteps.plan(**{**EVAL_EVERY_7, "metric_for_best_model": None}, transformers="5.23.0")
    assert "metric_for_best_model` must be provided" in str(caught.value)


@pytest.mark.parametrize("strategy", ["steps", "epoch", "no"])
def test_logging_first_step_logs_step_one_whatever_the_strategy(strategy):
    s = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,
                        logging_strategy=strategy, logging_steps=7, logging_first_step=True, transformers="4.49.0")
    assert s.run.log_steps[0] == 1 and s.run.log_steps.count(1) == 1


def test_epoch_evaluation_with_a_delay_compares_the_epoch_the_trainer_keeps():
    # 143 batches, accumulation 3: the first epoch's last step is at batch 141, so state.epoch is 141/143 there.
    settings = dict(num_examples=1000, per_device_train_batch_size=7, gradient_accumulation_steps=3, num_train_epochs=3,
                    eval_strategy="epoch", eval_delay=1)
    cumulative = trainsteps.plan(**settings, transformers="4.44.2")
    assert len(cumulative.run.eval_steps) == 2 and cumulative.run.eval_steps == cumulative.run.epoch_end_steps[1:]
    whole = trainsteps.plan(**settings, transformers="5.23.0")  # the partial window steps: the epoch ends at 1.0
    assert whole.run.eval_steps == whole.run.epoch_end_steps


def test_split_batches_is_refused_where_the_trainer_cannot_set_it():
    settings = dict(num_examples=1047, per_device_train_batch_size=10, world_size=2, split_batches=True)
    with pytest.raises(InputError):
        trainsteps.plan(**settings, transformers="4.33.0")
    assert trainsteps.plan(**settings, transformers="4.35.0").run.optimizer_steps > 0


def test_a_resumed_run_keeps_the_intervals_of_its_checkpoint_from_4_32():
    settings = dict(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=3,
                    resume_from_step=20, save_strategy="steps", save_steps=10, checkpoint_save_steps=20)
    kept = trainsteps.plan(**settings, transformers="4.45.2")
    assert all(step % 20 == 0 or step == kept.run.max_steps for step in kept.run.save_steps)
    assert "HF_RESUME_KEEPS_CHECKPOINT_INTERVAL" in [w.code for w in kept.warnings]
    arguments = trainsteps.plan(**settings, transformers="4.31.0")  # the callbacks still read args.save_steps
    assert 30 in arguments.run.save_steps
