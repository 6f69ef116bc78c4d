"""The time model's arithmetic, read as a spec: wall = prepare + steps x t_step + evals x t_eval + saves x t_save."""

import pytest

from trainsteps import plan
from trainsteps.errors import InputError
from trainsteps.spec import RunSpec
from trainsteps.timing import (
    Interval,
    Rate,
    RunCounts,
    estimate,
    format_duration,
    parse_duration,
    remaining,
)

SEED_001 = RunSpec(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,
                   num_train_epochs=300, transformers="4.49.0")


def test_seed_001_at_4_seconds_a_step_is_15600_seconds():
    counts = RunCounts.from_schedule(plan(SEED_001))  # 3,900 comes from the engine (recorded runs)
    result = estimate(counts, Rate.from_step_seconds(4, "flag", "--step-time 4"))
    assert counts.optimizer_steps == 3900
    assert result.train.expected == 3900 * 4 == 15600
    assert result.wall_seconds.expected == 15600  # nothing else known: exactly steps x step time
    assert format_duration(result.wall_seconds.expected) == "4 h 20 min"
    assert format_duration(result.wall_seconds.expected, "zh") == "4 小时 20 分"


def test_parts_without_a_rate_are_left_out_and_named():
    counts = RunCounts(optimizer_steps=100, eval_count=4, save_count=2)
    result = estimate(counts, Rate.from_step_seconds(2))
    assert result.eval is None and result.save is None and result.prepare is None
    assert result.left_out == ("eval", "save", "prepare")
    assert result.to_dict()["parts"]["eval"] is None
    assert "evaluations" in result.to_dict()["notes"][-1]
    assert "评估" in result.to_dict("zh")["notes"][-1]


def test_wall_time_adds_every_known_part():
    counts = RunCounts(optimizer_steps=100, eval_count=4, save_count=2)
    result = estimate(counts, Rate(Interval.exact(2.0), "flag"), eval_seconds=Interval.exact(30.0),
                      save_seconds=Interval.exact(10.0), prepare_seconds=Interval.exact(600.0))
    assert result.wall_seconds == Interval.exact(600 + 100 * 2 + 4 * 30 + 2 * 10)
    assert result.left_out == ()


def test_parts_that_never_happen_cost_zero_not_unknown():
    result = estimate(RunCounts(optimizer_steps=10), Rate(Interval.exact(1.0), "flag"),
                      prepare_seconds=Interval.exact(0.0))
    assert result.eval == result.save == Interval.exact(0.0)
    assert result.left_out == ()


def test_gpu_hours_and_cost_follow_the_wall_time():
    result = estimate(RunCounts(optimizer_steps=3600), Rate(Interval(0.5, 1.0, 2.0), "flag"), gpus=8,
                      price_per_gpu_hour=2.0, currency="EUR", prepare_seconds=Interval.exact(0.0))
    assert result.gpu_hours == Interval(4.0, 8.0, 16.0)  # 3,600 s x 8 GPUs = 8 GPU-hours
    assert result.cost == Interval(8.0, 16.0, 32.0)
    assert result.to_dict()["cost"]["currency"] == "EUR"


def test_a_measured_rate_keeps_its_value_as_expected_and_spreads_around_it():
    rate = Rate.from_step_seconds(4.0)
    assert rate.step_seconds.low < rate.step_seconds.expected == 4.0 < rate.step_seconds.high
    assert rate.source == "measured"


def test_tokens_and_samples_per_second_become_seconds_per_step():
    assert Rate.from_tokens_per_second(8000, 32768).step_seconds.expected == pytest.approx(4.096)
    assert Rate.from_samples_per_second(20, 80).step_seconds.expected == 4.0
    rate = Rate.from_tokens_per_second(8000, 32768)
    assert rate.tokens_per_second.expected == pytest.approx(8000)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_a_rate_must_be_positive(bad):
    with pytest.raises(InputError, match="positive"):
        Rate.from_step_seconds(bad)


def test_remaining_counts_from_the_current_step_to_the_real_end():
    # seed 001: the bar line 78/3900 at 4.00 s/it; the run ends at step 3,900
    left = remaining(Rate(Interval.exact(4.0), "log"), 78, 3900)
    assert left.wall_seconds.expected == (3900 - 78) * 4 == 15288
    assert format_duration(left.wall_seconds.expected) == "4 h 14 min"
    assert left.left_out == ()  # nothing to prepare once the run is stepping


def test_counts_after_a_resume_skip_what_was_done():
    schedule = plan(RunSpec(num_examples=1000, per_device_train_batch_size=10, num_train_epochs=1,
                            eval_strategy="steps", eval_steps=10, save_steps=25, resume_from_step=50))
    counts = RunCounts.from_schedule(schedule)
    assert counts.start_step == 50
    assert counts.optimizer_steps == 50
    assert counts.eval_count == 5  # steps 60, 70, 80, 90, 100
    assert counts.save_count == len([s for s in schedule.run.save_steps if s > 50])


@pytest.mark.parametrize(("text", "seconds"), [
    ("4", 4), ("4s", 4), ("2.5m", 150), ("1h30m", 5400), ("1h 30min", 5400), ("12h", 43200), ("2d", 172800),
    ("250ms", 0.25), ("90:00", 5400), ("12:00:00", 43200), ("1-12:00:00", 129600),
])
def test_durations_are_read_as_people_type_them(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "4x", "-4", "0", "0s", "1e400", "h"])
def test_unreadable_or_non_positive_durations_are_refused(text):
    with pytest.raises(InputError):
        parse_duration(text)


@pytest.mark.parametrize(("seconds", "en", "zh"), [
    (15600, "4 h 20 min", "4 小时 20 分"), (273600, "3 d 4 h", "3 天 4 小时"), (90, "1 min 30 s", "1 分 30 秒"),
    (3600, "1 h", "1 小时"), (4, "4 s", "4 秒"), (0.25, "0.25 s", "0.25 秒"), (59.9, "59 s", "59 秒"),
])
def test_durations_are_said_as_people_say_them(seconds, en, zh):
    assert format_duration(seconds) == en
    assert format_duration(seconds, "zh") == zh


def test_the_derivation_shows_the_multiplication_in_both_languages():
    result = estimate(RunCounts(optimizer_steps=3900), Rate.from_step_seconds(4, "flag", "--step-time 4"))
    en = "\n".join(result.derivation.render("en"))
    zh = "\n".join(result.derivation.render("zh"))
    assert "3,900 × 4 s = 15,600" in en and "4 h 20 min" in en
    assert "3,900 × 4 s = 15,600" in zh and "4 小时 20 分" in zh
