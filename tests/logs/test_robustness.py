"""Whatever is pasted, explain answers with numbers or one clear line: never a traceback."""

import json

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainsteps.cli.main import cli
from trainsteps.logs import read_bytes, read_log
from trainsteps.logs.explain import render, to_json
from trainsteps.logs.infer import infer
from trainsteps.logs.text import parse_int

BANNER = """***** Running training *****
  Num examples = {n}
  Num Epochs = {e}
  Instantaneous batch size per device = {bs}
  Total train batch size (w. parallel, distributed & accumulation) = {total}
  Gradient Accumulation steps = {ga}
  Total optimization steps = {m}
"""
LABELS = ["Num examples = ", "Num Epochs = ", "Total optimization steps = ", "Gradient Accumulation steps = ",
          "Instantaneous batch size per device = ", "Total train batch size (w. parallel, distributed & accumulation) = ",
          "***** Running training *****", "{'loss': 1.0, 'epoch': ", "Unsloth - 2x faster free finetuning | Num GPUs = ",
          "total_num_steps: ", " 100%|###| 5/5 [", "Running tokenizer on dataset: 100%|##| ", "\r", "\n", "|", "=", ",", "**"]
pasted = st.lists(st.one_of(st.sampled_from(LABELS), st.integers(-5, 10**20).map(str), st.text(max_size=20)), max_size=40).map("".join)
quick = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@quick
@given(pasted)
def test_any_text_reads_and_explains_without_raising(text):
    observations = read_log(text=text)
    inferences = [infer(run) for run in observations.runs]
    render(observations, inferences, "en")
    render(observations, inferences, "zh")
    json.dumps(to_json(observations, inferences))


@quick
@given(st.binary(max_size=4000))
def test_any_bytes_read_without_raising(data):
    observations = read_bytes(data)
    for run in observations.runs:
        infer(run)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**7), st.integers(0, 400), st.integers(0, 64), st.integers(0, 4096), st.integers(0, 64), st.integers(0, 10**6))
def test_any_banner_numbers_explain_without_raising(n, e, bs, total, ga, m):
    text = BANNER.format(n=f"{n:,}", e=e, bs=bs, total=f"{total:,}", ga=ga, m=f"{m:,}")
    (run,) = read_log(text=text).runs
    inf = infer(run)
    render(read_log(text=text), [inf], "en")


def test_other_thousands_separators_read_as_the_same_number():
    for text in ("1,047", "1.047", "1 047", "1'047", "1_047", "1\u00a0047", "1\u202f047"):
        assert parse_int(text) == (1047, ""), text


def test_truncated_banner_explains_what_it_can():
    text = "***** Running training *****\n  Num examples = 1,047\n  Num Epochs = 300\n  Instantaneous batch size per device = 10\n"
    (run,) = read_log(text=text).runs
    inf = infer(run)
    assert inf.inferred["num_examples"].exact == 1047
    assert any(f.msg_id == "explain.fact.cut_banner" for f in inf.facts)
    assert "max_steps" not in inf.inferred


def test_contradictory_numbers_are_reported_not_raised():
    text = BANNER.format(n="1,047", e=300, bs=10, total=80, ga=8, m="1,234")
    (run,) = read_log(text=text).runs
    inf = infer(run)
    assert inf.contradictions and inf.contradictions[0].what.msg_id == "explain.contra.no_rule"


def test_total_batch_not_a_multiple():
    text = BANNER.format(n="1,047", e=3, bs=10, total=81, ga=8, m="39")
    inf = infer(read_log(text=text).runs[0])
    assert inf.contradictions[0].what.msg_id == "explain.contra.total_batch"


def test_cli_on_binary_garbage_is_one_line_and_exit_2(tmp_path):
    garbage = tmp_path / "model.bin"
    garbage.write_bytes(bytes(range(256)) * 64)
    result = CliRunner().invoke(cli, ["explain", str(garbage)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_cli_on_a_missing_file(tmp_path):
    result = CliRunner().invoke(cli, ["explain", str(tmp_path / "nope.log")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_no_newline_at_all_is_read_in_pieces():
    data = b"x" * 300_000 + b"\nNum examples = 5\n"
    (run,) = read_bytes(data).runs
    assert run.value("num_examples") == 5


def _banner_text(**values):
    defaults = dict(n="128,770", e=3, bs=8, total=256, ga=8, m="1,509")
    return BANNER.format(**(defaults | values))


def test_a_banner_that_lost_its_line_breaks_is_read_from_a_file_as_from_text():
    glued = _banner_text().replace("\n", " ").encode()
    runs = read_bytes(glued, "glued.log").runs
    assert runs and runs[0].banner["num_examples"].value == 128770
    assert runs[0].banner["max_steps"].value == 1509


def test_full_width_punctuation_from_a_chinese_input_method_is_read_as_ascii():
    text = "Num examples ＝ 128，770\n  Num Epochs ＝ ３\n"
    run = read_bytes(text.encode(), "zh.log").runs[0]
    assert run.banner["num_examples"].value == 128770 and run.banner["num_epochs"].value == 3


def test_the_line_count_does_not_count_the_end_of_the_last_line():
    assert read_bytes(b"a\nb\n", "two.log").lines_read == 2
    assert read_bytes(b"", "empty.log").lines_read == 0
