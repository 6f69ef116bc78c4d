"""How long `solve` takes: each answer plans every candidate max_steps with the loop model.

    python bench/bench_solve.py
"""

from __future__ import annotations

import time

from trainsteps.solver import solve
from trainsteps.spec import RunSpec

CASES = [
    ("stream, 1,047 rows, 3 epochs", RunSpec(streaming=True, num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8), "epochs", 3),
    ("packed stream, 1e9 tokens, 8 ranks, 1 epoch", RunSpec(streaming=True, dataset_tokens=10**9, seq_length=2048, per_device_train_batch_size=4,
                                                            gradient_accumulation_steps=8, world_size=8), "epochs", 1),
    ("map-style, 1,047 rows, 300 epochs, 4.49.0", RunSpec(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,
                                                          transformers="4.49.0"), "epochs", 300),
    ("stream, 28 rows, 10,000 epochs (10,000 passes)", RunSpec(streaming=True, num_examples=28, per_device_train_batch_size=4,
                                                               gradient_accumulation_steps=2), "epochs", 10_000),
]


def main() -> None:
    for name, spec, target, value in CASES:
        start = time.perf_counter()
        answer = solve(spec, target, value)
        took = time.perf_counter() - start
        print(f"{name:50s} max_steps={answer.ceil.max_steps:>10,}  {took * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
