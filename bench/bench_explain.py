"""Throughput and peak memory of `trainsteps explain` on a large generated log.

    python bench/bench_explain.py                 # ~200 MB
    python bench/bench_explain.py --mb 1024       # 1 GB: memory must stay flat
    python bench/bench_explain.py --append docs/benchmarks.md
    python bench/bench_explain.py --random-mb 1024   # also 1 GB of random bytes (time and memory must stay bounded)
    python bench/bench_explain.py --shape-mb 200 --startup-runs 0 --only-shapes --before /path/to/main/src   # two trees in turn

Each figure is also given as a ratio to reading the same file line by line in plain Python
(`for line in open(path, errors="replace"): pass`), measured in the same child process, so a loaded machine
shifts both. The 7-line banner with `Num Epochs = 128,770` and `Num examples = 3` is timed too (it took 5 s
when every candidate replayed every epoch; the bound is 2 s per MB of input), and so are banner fragments repeated
2,000 and 16,000 times, each read as a run of its own: 8x the fragments must cost at most 24x the CPU (linear, not
each fragment compared with every other: 64x). The hostile logs of tests/fixtures/hostile/ are read against their benign twins (the same
lines with ordinary numbers): at most 3x the CPU per byte.

The log is what a long LLaMA-Factory run writes: a banner, then tqdm redraws (\\r), loss dicts and
unrelated INFO lines, repeated; the last lines hold the train_runtime summary. The reader runs in a
child process so its peak RSS is measured alone.

Six log shapes are measured too (`--shape-mb`, 16 MB each), each against plain line reading of the same file in the
same child process, with the reader's modules imported before the clock starts (start-up is measured apart, against
`import click`, median of `--startup-runs` runs of each, taking turns): Trainer loss dicts, tqdm redraws (`\\r`),
LLaMA-Factory's trainer_log.jsonl, Megatron iteration lines, prose (a forum post: long English lines that say "GPU"
and "memory", every line different) and verl's metric lines (`step:12 - actor/entropy:0.5 - ...`). Targets: at most
5x the CPU of line reading, and at least 100 MB/s of CPU, on every shape.
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
if len(sys.argv) > 2:  # a shape: start-up is measured apart, so the reader's modules load before the clock starts
    from trainsteps.logs import read_log
    from trainsteps.logs.explain import explain_log
    from trainsteps.logs.pretrain import PretrainObserved
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


def _child(path: str, preload: bool = False, src: str | None = None) -> dict:
    """The reader's figures in a fresh process; `src`: another tree's src/ folder put first on its PYTHONPATH."""
    import json

    env = None if src is None else dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run([sys.executable, "-c", CHILD, path] + (["preload"] if preload else []), check=True,
                         capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


# ---------------------------------------------------------------- six shapes of log

_WORDS = ("the", "training", "run", "on", "my", "GPU", "memory", "keeps", "growing", "after", "each", "epoch", "and", "I", "tried",
          "to", "lower", "batch", "size", "but", "it", "still", "crashes", "with", "same", "error", "when", "saving", "checkpoint",
          "dataset", "is", "about", "rows", "long", "model", "loads", "fine", "reserved", "allocated", "by", "PyTorch", "what",
          "should", "change", "in", "config", "thanks", "for", "any", "help", "we", "use", "gradient", "checkpointing", "too")


def _hf_dicts(n: int, rng) -> str:
    return (f"{{'loss': {rng.uniform(0.3, 2):.4f}, 'grad_norm': {rng.uniform(0.1, 9):.4f}, 'learning_rate': {rng.uniform(1, 9):.4f}e-05, "
            f"'epoch': {n / 37:.2f}}}\n")


def _tqdm(n: int, rng) -> str:  # tqdm writing to a file: one physical line of \r-separated redraws per 20 steps
    return "".join(f" {s * 100 // 400000:3d}%|{'█' * (s * 10 // 400000):<10}| {s}/400000 [{s // 60:02d}:{s % 60:02d}<59:40, "
                   f" {rng.uniform(1, 3):.2f}it/s]\r" for s in range(n * 20 % 400000, n * 20 % 400000 + 20)) + "\n"


def _lf_jsonl(n: int, rng) -> str:
    return (f'{{"current_steps": {n}, "total_steps": 999999, "loss": {rng.uniform(0.3, 2):.4f}, "eval_loss": null, "predict_loss": null, '
            f'"reward": null, "learning_rate": {rng.uniform(1, 9):.16f}e-05, "epoch": {n / 9999:.2f}, "percentage": {n / 9999.99:.2f}, '
            f'"elapsed_time": "{n // 3600}:{n // 60 % 60:02d}:{n % 60:02d}", "remaining_time": "1:03:25"}}\n')


def _megatron(n: int, rng) -> str:
    return (f" [2025-11-14 10:13:12] iteration {n:8d}/ 9999999 | consumed samples: {n * 512:12d} | elapsed time per iteration (ms): "
            f"{rng.uniform(400, 500):.1f} | mem usages: 0.4410 | throughput per GPU (TFLOP/s/GPU): {rng.uniform(200, 260):.1f} | "
            f"learning rate: {rng.uniform(1, 9):.6f}E-04 | global batch size:   512 | lm loss: {rng.uniform(1, 9):.6f}E+00 | "
            f"loss scale: 1.0 | grad norm: {rng.uniform(0.1, 90):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |\n")


def _prose(n: int, rng) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(25, 60))).capitalize() + ".\n"


def _verl(n: int, rng) -> str:
    metrics = [f"global_seqlen/{k}:{rng.uniform(1e5, 4e5):.3f}" for k in ("min", "max", "minmax_diff", "balanced_min", "mean")]
    metrics += [f"actor/{k}:{rng.uniform(0, 1):.3f}" for k in ("entropy", "kl_loss", "pg_loss", "pg_clipfrac", "ppo_kl", "grad_norm", "lr")]
    metrics += [f"perf/mfu/actor:{rng.uniform(0, 1):.3f}", f"perf/max_memory_allocated_gb:{rng.uniform(40, 80):.3f}",
                f"perf/max_memory_reserved_gb:{rng.uniform(40, 80):.3f}", f"perf/cpu_memory_used_gb:{rng.uniform(40, 200):.3f}",
                f"training/global_step:{n}.000", f"training/epoch:{n // 200}.000"]
    metrics += [f"critic/{k}/{s}:{rng.uniform(0, 1):.3f}" for k in ("score", "rewards", "advantages", "returns") for s in ("mean", "max", "min")]
    metrics += [f"response_length/{s}:{rng.uniform(100, 4000):.3f}" for s in ("mean", "max", "min", "clip_ratio")]
    metrics += [f"timing_s/{k}:{rng.uniform(1, 400):.3f}" for k in ("gen", "old_log_prob", "ref", "adv", "update_actor", "step")]
    metrics += [f"perf/total_num_tokens:{rng.randint(10 ** 6, 10 ** 7)}", f"perf/time_per_step:{rng.uniform(300, 900):.3f}",
                f"perf/throughput:{rng.uniform(500, 3000):.3f}"]
    return f"(TaskRunner pid=87031) step:{n} - " + " - ".join(metrics) + "\n"


SHAPES = {"HF dicts": (BANNER, _hf_dicts), "tqdm redraws": (BANNER, _tqdm), "LLaMA-Factory jsonl": ("", _lf_jsonl),
          "Megatron iterations": ("", _megatron), "prose (forum post)": ("", _prose), "verl metrics": ("", _verl)}


def generate_shape(path: str, name: str, megabytes: int) -> int:
    import random

    rng = random.Random(30)
    head, line = SHAPES[name]
    target, written, n = megabytes << 20, len(head.encode()), 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        while written < target:
            n += 1
            text = line(n, rng)
            f.write(text)
            written += len(text.encode())
    return written


def _shape_line(name: str, size: int, r: dict) -> str:
    mb = size / (1 << 20)
    ratio = r["cpu"] / r["baseline_cpu"] if r["baseline_cpu"] else float("inf")
    return (f"{name:<20} {mb:5.0f} MB {r['lines']:>9,} lines  CPU {r['cpu']:6.3f} s = {mb / r['cpu']:6.0f} MB/s of CPU, "
            f"{ratio:5.2f}x line reading ({r['baseline_cpu']:.3f} s)  peak RSS {r['peak_rss_mb']:.0f} MB  runs {r['runs']}")


FRAGMENT_BANNER = "***** Running training *****\n  Num examples = 1,000\n  Num Epochs = 3\n  Total optimization steps = 375\n"


def fragments(tmp: str) -> str:
    """CPU of reading banner fragments repeated 2,000 and 16,000 times (the faster of two runs each), and their ratio:
    target at most 24x for 8x the fragments."""
    cpu = {}
    for repeats in (2000, 16000):
        path = os.path.join(tmp, f"fragments{repeats}.log")
        with open(path, "w", encoding="utf-8") as f:
            f.write(FRAGMENT_BANNER + "  Num examples = 2,048\n" * repeats)
        cpu[repeats] = min(_child(path)["cpu"] for _ in range(2))
    ratio = cpu[16000] / max(cpu[2000], 1e-3)
    return (f"banner fragments x2,000: CPU {cpu[2000]:.3f} s; x16,000: {cpu[16000]:.3f} s; ratio {ratio:.1f}x for 8x the fragments "
            f"(target <= 24x: {'met' if ratio <= 24 else 'MISSED'})")


HOSTILE_LOGS = ("explain_bar_float.log", "explain_bar_4301_digits.log", "explain_megatron_target_line.log",
                "explain_lf_jsonl_1e308.trainer_log.jsonl", "explain_nemo_exponent.log")
"""tests/fixtures/hostile/: a few lines each with a number Python reads slowly or not at all (4,301 digits, 1e308, a
huge exponent, a malformed float); tests/test_bounded_inputs.py checks what is read and the memory it takes."""


def hostile(runs: int = 200) -> str:
    """CPU per byte of reading each hostile log `runs` times in this process against its benign twin's (the same lines
    with ordinary numbers, read as often): target at most 3x (a number must not cost more to refuse than to read)."""
    import re
    from pathlib import Path

    from trainsteps.logs.reader import read_log

    def cpu(text: str) -> float:
        started = time.process_time()
        for _ in range(runs):
            read_log(text=text)
        return time.process_time() - started

    def twin(text: str) -> str:
        text = re.sub(r"e\+?\d{3,}", "e+05", text)  # 1e308, 1.63e+1000...0
        text = re.sub(r"(\d+\.\d+)(?:\.\d+)+", r"\1", text)  # 1.2.3it/s
        return re.sub(r"\d{7,}", "3900", text)  # 4,301 digits, a bare 32000000

    folder = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hostile"
    ratios = {}
    for name in HOSTILE_LOGS:
        text = (folder / name).read_text(encoding="utf-8", errors="replace")
        benign = twin(text)
        ratios[name] = (min(cpu(text) for _ in range(3)) / len(text)) / max(min(cpu(benign) for _ in range(3)) / len(benign), 1e-12)
    worst = max(ratios, key=ratios.get)
    return (f"hostile logs x{runs}, CPU per byte against the same lines with ordinary numbers: "
            + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in ratios.items())
            + f" (target <= 3x: {'met' if ratios[worst] <= 3 else 'MISSED by ' + worst})")


def startup(runs: int, tmp: str) -> str:
    """`trainsteps explain` of a 10-line banner and `trainsteps plan` against `import click` (bench_startup.py)."""
    from bench_startup import startup_lines

    return "\n".join(startup_lines(runs, tmp))


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
    parser.add_argument("--shape-mb", type=int, default=16, help="size of each of the six log shapes in MB (0: skip them)")
    parser.add_argument("--startup-runs", type=int, default=21, help="runs of each process in the start-up figure (0: skip it)")
    parser.add_argument("--only-shapes", action="store_true", help="measure the six shapes and start-up only")
    parser.add_argument("--before", help="another tree's src/ folder: each shape is read by it too, in turn, from the same file")
    args = parser.parse_args()

    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.shape_mb:
            for name in SHAPES:
                path = os.path.join(tmp, "shape.log")
                size = generate_shape(path, name, args.shape_mb)
                if args.before:  # the other tree first, then this one, on the same file
                    lines.append(_shape_line(f"{name} (before)", size, _child(path, preload=True, src=args.before)))
                    print(lines[-1], flush=True)
                lines.append(_shape_line(name, size, _child(path, preload=True)))
                print(lines[-1], flush=True)
                os.remove(path)
        if args.startup_runs:
            lines.append(startup(args.startup_runs, tmp))
            print(lines[-1], flush=True)
        if args.only_shapes:
            _report(lines, args)
            return
        path = os.path.join(tmp, "train.log")
        size = generate(path, args.mb)
        lines.append(_line("training log", size, _child(path)))
        os.remove(path)
        slow = os.path.join(tmp, "slow.log")
        with open(slow, "w", encoding="utf-8") as f:
            f.write(SLOW_BANNER)
        result = _child(slow)
        lines.append(f"7-line banner, Num Epochs = 128,770 over 3 examples: {result['seconds']:.3f} s")
        lines.append(fragments(tmp))
        lines.append(hostile())
        if args.random_mb:
            noise = os.path.join(tmp, "noise.bin")
            with open(noise, "wb") as f:
                for _ in range(args.random_mb):
                    f.write(os.urandom(1 << 20))
            lines.append(_line("random bytes", args.random_mb << 20, _child(noise)))
    _report(lines, args)


def _report(lines: list[str], args) -> None:
    text = "\n".join(lines)
    print(text)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as f:
            f.write(f"- {time.strftime('%Y-%m-%d')}, `--mb {args.mb}`, {platform.python_implementation()} {platform.python_version()}, "
                    f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}:\n" + "".join(f"  - {t}\n" for t in text.splitlines()))


if __name__ == "__main__":
    main()
