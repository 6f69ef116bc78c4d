"""`Steps` reads like the list it stands for, and its JSON form is the list's, found without building the list."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.steps import LONG_LIST, Steps, compact_list

# a step list as the planners build one: single steps and repeating patterns, each starting past the last step
PIECES = st.lists(st.one_of(
    st.tuples(st.just("one"), st.integers(0, 5)),
    st.tuples(st.just("pattern"), st.integers(0, 5), st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(0, 40)),
), max_size=8)


def _build(pieces) -> tuple[Steps, list[int]]:
    steps, plain = Steps(), []
    for piece in pieces:
        gap = piece[1]
        start = (plain[-1] if plain else 0) + gap
        if piece[0] == "one":
            steps.append(start)
            plain.append(start)
        else:
            _, _, diffs, count = piece
            steps.extend_periodic(start, diffs, count)
            value = start
            for j in range(count):
                plain.append(value)
                value += diffs[j % len(diffs)]
    return steps, plain


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(PIECES, st.integers(-60, 200), st.integers(-60, 200), st.integers(-5, 200))
def test_steps_index_slice_search_and_compare_as_their_list_does(pieces, a, b, x):
    steps, plain = _build(pieces)
    assert list(steps) == plain and steps == plain and len(steps) == len(plain) and bool(steps) == bool(plain)
    assert list(steps[a:b]) == plain[a:b] and steps[::2] == plain[::2]
    if -len(plain) <= a < len(plain):
        assert steps[a] == plain[a]
    assert (x in steps) == (x in plain) and steps.count(x) == plain.count(x)
    assert x not in plain or steps.index(x) == plain.index(x)
    assert steps.at_least(x) == [s for s in plain if s >= x] and steps.up_to(x) == [s for s in plain if s <= x]
    assert steps.count_after(x) == sum(1 for s in plain if s > x)
    assert [0] + steps == [0, *plain] and steps + [10**6] == [*plain, 10**6]
    assert pickle.loads(pickle.dumps(steps)) == plain and Steps.of(steps.to_json()) == plain
    assert steps.non_decreasing() and steps.distinct() == sorted(set(plain))
    assert steps.strictly_increasing() == all(a < b for a, b in zip(plain, plain[1:]))  # noqa: B905


def test_a_million_step_interval_is_a_few_numbers_and_its_json_is_the_lists():
    steps = Steps.every(3, 3, 3_000_000)
    assert len(steps._runs) == 1 and steps[-1] == 3_000_000 and 2_999_997 in steps and 2_999_998 not in steps
    assert steps.to_json() == {"count": 1_000_000, "first": 3, "last": 3_000_000, "period": [3]}
    steps.append(3_000_001)  # a final save off the interval
    assert steps.to_json() == compact_list(list(steps)) and steps.to_json()["then"] == [3_000_001]


def test_an_epoch_end_pattern_with_a_leading_step_is_written_as_the_list_would_be():
    steps = Steps([1])
    steps.extend_periodic(3, (2, 3, 2), 30_000)  # 1 leads the pattern (3 - 1 = the pattern's last difference)
    assert steps.to_json() == compact_list(list(steps)) and steps.to_json()["period"] == [2, 2, 3]


def test_a_list_without_a_pattern_keeps_its_ends_and_its_count():
    plain = [i * i for i in range(LONG_LIST + 5)]
    steps = Steps(plain)
    assert steps.to_json() == compact_list(plain) and "head" in steps.to_json()
    estimate = Steps.of(steps.to_json())
    assert len(estimate) == len(plain) and estimate[:100] == plain[:100] and estimate[-100:] == plain[-100:]


@pytest.mark.parametrize("settings_", [
    dict(num_examples=7, per_device_train_batch_size=1, gradient_accumulation_steps=3, max_steps=123457, transformers="4.40.0",
         logging_steps=1, save_strategy="epoch", logging_first_step=True),
    dict(num_examples=10, per_device_train_batch_size=3, gradient_accumulation_steps=4, num_train_epochs=20000, transformers="4.49.0",
         logging_strategy="epoch", eval_strategy="epoch", eval_delay=2.5, save_strategy="epoch"),
    dict(num_examples=1047, per_device_train_batch_size=1, gradient_accumulation_steps=1, max_steps=30000, transformers="5.23.0",
         save_steps=7, eval_strategy="steps", eval_steps=13, resume_from_step=10001, logging_steps=1),
    dict(num_examples=3, per_device_train_batch_size=2, gradient_accumulation_steps=5, num_train_epochs=20000, transformers="4.30.0",
         save_strategy="epoch", logging_steps=3),
])
def test_the_json_of_a_planned_step_list_is_the_one_its_full_list_gives(settings_):
    import trainsteps
    from trainsteps.schedule import STEP_LISTS, compact_steps

    run = trainsteps.plan(**settings_).run
    lists = [getattr(run, name) for name in STEP_LISTS if getattr(run, name) is not None]
    assert any(len(steps) > LONG_LIST for steps in lists)
    assert all(compact_steps(steps) == compact_list(list(steps)) for steps in lists)
