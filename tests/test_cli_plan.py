"""`trainsteps plan`: the contract of the command line."""

import json
import os
import subprocess
import sys

import pytest

SEED_001 = ["plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
            "--num-train-epochs", "300"]


def test_json_has_the_banner_the_run_the_warnings_and_the_derivation(run_cli):
    code, out, _ = run_cli(*SEED_001, "--transformers", "4.49.0", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert set(data) >= {"banner", "run", "warnings", "derivation"}
    assert data["banner"]["Total optimization steps"] == "3,900"
    assert set(data["run"]) >= {"optimizer_steps", "epoch_end_steps", "epochs_completed", "samples_seen", "warmup_steps",
                                "log_steps", "eval_steps", "save_steps"}
    assert [w["code"] for w in data["warnings"]] == ["HF_PLAN_LOOP_MISMATCH"]
    assert all({"key", "value", "formula", "text"} <= set(step) for step in data["derivation"])


def test_human_output_shows_the_banner_and_where_the_run_stops(run_cli):
    code, out, _ = run_cli(*SEED_001, "--transformers", "4.49.0", "--explain")
    assert code == 0
    assert "  Total optimization steps = 3,900" in out
    assert "278.61 / 300" in out
    assert "max(floor(105 / 8), 1) = 13" in out


def test_chinese_output(run_cli):
    code, out, _ = run_cli(*SEED_001, "--transformers", "4.49.0", "--lang", "zh", "--explain")
    assert code == 0
    assert "训练循环的实际行为" in out and "向下取整" in out


def test_gpus_times_nodes_is_the_world_size(run_cli):
    _, by_gpus, _ = run_cli("plan", "--num-examples", "128770", "--gradient-accumulation-steps", "8", "--gpus", "2", "--nodes", "2",
                            "--format", "json")
    _, by_world, _ = run_cli("plan", "--num-examples", "128770", "--gradient-accumulation-steps", "8", "--world-size", "4",
                             "--format", "json")
    assert json.loads(by_gpus)["banner"] == json.loads(by_world)["banner"]


def test_compare_versions_lists_every_family(run_cli):
    code, out, _ = run_cli(*SEED_001, "--compare-versions", "--format", "json")
    families = [row["family"] for row in json.loads(out)["comparison"]]
    assert code == 0 and families == ["4.30", "4.31-4.45", "4.46", "4.47-4.51", "4.52-4.56", "4.57+"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--num-examples", "0"], "num_examples must be a whole number"),
        (["--num-examples", "-5"], "num_examples must be a whole number"),
        (["--num-examples", "10", "--gradient-accumulation-steps", "0"], "gradient_accumulation_steps"),
        (["--num-examples", "10", "--num-train-epochs", "0"], "has no length"),
        (["--num-examples", "ten"], "must be a number, got 'ten'"),
        (["--num-examples", "10", "--transformers", "banana"], "unknown transformers release"),
        (["--num-examples", "10", "--transformers", "4.20.0"], "older than 4.30.0"),
        (["--streaming", "--transformers", "4.44.2"], "max_steps has to be specified"),
        (["--num-examples", "10", "--world-size", "2", "--gpus", "2"], "not both"),
        (["--num-examples", "10", "--save-strategy", "sometimes"], "save_strategy must be one of"),
        (["--num-examples", "10", "--warmup-ratio", "0.1", "--transformers", "5.20.0"], "no warmup_ratio"),
        (["--num-examples", "10", "--bogus"], "No such option"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(run_cli, args, words):
    code, out, err = run_cli("plan", *args)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and words in err and "hint" in err
    assert "Traceback" not in err


def test_the_installed_command_imports_nothing_heavy():
    code = (
        "import sys; from trainsteps.cli.main import main\n"
        "try:\n    main(['plan', '--num-examples', '1047', '--format', 'json'])\nexcept SystemExit: pass\n"
        "heavy = {'torch', 'transformers', 'pyarrow', 'numpy', 'tokenizers', 'datasets', 'ray', 'gradio'} & set(sys.modules)\n"
        "sys.stderr.write(','.join(sorted(heavy)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.stderr == ""


def test_a_resumed_run_does_not_report_lost_updates():
    import trainsteps

    s = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, resume_from_step=20)
    assert "HF_STEP_WITHOUT_UPDATE" not in [t.code for t in s.warnings]


@pytest.mark.parametrize("args, words", [
    (["--num-examples", "100", "--max-epochs", "5"], "--max-epochs is an option of --framework lightning"),
    (["--num-examples", "100", "--train-iters", "50"], "--train-iters is an option of --framework megatron, megatron-bridge, neox, swift-megatron"),
    (["--num-examples", "100", "--logging-steps", "0"], "requires non-zero --logging_steps"),
    (["--num-examples", "99999999999999999999"], "beyond what any run can hold"),
])
def test_settings_that_would_be_ignored_or_crash_are_refused(run_cli, args, words):
    code, out, err = run_cli("plan", *args)
    assert code == 2 and out == "" and words in err


@pytest.mark.parametrize("version, code", [("4.45.9", "HF_UNKNOWN_RELEASE"), ("4.45.2", None), ("5.99.0", "HF_NEWER_THAN_KNOWN")])
def test_unpublished_releases_are_named(version, code):
    import trainsteps

    codes = [t.code for t in trainsteps.plan(num_examples=1000, transformers=version).warnings]
    assert (code in codes) if code else not {"HF_UNKNOWN_RELEASE", "HF_NEWER_THAN_KNOWN"} & set(codes)
