"""`trainsteps explain` on files, directories, stdin and pasted text; JSON and Chinese output."""

import json
from pathlib import Path

from click.testing import CliRunner

from trainsteps.cli.main import cli

from .conftest import FIXTURES

SEED_001 = FIXTURES / "seed_001_1047.log"


def run(*args, stdin=None):
    return CliRunner().invoke(cli, ["explain", *args], input=stdin)


def test_json_has_the_documented_sections():
    result = run(str(SEED_001), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"observed", "inferred", "run", "contradictions", "derivation", "runs"} <= set(data)
    assert data["inferred"]["world_size"] == 1
    assert data["inferred"]["num_train_epochs"] == {"min": 299.923077, "max": 300.0, "min_exclusive": True}
    assert data["run"]["optimizer_steps"] == 3900
    assert any(step["key"] == "num_update_steps_per_epoch" and step["value"] == 13 for step in data["derivation"])


def test_stdin_and_text_give_the_same_answer():
    text = SEED_001.read_text()
    from_stdin = json.loads(run("-", "--format", "json", stdin=text).output)
    from_text = json.loads(run("--text", text, "--format", "json").output)
    assert from_stdin["inferred"] == from_text["inferred"]


def test_directory_with_a_log_and_a_trainer_state(tmp_path):
    (tmp_path / "train.log").write_text(SEED_001.read_text())
    state = {"global_step": 3900, "epoch": 278.6095, "max_steps": 3900, "num_train_epochs": 300, "train_batch_size": 10,
             "log_history": [{"loss": 1.0, "epoch": 0.77, "step": 10}, {"train_runtime": 1.0, "epoch": 278.6095, "step": 3900}]}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    result = run(str(tmp_path), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    kinds = [r["observed"]["kind"] for r in data["runs"]]
    assert kinds == ["hf", "trainer_state"]
    state_run = data["runs"][1]
    assert any(f["code"] == "HF_PLAN_LOOP_MISMATCH" for f in state_run["facts"])


def test_a_run_folder_reads_its_launch_script_as_the_paths_given_together_do(tmp_path):
    lines = [{"current_steps": step, "total_steps": 100, "loss": 1.0, "epoch": step / 50, "elapsed_time": f"0:0{step // 10}:00"}
             for step in (10, 20, 30)]
    (tmp_path / "trainer_log.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    (tmp_path / "run.slurm").write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\nsrun python train.py\n")
    folder = json.loads(run(str(tmp_path), "--format", "json").output)
    paths = json.loads(run(str(tmp_path / "trainer_log.jsonl"), str(tmp_path / "run.slurm"), "--format", "json").output)
    assert folder["runs"][0]["inferred"] == paths["runs"][0]["inferred"]
    assert paths["runs"][0]["inferred"]["world_size"] == 16
    # the run starts at line 1 of its own file, not at a line of the launch script that lends it a number
    assert "trainer_log.jsonl, from line 1)" in run(str(tmp_path)).output


def test_chinese():
    result = run(str(SEED_001), "--lang", "zh")
    assert result.exit_code == 0
    assert "逐步推导" in result.output and "278.61" in result.output


def test_processes_differ_from_the_launcher():
    text = "torchrun --nproc_per_node 4 train.py\n" + SEED_001.read_text()
    data = json.loads(run("--text", text, "--format", "json").output)
    assert any(f["code"] == "LOG_PROCESSES_DIFFER" and "1 process(es) were used, not 4" in f["text"] for f in data["facts"])


def test_raw_examples_option():
    data = json.loads(run(str(SEED_001), "--raw-examples", "2000", "--format", "json").output)
    assert any(f["code"] == "LOG_FEWER_EXAMPLES" for f in data["facts"])


def test_path_and_text_together_is_an_error():
    result = run(str(SEED_001), "--text", "x")
    assert result.exit_code == 2


def test_nothing_found():
    result = run("--text", "hello world")
    assert result.exit_code == 2 and "no training log line" in result.output
    assert "in pasted text" in result.output
    # the hint names every kind of line explain reads
    for kind in ("Running training", "progress bars", "train metrics", "trainer_log.jsonl", "ms-swift", "total_num_steps", "neox"):
        assert kind in result.output


def test_nothing_found_points_stream_and_neox_questions_to_their_commands():
    stream = run("--text", "LLaMA-Factory streaming: how many epochs does my stream run?")
    assert stream.exit_code == 2 and "solve --streaming" in stream.output
    neox = run("--text", "GPT-NeoX: iterations per epoch = tokens / (global batch x seq length)")
    assert neox.exit_code == 2 and "--framework neox" in neox.output


def test_every_fixture_renders_in_both_languages_and_json():
    for path in sorted(p for p in FIXTURES.rglob("*.log") if not {"corpus", "wild", "newcomer"} & set(p.parts)):  # test_corpus.py, test_wild.py, test_newcomer_logs.py
        for lang in ("en", "zh"):
            result = run(str(path), "--lang", lang)
            assert result.exit_code == 0, (path, result.output)
        assert json.loads(run(str(path), "--format", "json").output)["runs"]


def test_trainer_state_pasted_as_text():
    state = '{"global_step": 20, "epoch": 1.53, "max_steps": 39, "num_train_epochs": 3, "train_batch_size": 10, "log_history": []}'
    for lang in ("en", "zh"):
        result = run("--text", state, "--lang", lang)
        assert result.exit_code == 0, result.output
    assert "20 of 39" in run("--text", state).output


def test_a_banner_pasted_on_one_line_is_read_label_by_label(run_cli):
    text = ("Num examples = 1,047 Num Epochs = 300 Instantaneous batch size per device = 10 Total train batch size "
            "(w. parallel, distributed & accumulation) = 80 Gradient Accumulation steps = 8 Total optimization steps = 3,900")
    code, out, _ = run_cli("explain", "--text", text, "--format", "json")
    import json

    data = json.loads(out)
    banner = data["observed"]["banner"]
    assert code == 0 and banner["max_steps"]["value"] == 3900 and banner["num_epochs"]["value"] == 300
    assert data["inferred"]["world_size"] == 1


def test_pretraining_lines_open_with_what_was_read():
    path = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "corpus" / "megatron-lumi-mi300x-tp4pp2-timelimit.log"
    lines = path.read_text(encoding="utf-8").count("\n")
    answer, first = run(str(path)).output.splitlines()[:2]
    assert answer == "Stopped at step 17 of 20: interrupted"  # the answer first: the job hit its time limit at iteration 17
    assert first.startswith("Pretraining lines") and f"{lines:,} line(s)" in first


def test_a_file_is_reported_under_its_path_as_pathlib_spells_it(tmp_path, monkeypatch):
    from trainsteps.logs import read_log

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.log").write_text((FIXTURES / "seed_001_1047.log").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for given in ("d/x.log", "./d/x.log", "d//x.log", "d/./x.log", str(tmp_path / "d" / "x.log")):
        assert read_log(given).files == [str(Path(given))], given
    assert read_log([Path("./d/x.log")]).files == ["d/x.log"]
    assert read_log("d/").files == [str(Path("d/x.log"))]
