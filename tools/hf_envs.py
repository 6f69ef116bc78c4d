"""Virtualenv layout and version pins for recording HF Trainer fixtures.

Stdlib only: imported by tools/record_hf.py, which must run under any Python >= 3.10
without third-party packages.

Layout (see tools/README.md):
  <root>/_torch/            a venv holding torch==2.13.0 (+cpu, from the local wheel) and numpy
  <root>/<tf version>/      one venv per transformers release; a ``_trainsteps_torch.pth`` file
                            appends <root>/_torch's site-packages to sys.path, so torch is shared
                            and never reinstalled.  Packages installed in the version venv itself
                            (e.g. numpy<2) come first on sys.path and win.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DEFAULT_ROOT = Path(os.environ.get("TRAINSTEPS_HFENV", "/tmp/hfenv"))
TORCH_PIN = "torch==2.13.0"

# transformers version -> extra pip requirements (beyond transformers==V and torch==2.13.0).
# Order = recording priority (newest-first priority list of the project).
PINS: dict[str, list[str]] = {
    "5.23.0": ["accelerate==1.15.0"],
    "4.44.2": ["accelerate==0.34.2", "numpy<2"],
    "4.49.0": ["accelerate==1.4.0"],
    "4.52.4": ["accelerate==1.7.0"],
    "4.30.2": ["accelerate==0.20.3", "numpy<2", "huggingface_hub<0.24", "setuptools<81"],
    "4.46.3": ["accelerate==1.1.1"],
    "4.51.3": ["accelerate==1.6.0"],
    "4.57.6": ["accelerate==1.11.0"],
    "5.0.0": ["accelerate==1.12.0"],
    "4.36.2": ["accelerate==0.25.0", "numpy<2", "huggingface_hub<0.24"],
    "4.56.2": ["accelerate==1.10.1"],
    "4.47.1": ["accelerate==1.2.1"],
    "5.3.0": ["accelerate"],
    "4.42.4": ["accelerate==0.32.1", "numpy<2"],
    # added so that every release family has its first and last release and at least three releases recorded
    "4.30.0": ["accelerate==0.20.3", "numpy<2", "huggingface_hub<0.24", "setuptools<81"],
    "4.30.1": ["accelerate==0.20.3", "numpy<2", "huggingface_hub<0.24", "setuptools<81"],
    "4.31.0": ["accelerate==0.21.0", "numpy<2", "huggingface_hub<0.24", "setuptools<81"],
    "4.45.2": ["accelerate==0.34.2", "numpy<2"],
    "4.46.0": ["accelerate==1.0.1"],
    "4.46.2": ["accelerate==1.1.1"],
    "4.47.0": ["accelerate==1.2.0"],
    "4.48.0": ["accelerate==1.2.1"],
    "4.52.1": ["accelerate==1.7.0"],
    "4.54.1": ["accelerate==1.9.0"],
    "4.57.1": ["accelerate==1.10.1"],
    "5.24.0": ["accelerate==1.15.0"],
}


def venv_dir(version: str, root: Path = DEFAULT_ROOT) -> Path:
    return root / version


def venv_python(version: str, root: Path = DEFAULT_ROOT) -> Path:
    return venv_dir(version, root) / "bin" / "python"


def _site_packages(venv: Path) -> Path:
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return venv / "lib" / ver / "site-packages"


def _run(cmd: list[str], log) -> None:
    print("+", " ".join(cmd), file=log, flush=True)
    subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)


def setup_torch_base(root: Path = DEFAULT_ROOT, log=sys.stderr) -> Path:
    base = root / "_torch"
    py = base / "bin" / "python"
    if py.exists():
        r = subprocess.run([str(py), "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.startswith("2.13.0"):
            return base
    root.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", str(base)], log)
    _run([str(py), "-m", "pip", "install", "-q", TORCH_PIN, "numpy"], log)
    return base


def setup_version(version: str, root: Path = DEFAULT_ROOT, log=sys.stderr,
                  extra: list[str] | None = None) -> Path:
    """Create <root>/<version> with transformers==version and its pins; returns its python."""
    if version not in PINS and extra is None:
        raise SystemExit(f"no pins known for transformers {version}; pass --pin REQ (repeatable)")
    base = setup_torch_base(root, log)
    venv = venv_dir(version, root)
    py = venv / "bin" / "python"
    if not py.exists():
        _run([sys.executable, "-m", "venv", str(venv)], log)
    # share torch: append the base venv's site-packages after the venv's own
    pth = _site_packages(venv) / "_trainsteps_torch.pth"
    pth.write_text(str(_site_packages(base)) + "\n")
    reqs = [TORCH_PIN, f"transformers=={version}"] + (extra if extra is not None else PINS[version])
    _run([str(py), "-m", "pip", "install", "-q"] + reqs, log)
    return py
