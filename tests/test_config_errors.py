"""Bad config input: one line saying what is wrong and how to fix it, exit code 2, no traceback."""

import json
import pathlib
import pickle
import shutil

from .conftest import ROOT

LF_EXAMPLE = ROOT / "examples" / "llamafactory"


def lf_copy(tmp_path: pathlib.Path) -> pathlib.Path:
    """A private copy of the LLaMA-Factory example folder to break."""
    folder = tmp_path / "lf"
    shutil.copytree(LF_EXAMPLE, folder)
    return folder


def test_malformed_yaml_names_the_line_and_column(run_cli, tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("stage: sft\ndataset: demo\n  per_device_train_batch_size: 4\n")
    code, out, err = run_cli("plan", cfg)
    assert code == 2
    assert "bad.yaml line 3 column" in err and "invalid YAML" in err
    assert "Traceback" not in err


def test_malformed_json_names_the_line_and_column(run_cli, tmp_path):
    cfg = tmp_path / "args.json"
    cfg.write_text('{\n  "per_device_train_batch_size": 4,\n  "num_train_epochs": 3\n  "max_steps": 10\n}\n')
    code, _, err = run_cli("plan", cfg)
    assert code == 2
    assert "args.json line 4 column 3: invalid JSON" in err


def test_a_dataset_missing_from_dataset_info_is_named_with_the_known_ones(run_cli, tmp_path):
    folder = lf_copy(tmp_path)
    cfg = folder / "sft_lora.yaml"
    cfg.write_text(cfg.read_text().replace("dataset: demo_alpaca", "dataset: demo_alpacca"))
    code, _, err = run_cli("plan", cfg, cwd=folder)
    assert code == 2
    assert "'demo_alpacca' is not defined in" in err and "demo_alpaca" in err.split("hint")[1]


def test_a_data_file_that_does_not_exist(run_cli, tmp_path):
    folder = lf_copy(tmp_path)
    (folder / "data" / "demo_alpaca.json").unlink()
    code, _, err = run_cli("plan", folder / "sft_lora.yaml", cwd=folder)
    assert code == 2
    assert "data file of dataset 'demo_alpaca' does not exist" in err


def test_a_config_file_that_does_not_exist(run_cli, tmp_path):
    code, _, err = run_cli("plan", tmp_path / "nope.yaml")
    assert code == 2
    assert "does not exist" in err


def test_a_pickled_training_args_bin_is_refused_without_being_opened(run_cli, tmp_path, monkeypatch):
    target = tmp_path / "training_args.bin"
    target.write_bytes(pickle.dumps({"per_device_train_batch_size": 8}))
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: (_ for _ in ()).throw(AssertionError("unpickled")))
    code, _, err = run_cli("plan", target)
    assert code == 2
    assert "pickled Python object" in err and "trainer_state.json" in err


def test_a_pickle_under_another_name_is_refused_by_its_header(run_cli, tmp_path):
    target = tmp_path / "args.yaml"
    target.write_bytes(pickle.dumps([1, 2, 3]))
    code, _, err = run_cli("plan", target)
    assert code == 2
    assert "pickled" in err


def test_streaming_without_max_steps_repeats_llamafactorys_own_error(run_cli, tmp_path):
    folder = lf_copy(tmp_path)
    cfg = folder / "sft_lora.yaml"
    cfg.write_text(cfg.read_text() + "streaming: true\n")
    code, _, err = run_cli("plan", cfg, cwd=folder)
    assert code == 2
    assert "Please specify `max_steps` in streaming mode." in err


def test_a_file_of_no_known_kind(run_cli, tmp_path):
    cfg = tmp_path / "x.yaml"
    cfg.write_text("colour: blue\nsize: 3\n")
    code, _, err = run_cli("plan", cfg)
    assert code == 2
    assert "cannot tell what kind of config" in err


def test_errors_are_translated(run_cli, tmp_path):
    cfg = tmp_path / "args.json"
    cfg.write_text("{")
    code, _, err = run_cli("plan", cfg, "--lang", "zh")
    assert code == 2
    assert "JSON 无效" in err


def test_a_top_level_list_is_not_a_config(run_cli, tmp_path):
    cfg = tmp_path / "args.json"
    cfg.write_text(json.dumps([1, 2]))
    code, _, err = run_cli("plan", cfg)
    assert code == 2
    assert "mapping" in err


def test_val_size_next_to_an_eval_dataset_repeats_llamafactorys_error(run_cli, tmp_path):
    folder = lf_copy(tmp_path)
    cfg = folder / "sft_lora.yaml"
    cfg.write_text(cfg.read_text() + "val_size: 0.1\neval_dataset: demo_chat\n")
    code, _, err = run_cli("plan", cfg, cwd=folder)
    assert code == 2 and "Cannot specify `val_size` if `eval_dataset` is not None." in err
