"""Hostile input to the time model's readers: any text gives an answer or a clean InputError, in bounded time."""

from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.errors import InputError
from trainsteps.timing import format_duration, parse_duration
from trainsteps.timing.flops import parse_mfu, shape_from_config
from trainsteps.timing.gpus import find_gpu
from trainsteps.timing.log_rates import RateReader

BAR_PARTS = st.sampled_from(["/", "[", "]", "<", ",", "s/it", "it/s", ":", "?", " ", "Epoch 1:", "%|", "\r",
                             "iteration", "| elapsed time per iteration (ms):", "train_runtime", "'eval_runtime': ",
                             '"current_steps": ', '"total_steps": ', '"elapsed_time": "', "1 day, ", "0", "9", "12",
                             "4.00", "1e9", "-3", "nan"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(BAR_PARTS, max_size=30).map("".join), max_size=20))
def test_the_rate_reader_takes_any_lines(lines):
    reader = RateReader()
    for line in lines:
        reader.feed(line)
    timing = reader.result()
    if timing.rate is not None:
        step = timing.rate.step_seconds
        assert 0 < step.low <= step.expected <= step.high


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20))
def test_durations_parse_or_refuse(text):
    try:
        seconds = parse_duration(text)
    except InputError:
        return
    assert seconds > 0
    assert format_duration(seconds)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_durations_are_said_for_any_number(value):
    assert isinstance(format_duration(value), str)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_mfu_and_gpu_names_parse_or_refuse(text):
    for parse in (parse_mfu, find_gpu):
        try:
            parse(text)
        except InputError:
            pass


JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                       max_leaves=8)
KEYS = st.sampled_from(["hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads", "num_key_value_heads",
                        "intermediate_size", "num_experts", "num_experts_per_tok", "head_dim", "model_type",
                        "tie_word_embeddings", "text_config", "first_k_dense_replace", "moe_intermediate_size"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, JSONISH | st.integers(1, 5000), max_size=10))
def test_any_config_json_gives_a_shape_or_a_clean_error(config):
    try:
        shape = shape_from_config(config)
    except InputError:
        return
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:  # a defect: must be an InputError
        raise AssertionError(f"{type(exc).__name__} on {config}") from exc
    assert shape.matmul_params > 0
