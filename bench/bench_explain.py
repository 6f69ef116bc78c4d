"""Throughput and peak memory of `trainsteps explain` on a large generated log.

    python bench/bench_explain.py                 # ~200 MB
    python bench/bench_explain.py --mb 1024       # 1 GB: memory must stay flat
    python bench/bench_explain.py --append docs/benchmarks.md
    python bench/bench_explain.py --random-mb 1024   # also 1 GB of random bytes (time and memory must stay bounded)

Each figure is also given as a ratio to reading the same file line by line in plain Python
(`for line in open(path, errors="replace"): pass`), measured in the same child process, so a loaded machine
shifts both. The 7-line banner with `Num Epochs = 128,770` and `Num examples = 3` is timed too (it took 5 s
when every candidate replayed every epoch; the bound is 2 s per MB of input).

The log is what a long LLaMA-Factory run writes: a banner, then tqdm redraws (\\r), loss dicts and
unrelated INFO lines, repeated; the last lines hold the train_runtime summary. The reader runs in a
child process so its peak RSS is measured alone.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

BANNER = """[INFO|trainer.py:2405] 2025-03-22 15:43:25,001 >> ***** Running training *****
[INFO|trainer.py:2406] 2025-03-22 15:43:25,001 >>   Num examples = 1,047
[INFO|trainer.py:2407] 2025-03-22 15:43:25,001 >>   Num Epochs = 300
[INFO|trainer.py:2408] 2025-03-22 15:43:25,001 >>   Instantaneous batch size per device = 10
[INFO|trainer.py:2411] 2025-03-22 15:43:25,001 >>   Total train batch size (w. parallel, distributed & accumulation) = 80
[INFO|trainer.py:2412] 2025-03-22 15:43:25,001 >>   Gradient Accumulation steps = 8
[INFO|trainer.py:2413] 2025-03-22 15:43:25,001 >>   Total optimization steps = 3,900
[INFO|trainer.py:2414] 2025-03-22 15:43:25,001 >>   Number of trainable parameters = 4,399,104
"""


def generate(path: str, megabytes: int) -> int:
    target = megabytes << 20
    with open(path, "w", encoding="utf-8") as f:
        f.write(BANNER)
        written, step = len(BANNER), 0
        while written < target:
            step = step % 3900 + 1
            block = (f" {step * 100 // 3900:3d}%|████▌     | {step}/3900 [01:02<00:58,  1.05it/s]\r"
                     f"{{'loss': 0.61, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': {step / 14:.2f}}}\n"
                     "[INFO|2025-03-22 15:43:26] llamafactory.train.callbacks:143 >> {'loss': 0.6100, 'learning_rate': 1.0e-05}\n")
            f.write(block)
            written += len(block.encode())
        tail = "100%|██████████| 3900/3900 [1:02:03<00:00,  1.05it/s]\n" \
               "{'train_runtime': 3723.1, 'train_samples_per_second': 84.4, 'train_steps_per_second': 1.048, 'epoch': 278.61}\n"
        f.write(tail)
        return written + len(tail)


CHILD = """
import json, resource, sys, time
cpu = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_SELF).ru_stime
t, c = time.perf_counter(), cpu()
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    pass
baseline, baseline_cpu = time.perf_counter() - t, cpu() - c
t, c = time.perf_counter(), cpu()
from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log
from trainsteps.logs.pretrain import PretrainObserved
pretrain = PretrainObserved()
obs = read_log(sys.argv[1], also=pretrain.feed)
inf = explain_log(obs)
elapsed, elapsed_cpu = time.perf_counter() - t, cpu() - c
best = inf[0].best if inf else None
timing = inf[0].timing if inf else None
print(json.dumps({"seconds": elapsed, "baseline": baseline, "cpu": elapsed_cpu, "baseline_cpu": baseline_cpu, "bytes": obs.bytes_read, "lines": obs.lines_read, "runs": len(obs.runs),
                  "family": best.family.name if best else None,
                  "last_step": inf[0].run.last_step.value if inf and inf[0].run.last_step else None,
                  "rate": timing.per_step.expected if timing else None,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

SLOW_BANNER = """***** Running training *****
  Num examples = 3
  Num Epochs = 128,770
  Instantaneous batch size per device = 8
  Total train batch size (w. parallel, distributed & accumulation) = 256
  Gradient Accumulation steps = 8
  Total optimization steps = 1,509
"""


def _child(path: str) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", CHILD, path], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _line(label: str, size: int, result: dict) -> str:
    mb = size / (1 << 20)
    mb_s = mb / result["seconds"] if result["seconds"] else float("inf")
    base = mb / result["baseline"] if result["baseline"] else float("inf")
    cpu_ratio = result["baseline_cpu"] / result["cpu"] if result["cpu"] else float("inf")
    return (f"{label}: {mb:,.0f} MB, {result['lines']:,} lines: {result['seconds']:.2f} s, {mb_s:.1f} MB/s "
            f"(plain Python line reading {base:.0f} MB/s: ratio {mb_s / base:.2f}); CPU {result['cpu']:.2f} s, "
            f"{mb / result['cpu'] if result['cpu'] else 0:.0f} MB/s of CPU (ratio {cpu_ratio:.2f} to plain reading's CPU), "
            f"peak RSS {result['peak_rss_mb']:.0f} MB, "
            f"runs {result['runs']}, family {result['family']}, last step {result['last_step']}, "
            f"rate {result['rate'] and round(result['rate'], 3)} s/step")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=200, help="size of the generated log in MB (default 200)")
    parser.add_argument("--append", help="append the result as a markdown section to this file")
    parser.add_argument("--random-mb", type=int, default=0, help="also read this many MB of random bytes")
    args = parser.parse_args()

    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.log")
        size = generate(path, args.mb)
        lines.append(_line("training log", size, _child(path)))
        os.remove(path)
        slow = os.path.join(tmp, "slow.log")
        with open(slow, "w", encoding="utf-8") as f:
            f.write(SLOW_BANNER)
        result = _child(slow)
        lines.append(f"7-line banner, Num Epochs = 128,770 over 3 examples: {result['seconds']:.3f} s")
        if args.random_mb:
            noise = os.path.join(tmp, "noise.bin")
            with open(noise, "wb") as f:
                for _ in range(args.random_mb):
                    f.write(os.urandom(1 << 20))
            lines.append(_line("random bytes", args.random_mb << 20, _child(noise)))
    text = "\n".join(lines)
    print(text)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as f:
            f.write(f"- {time.strftime('%Y-%m-%d')}, `--mb {args.mb}`, {platform.python_implementation()} {platform.python_version()}, "
                    f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}:\n" + "".join(f"  - {t}\n" for t in text.splitlines()))


if __name__ == "__main__":
    main()
