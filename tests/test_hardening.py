"""Bounds and checked conversions that the bad-input catalogue (docs/errors.md) does not show line by line."""

import os
import time

import pytest

from trainsteps.errors import InputError
from trainsteps.numbers import to_real, to_whole


@pytest.mark.parametrize("text, value", [("1047", 1047), ("1,047", 1047), ("1_047", 1047), ("１,０４７", 1047), ("1,000,000", 10**6),
                                         (" 12 ", 12), ("3.0", 3), ("1e3", 1000), (7, 7), (7.0, 7)])
def test_whole_numbers_are_read_as_people_write_them(text, value):
    assert to_whole(text, "n") == value and type(to_whole(text, "n")) is int


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e400", float("nan"), "2.5", 2.5, "1,04,7", "ten", "", True, None, [1], {"a": 1}])
def test_everything_else_is_refused_naming_the_setting(bad):
    with pytest.raises(InputError) as caught:
        to_whole(bad, "num_examples")
    assert caught.value.render()[0].startswith("num_examples must be")


def test_reals_refuse_nan_infinity_and_overflow():
    assert to_real("3.0e-5", "lr") == 3e-5 and to_real("1,000.5", "x") == 1000.5
    for bad in ("nan", float("inf"), 10**400, "1e400"):
        with pytest.raises(InputError, match="finite"):
            to_real(bad, "logging_steps")


def test_a_glob_through_links_to_its_own_folder_ends_and_counts_each_file_once(tmp_path):
    from trainsteps.data.sources import expand

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.jsonl").write_text('{"text": "x"}\n')
    os.symlink(".", tmp_path / "self1")
    os.symlink(".", tmp_path / "self2")
    started = time.process_time()
    files, _ = expand([str(tmp_path / "**" / "*.jsonl"), str(tmp_path / "sub" / "a.jsonl")])
    assert [os.path.basename(f.path) for f in files] == ["a.jsonl"]
    assert time.process_time() - started < 2


def test_zstd_frames_are_read_to_the_end_and_a_cut_stream_is_an_error(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    from trainsteps.data.readers import Problems, read
    from trainsteps.data.sources import describe

    rows = b"".join(b'{"text": "row %d"}\n' % i for i in range(500))
    frame = zstandard.ZstdCompressor().compress(rows)
    good = tmp_path / "two_frames.jsonl.zst"
    good.write_bytes(frame + frame)
    assert sum(len(batch.rows) for batch in read(describe(str(good)), Problems())) == 1000
    for name, data in (("cut.jsonl.zst", frame[: len(frame) // 2]), ("tail.jsonl.zst", frame + b"\x28\xb5")):
        bad = tmp_path / name
        bad.write_bytes(data)
        with pytest.raises(InputError, match="zstd"):
            sum(len(batch.rows) for batch in read(describe(str(bad)), Problems()))


def test_a_line_over_the_cap_is_malformed_with_its_position_and_the_next_lines_are_read(tmp_path):
    from trainsteps.data.readers import Problems, read
    from trainsteps.data.sources import describe

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"text": "a"}\n' + b'{"text": "' + b"x" * 5000 + b'"}\n' + b'{"text": "b"}\n')
    problems = Problems()
    rows = [row for batch in read(describe(str(path)), problems, max_line=1000) for row in batch.rows]
    assert [r["text"] for r in rows] == ["a", "b"]
    assert problems.first == [(str(path), 2, "line longer than 1,000 bytes (starts at byte 14 of the data; raise --max-line-bytes to read it)")]


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path):
    from trainsteps.configs.files import read_config

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\ndataset: *a9\n")
    started = time.process_time()
    with pytest.raises(InputError, match="expands to more than"):
        read_config(tmp_path / "bomb.yaml")
    assert time.process_time() - started < 2


def test_the_python_api_takes_the_command_lines_names_and_reads_numbers_the_same_way():
    import trainsteps

    a = trainsteps.plan(num_examples="1,047", per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300,
                        gpus=2, nodes=2, transformers="4.49.0")
    b = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300,
                        world_size=4, transformers="4.49.0")
    assert a.banner == b.banner and a.run == b.run
    assert "Total optimization steps" in trainsteps.render(a) and repr(a).startswith("<Schedule hf 4.49.0:")
    for name in ("num_examples", "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps",
                 "warmup_ratio", "eval_strategy", "save_steps", "transformers", "dataset_tokens"):
        assert name in trainsteps.plan.__doc__


def test_a_repeated_layout_of_value_types_is_still_checked_value_by_value():
    """plan() remembers layouts of value types it has checked; a repeat must still refuse bad values and convert."""
    import trainsteps

    settings = dict(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, transformers="4.49.0")
    for _ in range(2):  # the second call takes the remembered layout
        schedule = trainsteps.plan(num_train_epochs=3, **settings)
        assert schedule.inputs["num_train_epochs"] == 3.0 and type(schedule.inputs["num_train_epochs"]) is float
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InputError, match="num_train_epochs"):
            trainsteps.plan(num_train_epochs=bad, **settings)
    with pytest.raises(InputError, match="num_train_epochs"):  # same layout as 3, but beyond what a float holds
        trainsteps.plan(num_train_epochs=10**400, **settings)
    with pytest.raises(InputError, match="num_train_epochs"):  # within a float, beyond the limit
        trainsteps.plan(num_train_epochs=10**7, **settings)
    with pytest.raises(InputError, match="per_device_train_batch_size"):
        trainsteps.plan(num_train_epochs=3, **{**settings, "per_device_train_batch_size": 0})
    with pytest.raises(InputError, match="warmup_steps"):
        trainsteps.plan(num_train_epochs=3, warmup_steps=-1, **settings)
