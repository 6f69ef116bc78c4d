"""Hostile inputs (tests/fixtures/hostile/) end in an answer or one clear line with exit 2, in bounded memory (how fast
they are read is a ratio target of bench/bench_explain.py, not a timed test)."""

import json
import tracemalloc

import pytest

from tests.conftest import FIXTURES

HOSTILE = FIXTURES / "hostile"


def _peak_megabytes(fn, *args):
    """`fn(*args)` and the most memory Python held while it ran, in MB: a bound that, unlike seconds, does not move with
    the machine's load (how fast these inputs are read is a target of bench/bench_explain.py, not of a test)."""
    tracemalloc.start()
    try:
        result = fn(*args)
        return result, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["explain_bar_float.log", "explain_bar_4301_digits.log", "explain_megatron_target_line.log",
                                  "explain_lf_jsonl_1e308.trainer_log.jsonl", "explain_nemo_exponent.log"])
def test_explain_reads_malformed_numbers_in_a_log_without_an_internal_error(run_cli, name):
    (code, out, err), megabytes = _peak_megabytes(run_cli, "explain", HOSTILE / name)
    assert "internal error" not in err and code in (0, 2) and megabytes < 32  # each file is a few lines; 1-5 MB measured
    assert code == 0 or len(err.strip().splitlines()) == 1


def test_a_nemo_count_with_a_huge_exponent_is_not_read(run_cli, tmp_path):
    log = tmp_path / "nemo.log"
    log.write_text("Epoch 0:   3%|#    | 795/77225 [05:29<171:40:09,  1.73it/s, loss=2.52, global_step=794.0, "
                   "consumed_samples=1.63e+1000]\n")
    code, out, err = run_cli("explain", log)
    assert code == 0 and "internal error" not in err and "consumed_samples" not in out


def test_a_megatron_target_line_alone_shows_its_unknown_sizes_as_question_marks(run_cli):
    code, out, _ = run_cli("explain", HOSTILE / "explain_megatron_target_line.log")
    assert code == 0 and "train 32,000,000, validation ?, test ?" in out


def test_a_bar_with_a_malformed_rate_is_still_read_as_a_bar_without_a_rate():
    from trainsteps.logs.reader import read_log

    run = read_log(text=" 2%|###   | 20/1000 [00:10<01:00, 1.2.3it/s]\n").runs[0]
    assert run.progress.bars[1000].n == 20


def test_banner_fragments_repeated_thousands_of_times_are_each_read_as_a_run_of_their_own(run_cli, tmp_path):
    # their reading time against the count (linear, not quadratic) is a target of bench/bench_explain.py
    banner = "***** Running training *****\n  Num examples = 1,000\n  Num Epochs = 3\n  Total optimization steps = 375\n"
    log = tmp_path / "fragments.log"
    log.write_text(banner + "  Num examples = 2,048\n" * 16000)
    code, out, err = run_cli("explain", log)
    assert code == 0, err
    assert out.startswith("16001 run(s) found in 16,004 line(s)") and "Run 16001 of 16001" in out
    assert out.count("Total optimization steps = 375") == 1


TOKENIZER = FIXTURES.parent / "assets" / "tiny_tokenizer.json"


@pytest.mark.parametrize("name", ["crash_sigbus.arrow", "crash_sigsegv.arrow", "pyunicode_negative.arrow", "corrupt_deflate.jsonl.gz"])
def test_a_damaged_data_file_is_one_cannot_read_line_in_its_own_process(name):
    import subprocess
    import sys

    pytest.importorskip("pyarrow")
    done = subprocess.run([sys.executable, "-c", "import sys; from trainsteps.cli.main import main; sys.exit(main(sys.argv[1:]))",
                           "count", str(HOSTILE / name), "--tokenizer", str(TOKENIZER), "--no-cache"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)  # a crash would be -11 (SIGSEGV) or -7 (SIGBUS)
    assert done.stderr.startswith(f"error: cannot read {HOSTILE / name}") and len(done.stderr.strip().splitlines()) == 1


def _axolotl_config(folder, data_path) -> str:
    config = folder / "ax.yml"
    config.write_text(f"base_model: m\ndatasets:\n  - path: {data_path}\n    type: alpaca\nsequence_len: 512\nmicro_batch_size: 1\n"
                      "gradient_accumulation_steps: 1\nnum_epochs: 1\n")
    return config


@pytest.mark.parametrize("name", ["crash_sigbus.arrow", "pyunicode_negative.arrow"])
def test_a_damaged_arrow_file_named_by_a_config_is_refused_naming_it(run_cli, tmp_path, name):
    pytest.importorskip("pyarrow")
    (tmp_path / "rows.arrow").write_bytes((HOSTILE / name).read_bytes())
    code, _, err = run_cli("plan", _axolotl_config(tmp_path, "rows.arrow"))
    assert code == 2 and "cannot read the data file" in err and "rows.arrow" in err


def test_a_config_whose_data_file_is_not_parquet_is_refused_naming_it(run_cli, tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "rows.parquet").write_text("not a parquet file\n")
    code, _, err = run_cli("plan", _axolotl_config(tmp_path, "rows.parquet"))
    assert code == 2 and err.startswith("error: cannot read the data file") and "rows.parquet" in err


@pytest.mark.parametrize("args, words", [
    (["yaml_4301_digits.yaml", "--num-examples", "100"], "more than 4,300 digits"),
    (["axolotl_set/axolotl_set_tag.yml", "--format", "json"], None),
    (["--num-examples", "100", "--launch", "swift sft --model m --dataset one.jsonl --max_epochs 1 2"], "max_epochs must be a number"),
])
def test_config_values_python_cannot_hold_are_refused_or_written_as_text(run_cli, args, words):
    code, out, err = run_cli("plan", *[HOSTILE / a if a.endswith((".yaml", ".yml")) else a for a in args], cwd=HOSTILE)
    assert "internal error" not in err
    if words is None:
        import json

        assert code == 0 and json.loads(out)["run"]["optimizer_steps"] > 0
    else:
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_a_json_config_with_a_10000_digit_number_is_refused_in_our_words(run_cli, tmp_path):
    config = tmp_path / "big.json"
    config.write_text('{"per_device_train_batch_size": ' + "9" * 10000 + "}")
    code, _, err = run_cli("plan", config, "--num-examples", "100")
    assert code == 2 and "more than 4,300 digits" in err and "Exceeds" not in err


def test_a_llamafactory_data_file_that_is_not_utf8_is_refused_naming_it(run_cli):
    code, _, err = run_cli("plan", "sft.yaml", cwd=HOSTILE / "lf_bad_utf8")
    assert code == 2 and "demo_alpaca.json is not UTF-8 text" in err


def test_a_deepspeed_file_name_too_long_for_the_system_is_a_file_not_found(run_cli, tmp_path):
    config = tmp_path / "ds_long_name.yaml"
    config.write_text(f"output_dir: o\nper_device_train_batch_size: 2\ndeepspeed: {'x' * 5000}\n")
    code, out, err = run_cli("plan", config, "--num-examples", "100", cwd=tmp_path)
    assert code == 0 and "internal error" not in err and "150 optimizer steps" in out


@pytest.mark.parametrize("args", [
    ["--num-examples", "1", "--per-device-train-batch-size", "1", "--max-steps", "100000000"],
    ["--num-examples", "1", "--per-device-train-batch-size", "1", "--max-steps", "100000000", "--format", "json"],
    ["--num-examples", "1000", "--max-steps", "10000000000"],
    ["--streaming", "--num-examples", "1", "--per-device-train-batch-size", "1", "--max-steps", "10000000000"],
    ["--framework", "lightning", "--num-examples", "100", "--max-epochs", "1000000000", "--per-device-train-batch-size", "1"],
    ["--framework", "neox", "--train-tokens", "100000000000000", "--seq-length", "1", "--train-epochs", "1000", "--train-batch-size", "1"],
    ["--framework", "megatron", "--train-tokens", "100000000000000", "--seq-length", "1", "--train-samples", "100000000000000",
     "--global-batch-size", "1024", "--micro-batch-size", "1", "--rampup-batch-size", "1", "1", "10000000000000"],
])
def test_a_run_of_more_epoch_ends_or_events_than_the_caps_is_refused_before_its_lists_are_built(run_cli, args):
    (code, _, err), megabytes = _peak_megabytes(run_cli, "plan", *args)
    # a list of 10^8 steps or events would hold gigabytes; the refusal holds a few MB (1-5 measured)
    assert code == 2 and megabytes < 32 and len(err.strip().splitlines()) == 1
    assert "epochs" in err or "events" in err


def test_the_largest_accepted_epoch_count_still_plans(run_cli):
    code, out, err = run_cli("plan", "--num-examples", "1", "--per-device-train-batch-size", "1", "--num-train-epochs", "1000000")
    assert code == 0 and out.startswith("1,000,000 optimizer steps")


@pytest.mark.parametrize("option", ["--max-line-bytes", "--cutoff-len"])
def test_count_options_past_their_upper_bound_are_refused_in_one_line(run_cli, tmp_path, option):
    rows = tmp_path / "one.jsonl"
    rows.write_text('{"text": "a"}\n')
    code, _, err = run_cli("count", rows, "--tokenizer", TOKENIZER, "--no-cache", option, "9" * 30)
    assert code == 2 and "is not in the range" in err and "internal" not in err


def _damage_truncate(folder):
    for f in folder.glob("*.npz"):
        f.write_bytes(f.read_bytes()[:100])


def _damage_meta_list(folder):
    for f in folder.glob("*.json"):
        f.write_text("[1, 2]")


def _damage_negative(folder):
    import numpy as np

    for f in folder.glob("*.npz"):
        np.savez(f, tokens=np.array([-5]), supervised=np.array([-5]))


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_meta_list, _damage_negative])
def test_a_damaged_count_cache_entry_is_removed_noted_once_and_counted_again(run_cli, tmp_path, monkeypatch, damage):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a b c"}\n{"text": "d"}\n')
    code, first, _ = run_cli("count", rows, "--tokenizer", TOKENIZER)
    assert code == 0 and "note:" not in first
    damage(tmp_path / "cache" / "trainsteps" / "counts")
    code, second, err = run_cli("count", rows, "--tokenizer", TOKENIZER)
    assert code == 0 and "internal" not in err and "cached count of these files was damaged" in second
    assert first.splitlines()[0] == second.splitlines()[0]
    code, third, _ = run_cli("count", rows, "--tokenizer", TOKENIZER)
    assert code == 0 and "note:" not in third


def test_a_file_edited_to_the_same_size_and_mtime_is_counted_again(run_cli, tmp_path, monkeypatch):
    import json
    import os

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rows = tmp_path / "rows.jsonl"
    lines = [json.dumps({"text": f"row {i} " + "word " * 40}) for i in range(12000)]  # 3 MB: its middle is not in the first or last MiB
    rows.write_text("\n".join(lines) + "\n")
    examples = lambda: json.loads(run_cli("count", rows, "--tokenizer", TOKENIZER, "--format", "json")[1])["examples"]  # noqa: E731
    assert examples() == 12000
    before = os.stat(rows)
    data = rows.read_bytes().split(b"\n")
    pad = len(data[6000]) + 1
    del data[6000]
    data[6000] = data[6000][:-2] + b" " * pad + b'"}'
    rows.write_bytes(b"\n".join(data))
    os.utime(rows, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.path.getsize(rows) == before.st_size and examples() == 11999


def test_count_without_a_tokenizer_counts_rows_and_says_tokens_are_unknown(run_cli, tmp_path):
    import json

    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"text": "a"}\n{"text": "b c"}\nnot json\n')
    code, out, err = run_cli("count", rows)
    assert code == 0 and out.startswith("2 examples · tokens need --tokenizer")
    data = json.loads(run_cli("count", rows, "--format", "json")[1])
    assert data["examples"] == 2 and data["tokens"] is None and data["malformed_lines"]["malformed"] == 1
    code, _, err = run_cli("count", rows, "--cutoff-len", "512")
    assert code == 2 and "needs a tokenizer" in err


def test_a_swift_launch_lines_json_dataset_is_data_not_a_config_file(run_cli, tmp_path):
    rows = (FIXTURES.parent.parent / "examples" / "llamafactory" / "data" / "demo_alpaca.json").read_text()
    (tmp_path / "data.json").write_text(rows)
    launch = "NPROC_PER_NODE=4 swift sft --model m --train_type lora --dataset {} --num_train_epochs 1"
    code, whole, err = run_cli("plan", "--launch", launch.format("data.json"), cwd=tmp_path)
    assert code == 0, err
    code, part, _ = run_cli("plan", "--launch", launch.format("data.json#100"), cwd=tmp_path)
    assert code == 0 and "100 rows" in part and whole.split(" · ")[2] != part.split(" · ")[2]


@pytest.mark.parametrize("args, words", [
    (["plan", "--num-examples", "100", "--gpus", "53", "--nodes", "1e308", "--launch", "torchrun --nproc_per_node 4 train.py"],
     "world_size = "),
    (["solve", "--num-examples", "100", "--gradient-accumulation-steps", "1e308", "--time-budget", "1h"], "gradient_accumulation_steps = "),
    (["plan", "llamafactory/sft_lora.yaml", "--framework-version", "x"], "--framework-version 'x' is not a llamafactory release"),
])
def test_extreme_or_malformed_settings_are_refused_in_one_line(run_cli, args, words):
    code, _, err = run_cli(*args, cwd=FIXTURES.parent.parent / "examples")
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_a_config_of_500000_keys_is_refused_before_it_is_composed(run_cli, tmp_path):
    config = tmp_path / "keys.yaml"
    config.write_text("per_device_train_batch_size: 2\n" + "".join(f"k{i}: {i}\n" for i in range(500_000)))
    (code, _, err), megabytes = _peak_megabytes(run_cli, "plan", config, "--num-examples", "100")
    # composed, its 500,001 keys take 367 MB of YAML nodes; refused while parsed, 32 MB (the text and the parser's events)
    assert code == 2 and "holds more than 200,000 values" in err and megabytes < 128


def test_long_step_lists_are_compact_and_exact_in_json_and_the_web_charts_read_them(run_cli):
    import json

    from trainsteps.schedule import expand_steps
    from trainsteps.web.routes import answer_query

    args = ["--num-examples", "1110336", "--per-device-train-batch-size", "4", "--gradient-accumulation-steps", "2",
            "--num-train-epochs", "3", "--logging-steps", "10", "--save-steps", "7"]
    code, out, _ = run_cli("plan", *args, "--format", "json")
    run = json.loads(out)["run"]
    assert len(out) < 100_000 and run["log_steps"] == {"count": 41637, "first": 10, "last": 416370, "period": [10]}
    saves = expand_steps(run["save_steps"])
    assert len(saves) == run["save_steps"]["count"] and saves[:3] == [7, 14, 21] and saves[-1] == run["optimizer_steps"]
    assert run["epoch_end_steps"] == [138792, 277584, 416376]  # short lists stay arrays
    status, data = answer_query("/api/plan", "num_examples=1110336&per_device_train_batch_size=4&gradient_accumulation_steps=2"
                                             "&num_train_epochs=3&logging_steps=10")
    assert status == 200 and data["web"]["charts"]["log_steps"][-1] == 416370


def test_a_periodic_epoch_end_pattern_is_compacted_without_loss():
    from trainsteps.schedule import compact_steps, expand_steps

    ends = [(7 * j) // 3 for j in range(1, 30_000)]
    assert compact_steps(ends)["period"] == [2, 3, 2] and expand_steps(compact_steps(ends)) == ends


def test_a_batch_or_accumulation_below_one_in_a_log_is_not_taken_as_the_runs(run_cli, tmp_path):
    """A launch script pasted with `--gradient_accumulation_steps -10` (found by fuzzing a real ms-swift log)."""
    log = tmp_path / "launch.log"
    log.write_text("--gradient_accumulation_steps -10 \\\n--per_device_train_batch_size 1\n"
                   "Train:  10%| 5/50 [00:10<01:30,  2.00s/it]\n")
    code, out, err = run_cli("explain", log, "--format", "json")
    inferred = json.loads(out)["runs"][0]["inferred"]
    assert code == 0 and "gradient_accumulation_steps" not in inferred and inferred["per_device_train_batch_size"] == 1
