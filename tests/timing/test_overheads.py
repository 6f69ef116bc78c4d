"""Saves and the model load are stated parts of the wall time when a model is known and no time was measured."""

import json
from pathlib import Path

import pytest

from trainsteps.timing.architectures import shape_from_config
from trainsteps.timing.overheads import checkpoint_bytes, load_seconds, save_seconds

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "tests" / "assets" / "models" / "qwen2.5-7b"
SHAPE = shape_from_config(json.loads((QWEN / "config.json").read_text()))


def test_a_full_checkpoint_holds_bf16_weights_and_two_fp32_adam_moments():
    assert checkpoint_bytes(SHAPE) == pytest.approx(10 * SHAPE.total_params)
    assert checkpoint_bytes(SHAPE, save_only_model=True) == pytest.approx(2 * SHAPE.total_params)
    assert checkpoint_bytes(SHAPE, "lora") < checkpoint_bytes(SHAPE) / 50


def test_saving_and_loading_take_longer_on_slower_storage():
    save = save_seconds(SHAPE)
    assert save.low < save.expected < save.high
    assert load_seconds(SHAPE).low > 20


def test_a_plan_with_a_model_states_its_saves_and_load_instead_of_leaving_them_out(run_cli):
    args = ["plan", "--num-examples", "100000", "--per-device-train-batch-size", "4", "--gradient-accumulation-steps", "8",
            "--gpus", "8", "--num-train-epochs", "1", "--seq-length", "2048", "--save-steps", "100",
            "--model", str(QWEN), "--gpu", "h100", "--format", "json"]
    code, out, err = run_cli(*args)
    assert code == 0, err
    time = json.loads(out)["time"]
    assert time["left_out"] == []
    assert time["parts"]["save"]["expected"] > 0 and time["parts"]["prepare"]["expected"] > 0
    assert any("checkpoint save writes" in n for n in time["notes"])
    measured = json.loads(run_cli(*args, "--save-time", "30s", "--prepare-time", "10m")[1])["time"]
    assert measured["parts"]["prepare"]["expected"] == 600
    assert not any("checkpoint save writes" in n for n in measured["notes"])
