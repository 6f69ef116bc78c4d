"""Throughput and peak memory of `trainsteps explain` on a large generated log.

    python bench/bench_explain.py                 # ~200 MB
    python bench/bench_explain.py --mb 1024       # 1 GB: memory must stay flat
    python bench/bench_explain.py --append docs/benchmarks.md

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
t = time.perf_counter()
from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log
obs = read_log(sys.argv[1])
inf = explain_log(obs)
elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "bytes": obs.bytes_read, "lines": obs.lines_read, "runs": len(obs.runs),
                  "family": inf[0].best.family.name if inf and inf[0].best else None,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=200, help="size of the generated log in MB (default 200)")
    parser.add_argument("--append", help="append the result as a markdown section to this file")
    args = parser.parse_args()
    import json

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.log")
        size = generate(path, args.mb)
        out = subprocess.run([sys.executable, "-c", CHILD, path], check=True, capture_output=True, text=True)
        result = json.loads(out.stdout)
    mb_s = size / (1 << 20) / result["seconds"]
    text = (f"log {size / (1 << 20):.0f} MB, {result['lines']:,} lines: {result['seconds']:.1f} s, {mb_s:.1f} MB/s, "
            f"peak RSS {result['peak_rss_mb']:.0f} MB (runs {result['runs']}, family {result['family']})")
    print(text)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as f:
            f.write(f"- {time.strftime('%Y-%m-%d')}, `--mb {args.mb}`, {platform.python_implementation()} {platform.python_version()}, "
                    f"{os.cpu_count()} cores: {text}\n")


if __name__ == "__main__":
    main()
