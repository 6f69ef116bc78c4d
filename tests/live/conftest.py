"""Live tests run real frameworks on CPU; they need the venv made by tools/setup_live_env.sh."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def needs(*modules: str) -> None:
    """Skip the calling test module, with the reason, when a framework is not importable."""
    for name in modules:
        pytest.importorskip(name, reason=f"{name} is not installed: run `bash tools/setup_live_env.sh` and use that venv")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_worker(script: str, scenarios: list[dict], tmp_path: Path, ranks: int = 1, python: str | None = None,
               timeout: int = 420) -> list[list[dict]]:
    """Run a worker script (1 process, or `ranks` processes under torchrun with gloo); results per rank."""
    python = python or sys.executable
    out = tmp_path / "out"
    worker = str(ROOT / "tests" / "live" / script)
    if ranks == 1:
        cmd = [python, worker, str(out), json.dumps(scenarios)]
    else:
        cmd = [python, "-m", "torch.distributed.run", f"--nproc_per_node={ranks}", f"--master_port={free_port()}",
               worker, str(out), json.dumps(scenarios)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + str(ROOT), "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "WANDB_DISABLED": "true"}
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"worker failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return [json.loads((out / f"rank-{r}.json").read_text()) for r in range(ranks)]
