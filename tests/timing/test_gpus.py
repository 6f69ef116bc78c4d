"""Accelerators: dense peaks with a source each, the names people rent, and `--peak-tflops` for anything else."""

import json
from pathlib import Path

import pytest

from trainsteps.errors import InputError
from trainsteps.timing.gpus import GPUS, custom_gpu, find_gpu

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "tests" / "assets" / "models" / "qwen2.5-7b"
PACKED_8_GPUS = ["plan", "--num-examples", "100000", "--per-device-train-batch-size", "4", "--gradient-accumulation-steps",
                 "8", "--gpus", "8", "--num-train-epochs", "1", "--seq-length", "2048", "--format", "json"]
RENTED = ["L4", "A10G", "A10", "A6000", "RTX 6000 Ada", "RTX 4090", "RTX 5090", "L20", "H20", "GH200", "B200", "GB200",
          "B300", "MI250X", "MI300X", "MI325X", "MI355X", "Ascend 910B", "Ascend 910C", "Gaudi 2", "Gaudi 3", "TPU v5e",
          "TPU v5p", "TPU v6e", "T4", "Tesla T4"]


@pytest.mark.parametrize("name", RENTED)
def test_every_card_people_rent_is_known_by_the_name_they_type(name):
    gpu = find_gpu(name)
    assert gpu.peak("bf16") > 0


LOGS = ROOT / "tests" / "fixtures" / "logs" / "corpus"
PRINTED = [("NVIDIA L4", "l4", "trl-3442-grpo-fsdp-banner.log"), ("NVIDIA A800-SXM4-80GB", "a800", "lf-5014-multinode-prose-zh.log"),
           ("NVIDIA A100 80GB PCIe", "a100-80g", "lf-7820-sigterm-step100.log"),
           ("NVIDIA RTX A6000", "rtx-a6000", "lf-6873-bars-callbacks.log")]


@pytest.mark.parametrize("printed, key, log", PRINTED)
def test_a_card_is_known_by_the_name_nvidia_smi_and_torch_print_in_real_logs(printed, key, log):
    assert printed in (LOGS / log).read_text(encoding="utf-8")
    assert find_gpu(printed).name == key


@pytest.mark.parametrize("key", sorted(GPUS))
def test_every_accelerator_names_its_source_and_a_dense_figure(key):
    gpu = GPUS[key]
    assert len(gpu.source) > 30
    # a datasheet's sparse figure is twice the dense one: where the source names both, the table holds the smaller
    if "sparse" in gpu.source or "sparsity" in gpu.source:
        assert "dense" in gpu.source
    if "fp8" in gpu.tflops and key not in ("gaudi3",):  # Gaudi 3 runs BF16 and FP8 matrices at the same rate
        assert gpu.tflops["fp8"] == pytest.approx(2 * gpu.tflops["bf16"], rel=0.02)  # L40S: 733 vs 2 x 362.05


def test_peak_tflops_stands_for_a_card_the_table_does_not_list(run_cli):
    code, out, err = run_cli(*PACKED_8_GPUS, "--model", str(QWEN), "--peak-tflops", "312", "--mfu", "0.4")
    assert code == 0, err
    listed = json.loads(run_cli(*PACKED_8_GPUS, "--model", str(QWEN), "--gpu", "a100", "--mfu", "0.4")[1])["time"]
    assert json.loads(out)["time"]["step_seconds"] == listed["step_seconds"]  # 312 is the A100's dense BF16 peak


def test_peak_tflops_with_a_gpu_replaces_that_cards_figure(run_cli):
    half = json.loads(run_cli(*PACKED_8_GPUS, "--model", str(QWEN), "--gpu", "h100", "--peak-tflops", "494.7")[1])["time"]
    full = json.loads(run_cli(*PACKED_8_GPUS, "--model", str(QWEN), "--gpu", "h100")[1])["time"]
    assert half["step_seconds"]["expected"] == pytest.approx(2 * full["step_seconds"]["expected"], rel=1e-3)


@pytest.mark.parametrize("value", [0.0, -5.0, float("nan")])
def test_a_peak_that_is_not_positive_is_refused(value):
    with pytest.raises(InputError):
        custom_gpu(value)


def test_peak_tflops_alone_is_one_line_and_exit_2(run_cli):
    code, out, err = run_cli(*PACKED_8_GPUS, "--model", str(QWEN), "--peak-tflops", "-1")
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2
