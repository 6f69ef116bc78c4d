"""How fast is a plan? Prints in-process plan() medians and CLI wall time against `python -c pass`.

Run: `make bench` (or `.venv/bin/python bench/bench_plan.py`). Targets: plan() median <= 50 us for a typical run;
`trainsteps plan ...` start-up <= 1.4x `python -c 'import click'`, measured in the same run.

The commands run with bytecode caching on (in a temporary PYTHONPYCACHEPREFIX, warmed once), as an installed
package runs, even where the environment sets PYTHONDONTWRITEBYTECODE.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import trainsteps

CASES = {
    "seed 003: 128,770 rows, bs 8, GA 8, 4 ranks, 3 epochs": dict(
        num_examples=128770, per_device_train_batch_size=8, gradient_accumulation_steps=8, world_size=4, num_train_epochs=3),
    "seed 001: 1,047 rows, bs 10, GA 8, 3 epochs": dict(
        num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=3),
    "seed 001: 1,047 rows, bs 10, GA 8, 300 epochs (300 epoch ends)": dict(
        num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300),
}


def median_us(fn, repeat: int = 2000) -> float:
    for _ in range(50):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def run_ms(cmds: dict[str, list[str]], env: dict, repeat: int = 21) -> dict[str, tuple[float, float]]:
    """Per command: (median wall ms, median CPU ms). The commands take turns, so a change of load on the shared
    machine touches all of them alike. CPU time (user + sys of the child) is what a busy machine inflates least."""
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    cpus: dict[str, list[float]] = {name: [] for name in cmds}
    for cmd in cmds.values():  # warm the bytecode cache and the page cache
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    for _ in range(repeat):
        for name, cmd in cmds.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
            walls[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {name: (statistics.median(walls[name]) * 1000, statistics.median(cpus[name]) * 1000) for name in cmds}


def main() -> None:
    print("plan() in-process, median of 2,000 calls")
    for name, settings in CASES.items():
        for version in ("4.49.0", "5.23.0"):
            us = median_us(lambda s=settings, v=version: trainsteps.plan(transformers=v, **s))
            print(f"  {us:8.1f} us  transformers {version}  {name}")
    env = dict(os.environ, PYTHONPYCACHEPREFIX=tempfile.mkdtemp(prefix="trainsteps-bench-pycache-"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(trainsteps.__file__)),
                                                    env.get("PYTHONPATH", "")] if p)
    # What the `trainsteps` console script runs (import re is its own first line).
    entry = "import re, sys; from trainsteps.cli.main import main; sys.argv[0] = 'trainsteps'; sys.exit(main())"
    args = ["plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps",
            "8", "--num-train-epochs", "300"]
    results = run_ms({"python -c pass": [sys.executable, "-c", "pass"],
                      "python -c 'import click'": [sys.executable, "-c", "import click"],
                      "trainsteps plan ...": [sys.executable, "-c", entry, *args]}, env)
    print(f"Command start-up: median wall ms / median CPU ms of 21 runs each, taking turns; load average "
          f"{os.getloadavg()[0]:.1f} (target: trainsteps plan <= 1.4x import click)")
    base, click_ = results["python -c pass"], results["python -c 'import click'"]
    for name, (wall, cpu) in results.items():
        print(f"  {wall:8.1f} ms wall {wall / base[0]:5.2f}x pass {wall / click_[0]:5.2f}x click   "
              f"{cpu:7.1f} ms CPU {cpu / base[1]:5.2f}x pass {cpu / click_[1]:5.2f}x click   {name}")


if __name__ == "__main__":
    main()
