"""What explain says when an input holds no run: empty, compressed, binary, broken or foreign JSON (logs/input_kind.py)."""

import gzip
import json
import random

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainsteps.cli.main import cli
from trainsteps.logs import read_log
from trainsteps.logs.input_kind import BINARY_SHARE, non_text_share

from .conftest import FIXTURES


def explain(*args, stdin=None):
    return CliRunner().invoke(cli, ["explain", *map(str, args)], input=stdin)


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and (lines[0].startswith("error: ") and "(hint: " in lines[0] or lines[0].startswith("错误："))
    return lines[0]


def test_an_empty_file(tmp_path):
    (tmp_path / "train.log").write_bytes(b"")
    assert one_line_error(explain(tmp_path / "train.log")).startswith(f"error: {tmp_path / 'train.log'} is empty (hint:")


def test_a_gzip_log_names_its_decompression_and_is_not_read(tmp_path):
    log = (FIXTURES / "seed_001_1047.log").read_bytes()
    path = tmp_path / "train.log.gz"
    path.write_bytes(gzip.compress(log))
    line = one_line_error(explain(path))
    assert f"is gzip-compressed (hint: decompress it (gunzip -k {path}) or pipe it: gunzip -c {path} | trainsteps explain -)" in line
    # what the hint says to do works
    assert explain("-", stdin=gzip.decompress(path.read_bytes())).exit_code == 0
    assert "gzip" in one_line_error(explain("-", "--lang", "zh", stdin=path.read_bytes()))


def test_random_bytes_look_binary(tmp_path):
    path = tmp_path / "junk.bin"
    path.write_bytes(random.Random(1).randbytes(20000))
    line = one_line_error(explain(path))
    assert "looks binary (" in line and "% non-text bytes" in line


def test_a_cut_off_trainer_state_says_where_its_json_breaks(tmp_path):
    whole = json.dumps({"global_step": 40, "max_steps": 40, "log_history": [{"loss": 1.5, "epoch": 1.0, "step": 40}]}, indent=2)
    path = tmp_path / "trainer_state.json"
    path.write_text(whole[: len(whole) // 2])
    line = one_line_error(explain(path))
    cut = whole[: len(whole) // 2]
    assert f"is not valid JSON (line {cut.count(chr(10)) + 1}, column " in line
    path.write_text(whole)
    assert explain(path).exit_code == 0


def test_json_that_is_not_a_trainer_state(tmp_path):
    path = tmp_path / "trainer_state.json"
    path.write_text('{"a": 1}\n')
    assert "is JSON but not a trainer_state.json" in one_line_error(explain(path))


def test_a_one_line_file_counts_one_line(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"global_step": 12, "log_history": [{"loss": 1')
    assert read_log(str(path)).lines_read == 1
    path = tmp_path / "state.txt"  # not a .json: read as text after the JSON fails, still one line
    path.write_text('{"global_step": 12, "log_history": [{"loss": 1')
    assert read_log(str(path)).lines_read == 1


def test_a_log_with_some_binary_garbage_is_still_text():
    text = (FIXTURES / "seed_001_1047.log").read_bytes()
    assert non_text_share(text) < 0.01
    assert non_text_share(random.Random(2).randbytes(65536)) > BINARY_SHARE


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=2048), prefix=st.sampled_from([b"", b"\x1f\x8b", b"{", b'{"global_step": ', b"PK\x03\x04"]),
       suffix=st.sampled_from([".log", ".json", ".gz"]))
def test_any_bytes_give_a_run_or_one_line(tmp_path, data, prefix, suffix):
    path = tmp_path / f"input{suffix}"
    path.write_bytes(prefix + data)
    result = explain(path)
    if result.exit_code != 0:
        one_line_error(result)
