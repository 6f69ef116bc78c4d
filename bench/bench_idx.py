"""Summarise a generated .idx with 1e8 documents: time and peak memory.

    .venv/bin/python bench/bench_idx.py [--documents 100000000] [--dir /tmp]

Writes a synthetic index (1.2 GB for 1e8 documents; no .bin) in chunks, then times
`trainsteps.data.idx.read_idx` and the token sums of a 969/30/1 split in a fresh process,
reporting the peak resident memory of that process (VmHWM), which does not grow with the file: the
lengths are mapped, read 16 MiB at a time, and each chunk's pages are released (MADV_DONTNEED) once read.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time


def generate(prefix: str, documents: int) -> None:
    import numpy as np

    from trainsteps.data.idx import write_idx

    chunk = 1 << 22

    def chunks():
        rng = np.random.default_rng(0)
        for begin in range(0, documents, chunk):
            yield rng.integers(1, 4096, min(chunk, documents - begin), dtype=np.int32)

    write_idx(prefix, chunks, documents, dtype_code=8)


def _peak_mib() -> float:
    """VmHWM of this process (ru_maxrss would include the parent's peak, inherited across fork)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(prefix: str) -> None:
    import numpy  # noqa: F401  (imported before the clock starts: its import time is not part of summarising)

    from trainsteps.data.idx import IdxReader
    from trainsteps.frameworks.gptdata import split_neox

    base = _peak_mib()
    start = time.perf_counter()
    reader = IdxReader(prefix)
    summary = reader.summary()
    summarised = time.perf_counter() - start
    bounds = split_neox("969, 30, 1", summary.num_sequences)
    tokens = [reader.tokens(bounds[i], bounds[i + 1]) for i in range(3)]
    total = time.perf_counter() - start
    peak = _peak_mib()
    print(f"documents        {summary.num_documents:,}")
    print(f"tokens           {summary.num_tokens:,}")
    print(f"percentiles      {summary.percentiles}")
    print(f"split tokens     {tokens}")
    print(f"summary          {summarised:.3f} s")
    print(f"summary + split  {total:.3f} s")
    print(f"peak RSS         {peak:.0f} MiB (before reading: {base:.0f} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000_000)
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    prefix = os.path.join(args.dir, f"bench_idx_{args.documents}")
    if not os.path.exists(prefix + ".idx"):
        start = time.perf_counter()
        generate(prefix, args.documents)
        print(f"generated {os.path.getsize(prefix + '.idx') / 2**30:.2f} GiB in {time.perf_counter() - start:.1f} s")
    subprocess.run([sys.executable, __file__, "--measure", prefix], check=True)


if __name__ == "__main__":
    main()
