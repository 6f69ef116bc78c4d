"""A measured RL step is billed on the GPUs the run holds, the same GPUs the RL step model plans it on."""

import json

import pytest

from ..conftest import ROOT

EX = ROOT / "examples"


def _time(run_cli, *args):
    code, out, err = run_cli("plan", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)["time"]


@pytest.mark.parametrize("launch, extra", [
    ((EX / "openrlhf" / "reinforce_ray.sh").read_text().split("\n", 1)[1], ("--num-examples", 20000)),  # GPUs only in defaults
    ((EX / "slime" / "qwen3_4b.sh").read_text().split("\n", 1)[1], ()),
])
def test_a_measured_rl_step_is_billed_on_the_gpus_the_step_model_plans(run_cli, launch, extra):
    measured = _time(run_cli, "--launch", launch, *extra, "--step-time", 300)
    modelled = _time(run_cli, "--launch", launch, *extra, "--gpu", "a100", "--params", "8e9")
    assert measured["gpus"] == modelled["gpus"] > 1
    hours = measured["wall_seconds"]["expected"] / 3600
    assert measured["gpu_hours"]["expected"] == pytest.approx(hours * modelled["gpus"], rel=1e-4)
