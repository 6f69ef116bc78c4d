"""The `trainsteps count` command: output contract (human / JSON, en / zh) and bad input (one line, exit 2, nothing skipped silently)."""

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from .conftest import TINY_TOKENIZER, alpaca_rows, text_rows, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    from trainsteps.cli.main import main

    class Entry:
        name = "trainsteps"

        def main(self, args=None, prog_name=None, **kw):
            main(list(args or []))

    result = CliRunner().invoke(Entry(), list(map(str, args)), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_json_output_has_examples_tokens_lengths_and_each_packed_count(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(1500))
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "256", "--packing", "llamafactory",
                       "--packing", "trl-wrapped", "--packing", "axolotl", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["examples"] == 1500
    assert data["tokens"] > data["supervised_tokens"] > 0
    assert [p["framework"] for p in data["packing"]] == ["llamafactory", "trl-wrapped", "axolotl"]
    assert data["packing"][2]["sequences_min"] <= data["packing"][2]["sequences_max"]
    assert {s["key"] for s in data["derivation"]} >= {"count.examples", "packed.llamafactory", "cutoff.ms-swift"}
    assert data["lengths"]["p50"] <= data["lengths"]["p99"] <= data["lengths"]["max"]
    assert sum(b["examples"] for b in data["histogram"]) == 1500


def test_axolotl_sampler_settings_reach_its_packing(tmp_path):
    # The range for the given sample_packing_* settings is the one the checked packing model gives for them.
    from trainsteps.data import packing
    from trainsteps.data.count import CountOptions, count

    path = write_jsonl(tmp_path / "t.jsonl", text_rows(600, seed=2, high=120))
    lengths = [int(n) for n in count(CountOptions([str(path)], str(TINY_TOKENIZER), progress=False)).lengths.tokens]
    ranges = {}
    for extra in ((), ("--sample-packing-bin-size", "3"), ("--sample-packing-group-size", "50"), ("--sample-packing-sequentially",)):
        code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "256", "--packing", "axolotl",
                           "--format", "json", *extra)
        assert code == 0
        entry = json.loads(out)["packing"][0]
        ranges[extra] = (entry["sequences_min"], entry["sequences_max"])
    assert ranges[()] == packing.axolotl_range(lengths, 256)
    assert ranges[("--sample-packing-bin-size", "3")] == packing.axolotl_range(lengths, 256, bin_size=3)
    assert ranges[("--sample-packing-group-size", "50")] == packing.axolotl_range(lengths, 256, group_size=50)
    assert ranges[("--sample-packing-sequentially",)] == packing.axolotl_range(lengths, 256, sequential=True)
    assert len(set(ranges.values())) == 4  # each setting changes the count on this data


def test_chinese_output_uses_the_chinese_catalog(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(50))
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--lang", "zh", "--cutoff-len", "64")
    assert code == 0
    assert "样本数: 50" in out and "个样本超过 64 个 token" in out


def test_malformed_lines_are_counted_with_file_and_line_and_the_count_goes_on(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = [json.dumps(r) for r in text_rows(20)]
    path.write_text("\n".join(good[:5] + ["{oops", "[1, 2]"] + good[5:] + ["", "not json either"]) + "\n", encoding="utf-8")
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["examples"] == 20
    assert data["malformed_lines"]["malformed"] == 3
    assert [(p["line"], p["reason"].split(" (")[0]) for p in data["malformed_lines"]["first"]] == [
        (6, "not JSON"), (7, "a JSON list, not an object"), (24, "not JSON")]
    assert data["malformed_lines"]["blank_lines"] == 1
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER)
    assert f"{path}:6: not JSON" in out


def test_rows_a_framework_would_drop_are_reported_not_counted(tmp_path):
    rows = [{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]},
            {"conversations": [{"from": "gpt", "value": "first"}, {"from": "human", "value": "x"}]},
            {"conversations": [{"from": "human", "value": "alone"}]}]
    path = write_jsonl(tmp_path / "chat.jsonl", rows)
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--format", "json")
    data = json.loads(out)
    assert (code, data["examples"], data["invalid_rows"]["malformed"]) == (0, 1, 2)
    assert [p["line"] for p in data["invalid_rows"]["first"]] == [2, 3]


def test_a_missing_field_names_the_field_and_the_columns_that_exist(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"body": "x", "id": 1}])
    code, _, err = run("count", path, "--tokenizer", TINY_TOKENIZER, "--text-field", "text")
    assert code == 2
    assert "no field 'text'" in err and "body, id" in err and "Traceback" not in err


@pytest.mark.parametrize("name,content", [("broken.jsonl.gz", b"\x1f\x8b\x08\x00garbage"), ("broken.jsonl.zst", b"\x28\xb5\x2f\xfdgarbage"),
                                          ("broken.parquet", b"PAR1 not really")])
def test_corrupt_files_are_one_clear_line_and_exit_2(tmp_path, name, content):
    if name.endswith(".zst"):
        pytest.importorskip("zstandard")
    path = tmp_path / name
    path.write_bytes(content)
    code, _, err = run("count", path, "--tokenizer", TINY_TOKENIZER)
    assert code == 2
    assert err.count("\n") == 1 and f"cannot read {path}" in err


def test_a_truncated_gzip_file_is_an_error_not_a_short_count(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    whole = gzip.compress("".join(json.dumps(r) + "\n" for r in text_rows(3000)).encode())
    path.write_bytes(whole[: len(whole) // 2])
    code, _, err = run("count", path, "--tokenizer", TINY_TOKENIZER)
    assert code == 2 and f"cannot read {path}" in err


@pytest.mark.parametrize("args,expected", [
    (["missing.jsonl"], "no such file"),
    (["*.nothing"], "matches no file"),
    (["data.xyz"], "unknown file type"),
])
def test_unreadable_paths_are_one_clear_line_and_exit_2(tmp_path, monkeypatch, args, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.xyz").write_text("x")
    code, _, err = run("count", *args, "--tokenizer", TINY_TOKENIZER)
    assert code == 2 and expected in err


def test_tokenizer_and_cutoff_are_asked_for_when_needed(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(3))
    assert run("count", path, "--cutoff-len", "512")[0] == 2  # without --cutoff-len, rows alone are counted
    assert run("count", path, "--packing", "trl-bfd", "--cutoff-len", "512")[0] == 2
    code, _, err = run("count", path, "--tokenizer", TINY_TOKENIZER, "--packing", "trl-bfd")
    assert code == 2 and "--cutoff-len" in err
    code, _, err = run("count", path, "--tokenizer", tmp_path, "--lang", "zh")
    assert code == 2 and "没有 tokenizer.json" in err


def test_llamafactory_dataset_info_entries_use_their_columns_and_tags(tmp_path):
    rows = [{"q": "what", "a": "this", "sys": "be brief"}] * 3
    write_jsonl(tmp_path / "qa.jsonl", rows)
    chat = [{"msgs": [{"speaker": "u", "text": "hi"}, {"speaker": "b", "text": "hello"}]}] * 2
    write_jsonl(tmp_path / "chat.jsonl", chat)
    info = {"qa": {"file_name": "qa.jsonl", "columns": {"prompt": "q", "response": "a", "system": "sys"}},
            "chat": {"file_name": "chat.jsonl", "formatting": "sharegpt", "columns": {"messages": "msgs"},
                     "tags": {"role_tag": "speaker", "content_tag": "text", "user_tag": "u", "assistant_tag": "b"}}}
    (tmp_path / "dataset_info.json").write_text(json.dumps(info))
    code, out, _ = run("count", tmp_path, "--dataset", "qa", "--tokenizer", TINY_TOKENIZER, "--format", "json")
    qa = json.loads(out)
    assert (code, qa["examples"], qa["row_format"].split()[0]) == (0, 3, "alpaca")
    code, out, _ = run("count", tmp_path / "dataset_info.json", "--dataset", "chat", "--tokenizer", TINY_TOKENIZER, "--format", "json")
    chat_data = json.loads(out)
    assert (code, chat_data["examples"], chat_data["invalid_rows"]["malformed"]) == (0, 2, 0)
    code, _, err = run("count", tmp_path, "--dataset", "nope", "--tokenizer", TINY_TOKENIZER)
    assert code == 2 and "chat, qa" in err


def test_count_does_not_import_heavy_libraries_until_it_runs():
    import subprocess
    import sys

    code = ("import sys, trainsteps.cli.count, trainsteps.data.report, trainsteps.data.packing;"
            "print([m for m in ('numpy','pyarrow','tokenizers','datasets','ray') if m in sys.modules])")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_plan_data_uses_the_counted_examples_or_the_packed_sequences_as_num_examples(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", alpaca_rows(1200))
    base = ["plan", "--per-device-train-batch-size", "2", "--format", "json"]
    code, out, _ = run(*base, "--data", path, "--tokenizer", TINY_TOKENIZER)
    assert code == 0 and json.loads(out)["inputs"]["num_examples"] == 1200
    _, counted, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "300", "--packing", "trl-bfd", "--format", "json")
    packed = json.loads(counted)["packing"][0]["sequences"]
    code, out, _ = run(*base, "--data", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "300", "--packing", "trl-bfd")
    assert code == 0 and json.loads(out)["inputs"]["num_examples"] == packed < 1200
    code, _, err = run(*base, "--data", path, "--tokenizer", TINY_TOKENIZER, "--num-examples", "5")
    assert code == 2 and "not both" in err


def test_every_file_must_have_the_fields_and_a_row_without_one_is_reported(tmp_path):
    first = write_jsonl(tmp_path / "1.jsonl", text_rows(5))
    second = write_jsonl(tmp_path / "2.jsonl", alpaca_rows(5))
    code, _, err = run("count", first, second, "--tokenizer", TINY_TOKENIZER)
    assert code == 2 and f"{second}: the rows have no field 'text'" in err
    mixed = write_jsonl(tmp_path / "3.jsonl", text_rows(3) + [{"body": "no text here"}] + text_rows(2))
    code, out, _ = run("count", mixed, "--tokenizer", TINY_TOKENIZER, "--format", "json")
    data = json.loads(out)
    assert (code, data["examples"], data["invalid_rows"]["first"][0]["line"]) == (0, 5, 4)


def test_rows_that_carry_their_token_count_are_not_tokenized_again(tmp_path, monkeypatch):
    """The hook for Megatron .idx files: a reader yields rows with `_num_tokens`, counted as given."""
    from trainsteps.data import formats, readers
    from trainsteps.data.count import CountOptions, count

    path = tmp_path / "corpus.idx"
    path.write_bytes(b"")

    def fake_idx(source, batch_rows):
        yield readers.RowBatch([{formats.TOKEN_COUNT: n} for n in (5, 7, 11)], source, 1, 0)

    monkeypatch.setattr(readers, "_read_idx", fake_idx)
    counted = count(CountOptions([str(path)], str(TINY_TOKENIZER), progress=False))
    assert counted.lengths.tokens.tolist() == [5, 7, 11] == counted.lengths.supervised.tolist()


def test_a_megatron_idx_file_is_counted_from_its_sequence_lengths(tmp_path, run_cli):
    """`trainsteps count PREFIX.idx`: sequences and tokens as the file states them, no tokenizer needed to tokenize."""
    import pytest

    pytest.importorskip("numpy")
    from trainsteps.data.idx import read_idx, write_idx_from_lengths

    lengths = [5, 7, 11, 300, 1, 42] * 50
    prefix = write_idx_from_lengths(str(tmp_path / "corpus_text_document"), lengths)
    summary = read_idx(prefix)
    code, out, err = run_cli("count", prefix + ".idx", "--format", "json")
    data = json.loads(out)
    assert code == 0, err
    assert (data["examples"], data["tokens"]) == (summary.num_sequences, summary.num_tokens) == (300, sum(lengths))


@pytest.mark.parametrize("args", [("--cutoff-len", "0"), ("--cutoff-len", "-1"), ("--sample", "0"), ("--num-proc", "0"),
                                  ("--cutoff-len", "512", "--packing", "ms-swift@3"),
                                  ("--cutoff-len", "1", "--packing", "llamafactory")])
def test_impossible_settings_are_refused_not_ignored(tmp_path, args):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(30))
    code, _, err = run("count", path, "--tokenizer", TINY_TOKENIZER, *args)
    assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_ms_swift_packs_only_the_rows_it_keeps(tmp_path):
    # truncation_strategy delete drops rows over max_length before PackingDataset sees them
    from trainsteps.data import packing
    from trainsteps.data.count import CountOptions, count

    path = write_jsonl(tmp_path / "t.jsonl", text_rows(400, seed=3, high=200))
    lengths = [int(n) for n in count(CountOptions([str(path)], str(TINY_TOKENIZER), progress=False)).lengths.tokens]
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "128", "--packing", "ms-swift@2",
                       "--format", "json")
    data = json.loads(out)
    kept = [n for n in lengths if n <= 128]
    assert len(kept) < len(lengths)  # some rows are over the cutoff
    assert data["packing"][0]["sequences"] == packing.swift(kept, 128, 1, 2) <= len(kept)
    swift_cut = next(f for f in data["cutoff"]["frameworks"] if f["framework"] == "ms-swift")
    assert swift_cut["examples_after"] == len(kept)


def test_plan_data_refuses_axolotl_packing_and_data_options_without_data(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(30))
    code, _, err = run("plan", "--data", path, "--tokenizer", TINY_TOKENIZER, "--cutoff-len", "64", "--packing", "axolotl",
                       "--per-device-train-batch-size", "2", "--num-train-epochs", "1")
    assert code == 2 and "multipack sampler" in err
    code, _, err = run("plan", "--num-examples", "100", "--tokenizer", TINY_TOKENIZER, "--num-train-epochs", "1")
    assert code == 2 and "no --data was given" in err


def test_under_sample_every_cutoff_and_packing_step_is_scaled_to_the_corpus(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(3000, seed=8, high=120))
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--sample", "300", "--cutoff-len", "64",
                       "--packing", "llamafactory", "--format", "json")
    data = json.loads(out)
    steps = {s["key"]: s for s in data["derivation"]}
    assert steps["cutoff.ms-swift"]["value"] == next(f["examples_after"] for f in data["cutoff"]["frameworks"]
                                                    if f["framework"] == "ms-swift")
    assert steps["packed.llamafactory"]["value"] == data["packing"][0]["sequences"]
    assert [s["key"] for s in data["derivation"]].count("packed.llamafactory") == 1  # the drawn rows' figure is replaced
    assert data["lengths"]["mean"] == round(data["tokens"] / data["examples"], 2)


def test_an_invalid_item_of_a_json_array_is_named_as_an_item_not_a_line(tmp_path):
    path = tmp_path / "alpaca.json"
    rows = alpaca_rows(5)
    rows[2] = {"instruction": "x", "input": "", "output": None}
    path.write_text(json.dumps(rows), encoding="utf-8")
    code, out, _ = run("count", path, "--tokenizer", TINY_TOKENIZER, "--format", "json")
    first = json.loads(out)["invalid_rows"]["first"][0]
    assert code == 0 and first["line"] == 0 and first["reason"].startswith("item 3: ")


def test_a_dataset_info_json_without_dataset_asks_for_an_entry(tmp_path):
    (tmp_path / "dataset_info.json").write_text(json.dumps({"demo": {"file_name": "d.jsonl"}}), encoding="utf-8")
    code, _, err = run("count", tmp_path / "dataset_info.json", "--tokenizer", TINY_TOKENIZER)
    assert code == 2 and "say which entry" in err and "demo" in err and "--dataset NAME" in err


def test_plan_data_json_says_where_num_examples_came_from(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(120, seed=1))
    code, out, _ = run("plan", "--data", path, "--tokenizer", TINY_TOKENIZER, "--per-device-train-batch-size", "4",
                       "--num-train-epochs", "1", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["num_examples_from"]["counted"] == "examples"
    assert data["num_examples_from"]["num_examples"] == 120 and data["banner"]["Num examples"] == "120"


def test_a_cached_count_is_not_reused_under_another_line_cap(run_cli):
    """--max-line-bytes skips longer lines, so a count under one cap says nothing of a count under another."""
    data = str(ROOT / "examples" / "llamafactory" / "data" / "demo_chat.jsonl")
    args = ("plan", "--data", data, "--tokenizer", TINY_TOKENIZER, "--format", "json")
    _, first, _ = run_cli(*args)
    _, capped, _ = run_cli(*args, "--max-line-bytes", "600")
    _, fresh, _ = run_cli(*args, "--max-line-bytes", "600", "--no-cache")
    assert json.loads(capped)["inputs"]["num_examples"] == json.loads(fresh)["inputs"]["num_examples"]
    assert json.loads(capped)["inputs"]["num_examples"] < json.loads(first)["inputs"]["num_examples"]
