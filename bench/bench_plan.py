"""How fast is a plan? Prints in-process plan() medians and CLI wall time against `python -c pass`.

Run: `make bench` (or `.venv/bin/python bench/bench_plan.py`). Targets: plan() median <= 50 us for a typical run;
`trainsteps plan ...` wall time <= 2x `python -c pass` measured in the same run.
"""

from __future__ import annotations

import os
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


def wall_ms(cmd: list[str], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    print("plan() in-process, median of 2,000 calls")
    for name, settings in CASES.items():
        for version in ("4.49.0", "5.23.0"):
            us = median_us(lambda s=settings, v=version: trainsteps.plan(transformers=v, **s))
            print(f"  {us:8.1f} us  transformers {version}  {name}")
    cli = shutil.which("trainsteps", path=os.path.dirname(sys.executable)) or "trainsteps"
    baseline = wall_ms([sys.executable, "-c", "pass"])
    plan_cmd = wall_ms([cli, "plan", "--num-examples", "1047", "--per-device-train-batch-size", "10",
                        "--gradient-accumulation-steps", "8", "--num-train-epochs", "300"])
    print("CLI wall time, median of 15 runs")
    print(f"  {baseline:8.1f} ms  python -c pass (baseline)")
    print(f"  {plan_cmd:8.1f} ms  trainsteps plan ... ({plan_cmd / baseline:.2f}x baseline; target <= 2x)")


if __name__ == "__main__":
    main()
