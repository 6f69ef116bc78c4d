"""explain sets a framework's own printed MFU beside the one it computes against the dense peak of timing/gpus.py,
and says how the framework counts differently (logs/timing.py FRAMEWORK_MFU)."""

import json
from pathlib import Path

from click.testing import CliRunner

from trainsteps.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
SEED_001 = (FIXTURES / "seed_001_1047.log").read_text(encoding="utf-8")
BAR_78 = "  2%|▏         | 78/3900 [05:12<4:15:03,  4.00s/it]"
TITAN = next(line for line in (FIXTURES / "wild" / "torchtitan-3393-checkpoint-steps.log").read_text().splitlines()
             if " mfu: " in line)
"""A real torchtitan step line (`... tps: 7,282  tflops: 0.52  mfu: 0.17%`)."""
SWIFT = ("{'loss': 1.2345, 'grad_norm': 0.8, 'learning_rate': 1e-05, 'MFU': 0.412345, 'epoch': 0.5, "
         "'global_step/max_steps': '78/3900', 'percentage': '2.00%', 'elapsed_time': '5m 12s', 'remaining_time': '4h 15m 3s'}")
"""ms-swift's logged dict with the `MFU` key its PerfMetricsLogCallback adds (swift/callbacks/perf_log.py)."""


def explained_time(extra: str, *hardware) -> dict:
    args = ["explain", "--text", SEED_001 + "\n" + BAR_78 + "\n" + extra, *hardware, "--format", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["runs"][0]["time"]


HARDWARE = ("--params", "7.6e9", "--gpu", "h100-sxm", "--seq-length", "2048")


def test_torchtitans_own_mfu_is_set_beside_ours_with_its_full_causal_attention_said():
    found = explained_time(TITAN, *HARDWARE)["framework_mfu"]
    assert found["id"] == "explain.mfu.framework.torchtitan"
    assert "mfu 0.2%" in found["text"] and "counts causal attention in full" in found["text"]
    assert "989.4 TFLOP/s bf16" in found["text"]  # the dense peak plan uses


def test_ms_swifts_logged_mfu_is_said_to_leave_out_attention_and_use_a_measured_rate():
    found = explained_time(SWIFT, *HARDWARE)["framework_mfu"]
    assert found["id"] == "explain.mfu.framework.swift"
    assert "MFU 41.2%" in found["text"] and "no attention" in found["text"] and "measured" in found["text"]


def test_without_a_model_and_a_gpu_no_mfu_is_compared():
    assert explained_time(SWIFT)["framework_mfu"] is None
