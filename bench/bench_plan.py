"""How fast is a plan? Prints in-process plan() medians and CLI wall time against `python -c pass`.

Run: `make bench` (or `.venv/bin/python bench/bench_plan.py`). Targets: plan() median <= 50 us for a typical run;
`trainsteps plan ...` wall time <= 2x `python -c pass` measured in the same run.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
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


def run_ms(cmd: list[str], repeat: int = 21) -> tuple[float, float]:
    """(median wall ms, mean CPU ms) of a command. CPU time (user + sys of the child) is what a busy
    machine does not inflate, so it is printed beside the wall time."""
    times = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / repeat
    return statistics.median(times) * 1000, cpu * 1000


def main() -> None:
    print("plan() in-process, median of 2,000 calls")
    for name, settings in CASES.items():
        for version in ("4.49.0", "5.23.0"):
            us = median_us(lambda s=settings, v=version: trainsteps.plan(transformers=v, **s))
            print(f"  {us:8.1f} us  transformers {version}  {name}")
    cli = shutil.which("trainsteps", path=os.path.dirname(sys.executable)) or "trainsteps"
    baseline = run_ms([sys.executable, "-c", "pass"])
    click_only = run_ms([sys.executable, "-c", "import click"])
    plan_cmd = run_ms([cli, "plan", "--num-examples", "1047", "--per-device-train-batch-size", "10",
                       "--gradient-accumulation-steps", "8", "--num-train-epochs", "300"])
    print("Command start-up: median wall ms / mean CPU ms of 21 runs (target: plan <= 2x python -c pass)")
    for name, (wall, cpu) in [("python -c pass (baseline)", baseline), ("python -c 'import click'", click_only),
                              ("trainsteps plan ...", plan_cmd)]:
        print(f"  {wall:8.1f} ms wall {wall / baseline[0]:5.2f}x  {cpu:7.1f} ms CPU {cpu / baseline[1]:5.2f}x  {name}")


if __name__ == "__main__":
    main()
