"""Hostile input to the time model's readers: any text gives an answer or a clean InputError, in bounded time."""

import re

from hypothesis import example, given, settings
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


TQDM_PARTS = st.sampled_from(["/", "[", "]", "<", ",", " ", "s/it", "it/s", ":", "?", ".", "Epoch 1:", "%|", "1 day, ",
                              "2 days,", "0", "9", "12", "05", "4.00", "1.2.3", "1234567890", "\r", "x"])
WHOLE_CLOCKS = st.sampled_from(["01:02", "1:02:03", "00:00", "1 day, 2:03:04", "3 days,0:01", "99:9", "?", "123456789:59"])
CLOCKS = WHOLE_CLOCKS | WHOLE_CLOCKS | st.sampled_from(["1:2:3:4", "", " 01:02", "01:02 ", "1.5", "12345678901:00",
                                                        "0:00:00.5", "40s"])
BARS = st.tuples(st.sampled_from(["", " 12%|█▌   | ", "Epoch 1: ", "1.", "3/", "Train: ", "x 1/2 "]),
                 st.sampled_from(["0", "45", "3900", "0012"]), st.sampled_from(["/"]), st.sampled_from(["100", "3900", "0"]),
                 st.sampled_from([" [", "[", "  [", "\t["]), CLOCKS, st.sampled_from(["<"]), CLOCKS,
                 st.sampled_from([", ", ",", ",  ", ",", "]"]), st.sampled_from(["1.05", "4", "0", "1.05", "?", "1.2.3", ".5", "1e3"]),
                 st.sampled_from(["it/s", "s/it", " it/s", "s/it", "x"]),
                 st.sampled_from(["]", ", loss=1.2]", "] 5/9 [00:01<00:02, 1.0it/s]", "\r 6/100 [00:02<00:01, 2.0it/s]", ""]))


@settings(max_examples=500, deadline=None)
@given(st.lists(TQDM_PARTS, max_size=24).map("".join) | BARS.map("".join))
@example(" 12%|████▌     | 456/3900 [01:02<00:58,  1.05it/s]")
@example("Epoch 1: 12%|█| 456/3900 [1 day, 01:02<?, 1.05s/it]")
@example("1.5/10 [00:01<00:02, 1.0it/s] 3/10 [00:01<00:02, 2.0it/s]")
@example("3/10  [00:01<00:02, 2.0it/s] 4/10 [00:01<00:02, 1.0it/s]")
@example("4/10 [00:01<00:02, 1.2.3it/s]")
@example("4/10 [1234567890:01<00:02, 1.0it/s]")
def test_a_bar_draw_handed_over_parsed_gives_the_sample_the_line_gives(line):
    """explain's bar reader hands its parsed draw to the time model (`feed_tqdm`): the same sample as `feed(line)`."""
    from trainsteps.logs.progress import _TQDM, seconds

    match = _TQDM.search(line)
    if match is None:
        return
    parsed, read = RateReader(), RateReader()
    read.feed(line)
    parsed.feed_tqdm(line, match.end(1), *match.group(1, 2, 3, 4, 5, 6), seconds(match.group(3)), seconds(match.group(4)))
    assert parsed.samples == read.samples and parsed._line_no == read._line_no


def test_a_bar_draw_handed_over_parsed_is_not_read_again(monkeypatch):
    from trainsteps.logs.progress import _TQDM, seconds
    from trainsteps.timing import log_rates

    line = " 39%|███▉      | 1520/3900 [1 day, 1:23:45<2:11:10,  3.30s/it]"
    match = _TQDM.search(line)
    monkeypatch.setattr(log_rates, "_TQDM", re.compile("(?!)"))  # the time model's own pattern now reads nothing
    reader = RateReader()
    reader.feed_tqdm(line, match.end(1), *match.group(1, 2, 3, 4, 5, 6), seconds(match.group(3)), seconds(match.group(4)))
    assert [(s.kind, s.step, s.total, s.elapsed, s.remaining, s.seconds_per_step) for s in reader.samples] == \
        [("tqdm", 1520, 3900, 86400 + 5025.0, 7870.0, 3.3)]
    reader.feed(line)
    assert len(reader.samples) == 1


JSONL_ROWS = st.tuples(st.sampled_from(['{"current_steps": 10, "total_steps": 3900', '{"current_steps":10,"total_steps":3900',
                                        '{"current_steps": 99999999999999999999, "total_steps": 3', '{"total_steps": 3900']),
                       st.sampled_from(['', ', "loss": 1.2', ', "elapsed_time": "0:00:09"', ', "x": "[1/2] <"', '\r', ', "remaining_time": 5']),
                       st.sampled_from([', "elapsed_time": ', ',"elapsed_time":', ", 'elapsed_time': ", ', "elapsed_time" : ']), CLOCKS,
                       st.sampled_from([', "remaining_time": ', ',"remaining_time":', "", ', "remaining_time" : ']), CLOCKS,
                       st.sampled_from(["}", ', "elapsed_time": "1:00:00"}', ', "note": "remaining_time"}']))


@settings(max_examples=500, deadline=None)
@given(JSONL_ROWS, st.booleans())
@example(('{"current_steps": 10, "total_steps": 3900', '', ', "elapsed_time": ', '40s', '', '', '}'), True)
@example(('{"current_steps": 10, "total_steps": 3900', '', ', "elapsed_time": ', '0:09', ', "remaining_time": ', '1.5', '}'), True)
@example(('{"current_steps": 10, "total_steps": 3900', '', ', "elapsed_time": ', '0:09', '', '', ', "elapsed_time": "1:00:00"}'), True)
def test_a_jsonl_row_handed_over_parsed_gives_the_sample_the_line_gives(row, quoted):
    """explain's dict reader hands a trainer_log.jsonl row's clocks to the time model (`feed_llamafactory`): the same
    sample as `feed(line)`, whatever the row's keys, spacing and clocks."""
    from trainsteps.logs.progress import _PAIR, seconds

    head, middle, elapsed_key, elapsed, left_key, left, tail = row
    quote = '"' if quoted else ""
    line = f"{head}{middle}{elapsed_key}{quote}{elapsed}{quote}{left_key}{quote if left_key else ''}{left if left_key else ''}" \
           f"{quote if left_key else ''}{tail}"
    pairs = {key: single or double or bare for key, single, double, bare in _PAIR.findall(line)}
    elapsed_text, left_text = pairs.get("elapsed_time"), pairs.get("remaining_time")
    elapsed_seconds = seconds(elapsed_text or "")
    left_seconds = seconds(left_text or "") if elapsed_seconds is not None else None
    parsed, read = RateReader(), RateReader()
    read.feed(line)
    parsed.feed_llamafactory(line, elapsed_text, left_text, elapsed_seconds, left_seconds)
    assert parsed.samples == read.samples and parsed._line_no == read._line_no


def test_a_jsonl_row_handed_over_parsed_is_not_read_again(monkeypatch):
    from trainsteps.timing import log_rates

    line = '{"current_steps": 10, "total_steps": 3900, "loss": 1.2, "elapsed_time": "0:00:40", "remaining_time": "4:15:03"}'
    monkeypatch.setattr(log_rates, "_LF_ELAPSED", re.compile("(?!)"))  # the time model's own clock pattern now reads nothing
    reader = RateReader()
    reader.feed_llamafactory(line, "0:00:40", "4:15:03", 40.0, 15303.0)
    assert [(s.kind, s.step, s.total, s.elapsed, s.remaining) for s in reader.samples] == [("llamafactory", 10, 3900, 40.0, 15303.0)]
    reader.feed(line)
    assert len(reader.samples) == 1
