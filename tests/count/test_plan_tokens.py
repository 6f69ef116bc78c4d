"""Tokens in plans whose data is known, the count cache, and the one-line answer."""

import itertools
import json
import math

import pytest

from trainsteps import tokens

from .conftest import TINY_TOKENIZER, alpaca_rows, write_jsonl
from .test_count_cli import run

PLAN = ("--per-device-train-batch-size", "4", "--gradient-accumulation-steps", "2", "--num-train-epochs", "2")


def plan_json(*args):
    code, out, err = run("plan", *args, *PLAN, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# ---- arithmetic -----------------------------------------------------------------------------------------------------


def test_expected_padded_row_is_the_mean_longest_row_of_a_batch():
    lengths = [3, 5, 5, 9, 12]
    profile = tokens.from_lengths(lengths, lengths)
    for batch in (1, 2, 3):  # every batch of `batch` draws with replacement, equally likely
        draws = list(itertools.product(lengths, repeat=batch))
        assert profile.padded_row(batch) == pytest.approx(sum(max(d) for d in draws) / len(draws))


def test_padding_to_a_multiple_rounds_each_batch_up():
    profile = tokens.from_lengths([3, 9], [1, 1], pad_to_multiple_of=8)
    # batches of one row: 3 -> 8, 9 -> 16
    assert profile.padded_row(1) == pytest.approx((8 + 16) / 2)


def test_whole_epochs_are_exact_and_a_partial_epoch_is_an_expectation(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(101))
    whole = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER)
    epoch = whole["run"]["tokens_per_epoch"]["tokens"]
    assert whole["run"]["tokens_exact"] is True and whole["run"]["tokens_seen"] == 2 * epoch
    code, out, _ = run("plan", "--data", path, "--tokenizer", TINY_TOKENIZER, "--per-device-train-batch-size", "4",
                       "--max-steps", "5", "--format", "json")
    part = json.loads(out)["run"]
    assert part["tokens_exact"] is False
    assert part["tokens_seen"] == round(part["samples_seen"] * epoch / 101)


# ---- plan --data ----------------------------------------------------------------------------------------------------


def test_tokens_are_never_null_when_the_data_was_counted(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(300))
    for extra in ((), ("--cutoff-len", "64"), ("--cutoff-len", "128", "--packing", "llamafactory"),
                  ("--cutoff-len", "128", "--packing", "trl-bfd")):
        run_ = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER, *extra)["run"]
        for key in ("tokens_seen", "supervised_tokens_seen", "padded_tokens_seen", "tokens_per_step"):
            assert run_[key] is not None, (extra, key)
        assert run_["supervised_tokens_seen"] <= run_["tokens_seen"] <= run_["padded_tokens_seen"]


def test_packed_llamafactory_rows_are_padded_to_the_cutoff_exactly(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(300))
    data = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "128", "--packing", "llamafactory")
    rows = data["num_examples_from"]["num_examples"]
    # packed rows hold cutoff_len - 1 tokens and are padded to cutoff_len (LLaMA-Factory 0.9.5), a multiple of 8
    assert data["run"]["padded_tokens_seen"] == 2 * rows * 128


def test_count_then_plan_give_the_same_token_totals(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(500))
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--format", "json")
    counted = json.loads(out)
    planned = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER)
    assert planned["num_examples_from"]["from_cache"] is True  # count stored it, plan read it
    assert planned["run"]["tokens_per_epoch"]["tokens"] == counted["tokens"]
    assert planned["run"]["tokens_per_epoch"]["supervised"] == counted["supervised_tokens"]
    fresh = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER, "--no-cache")
    assert fresh["num_examples_from"]["from_cache"] is False
    assert fresh["run"]["tokens_seen"] == planned["run"]["tokens_seen"]


def test_a_changed_file_is_counted_again(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(200))
    first = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER)
    write_jsonl(path, alpaca_rows(201))
    second = plan_json("--data", path, "--tokenizer", TINY_TOKENIZER)
    assert second["num_examples_from"]["from_cache"] is False
    assert second["inputs"]["num_examples"] == first["inputs"]["num_examples"] + 1


def test_the_cache_lives_in_the_xdg_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(50))
    plan_json("--data", path, "--tokenizer", TINY_TOKENIZER)
    stored = list((tmp_path / "xdg" / "trainsteps" / "counts").glob("*.npz"))
    assert len(stored) == 1


def test_rows_without_a_tokenizer_plan_the_run_and_say_tokens_need_one(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(120) + [{"instruction": "x", "output": 3}])
    data = plan_json("--data", path)
    assert data["inputs"]["num_examples"] == 120  # the row LLaMA-Factory drops is not counted
    assert data["run"]["tokens_seen"] is None and "tokenizer" in data["tokens_unknown"]
    code, _, err = run("plan", "--data", path, "--cutoff-len", "64", "--packing", "llamafactory")
    assert code == 2 and "tokenizer" in err


def test_fixed_length_rows_give_tokens_too():
    data = plan_json("--num-examples", "1000", "--seq-length", "2048")
    assert data["run"]["tokens_seen"] == 2 * 1000 * 2048
    assert data["run"]["tokens_per_step"]["mean"] == 4 * 2 * 2048 and data["run"]["padding_share"] == 0


# ---- the answer first ---------------------------------------------------------------------------------------------


def test_plans_and_counts_start_with_one_line_of_answer(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(300))
    code, out, _ = run("plan", "--data", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "128", "--packing",
                       "llamafactory", *PLAN)
    first = out.splitlines()[0]
    assert first.startswith(tuple("0123456789")) and "optimizer steps" in first and "packed rows" in first and "tokens" in first
    assert "transformers" in first
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "128", "--packing", "trl-bfd")
    lines = out.splitlines()
    assert "examples" in lines[0] and "packed (trl-bfd)" in lines[0]
    assert lines[2].startswith("Results") and any("packed sequences, trl-bfd" in line for line in lines[3:12])
    code, out, _ = run("plan", "--num-examples", "1047", "--per-device-train-batch-size", "10",
                       "--gradient-accumulation-steps", "8", "--num-train-epochs", "300", "--transformers", "4.49.0")
    assert out.splitlines()[0] == "3,900 optimizer steps · 278.61 epochs · 1,047 rows · transformers 4.49.0"


def test_human_tokens():
    assert tokens.human_tokens(46_118_400) == "46.1 M" and tokens.human_tokens(980) == "980"
    assert math.isclose(tokens.fixed(10, 7).mean, 7)


def test_padded_row_lies_between_the_mean_and_the_longest_row():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.integers(min_value=0, max_value=5000), min_size=1, max_size=60), st.integers(min_value=1, max_value=64))
    def check(lengths, batch):
        profile = tokens.from_lengths(lengths, [0] * len(lengths))
        padded = profile.padded_row(batch)
        assert profile.mean - 1e-6 <= padded <= max(lengths) + 1e-6
        assert profile.padded_row(1) == pytest.approx(profile.mean)

    check()
