"""The callback modules import their framework only when a callback class is first used."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "lightning", "pytorch_lightning", "accelerate", "numpy")


def test_importing_the_integrations_stays_light():
    code = ("import sys, trainsteps, trainsteps.solver, trainsteps.integrations.hf, trainsteps.integrations.lightning; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_solve_command_stays_light():
    code = ("import sys; from trainsteps.cli.main import main\n"
            "try:\n main(['solve', '--global-batch', '64', '--gpus', '8'])\nexcept SystemExit:\n pass\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out.splitlines()[-1] == "[]"
