"""Check that `trainsteps explain --format json` says exactly the same thing with two source trees.

    python tools/explain_same.py /path/to/other/src            # this tree's src against another (e.g. main's)
    python tools/explain_same.py /path/to/other/src --big 200  # also the benchmark's 200 MB log

Inputs: every file of tests/fixtures/logs/corpus/ and the seeds in a directory given with --seeds, the benchmark's
generated log (bench/bench_explain.py, 30 MB unless --big), the same log with CRLF line ends, a file of random bytes
(small and 20 MB), a file with no newline (small and 3 MB), 6 MB files of very long lines, of mixed carriage returns
and of multi-byte characters, and the corpus concatenated to 15 MB (so every real log also goes through the large-log
reader). Each side runs in a child process; outputs are compared byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import io, json, sys, hashlib
from click.testing import CliRunner
from trainsteps.cli.main import cli
runner = CliRunner()
out = {}
for path in json.load(open(sys.argv[1])):
    result = runner.invoke(cli, ["explain", path, "--format", "json"])
    text = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text += "EXCEPTION " + repr(result.exception)
    out[path] = [result.exit_code, hashlib.sha256(text.encode()).hexdigest(), text[:4000]]
json.dump(out, open(sys.argv[2], "w"))
"""


def _inputs(tmp: Path, big: int, seeds: Path | None) -> list[str]:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_explain import generate

    paths = sorted(str(p) for p in (ROOT / "tests/fixtures/logs/corpus").iterdir() if p.name != "README.md")
    if seeds is not None and seeds.is_dir():
        paths += sorted(str(p) for p in seeds.iterdir() if p.is_file())
    gen = tmp / "generated.log"
    generate(str(gen), big)
    paths.append(str(gen))
    crlf = tmp / "generated-crlf.log"
    with open(gen, "rb") as src, open(crlf, "wb") as dst:
        for _ in range(20):
            block = src.read(1 << 20)
            if not block:
                break
            dst.write(block.replace(b"\n", b"\r\n"))
    paths.append(str(crlf))
    small_crlf = tmp / "small-crlf.log"
    small_crlf.write_bytes(crlf.read_bytes()[:200_000])
    paths.append(str(small_crlf))
    rng = random.Random(12)
    for name, size in (("random-small.bin", 300_000), ("random-20mb.bin", 20 << 20)):
        p = tmp / name
        p.write_bytes(rng.randbytes(size))
        paths.append(str(p))
    for name, size in (("nonewline-small.log", 100_000), ("nonewline-3mb.log", 3 << 20)):
        p = tmp / name
        p.write_bytes((b"12/3900 [00:01<00:02, 1.0it/s] " * (size // 31 + 1))[:size])
        paths.append(str(p))
    edges = {  # large inputs (so the middle is sampled) with what the sampled path must count right
        "long-lines.log": lambda i: (b"%d " % i) * rng.randrange(1000, 30000) + b"\r" * (i % 3) + b"\n",
        "mixed-cr.log": lambda i: rng.choice([b"a%d\r%d\n" % (i, i % 7), b"x\r\n", b"\r\r\n", b"q0\r5\n", b"%d\n" % i, b"\n",
                                              b" %d%%|## | %d/90 [00:0%d<00:01, 1.0it/s]\r" % (i % 100, i % 90, i % 9)]),
        "utf8.log": lambda i: "█é漢 %d ✓ step %d\n".format().encode() % (i, i % 977) if i % 5 else b"\xe6\xbc\n",
    }
    for name, line in edges.items():
        p = tmp / name
        with open(p, "wb") as f:
            written = i = 0
            while written < 6 << 20:
                data = line(i)
                f.write(data)
                written, i = written + len(data), i + 1
        paths.append(str(p))
    corpus = tmp / "corpus-15mb.log"
    logs = [Path(p).read_bytes() for p in paths if p.endswith((".log", ".txt", ".jsonl", ".md")) and "corpus" in p]
    with open(corpus, "wb") as f:
        written = 0
        while written < 15 << 20:
            for data in logs:
                f.write(data if data.endswith(b"\n") else data + b"\n")
                written += len(data) + 1
    paths.append(str(corpus))
    return paths


def _run(src: str, listing: Path, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    subprocess.run([sys.executable, "-c", CHILD, str(listing), str(out)], check=True, env=env, cwd=ROOT)
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("other", help="the other tree's src directory")
    parser.add_argument("--big", type=int, default=30, help="MB of the generated log (default 30)")
    parser.add_argument("--seeds", type=Path, default=Path("/work/shared/seeds"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        listing = tmp / "inputs.json"
        paths = _inputs(tmp, args.big, args.seeds)
        total_bytes = sum(os.path.getsize(p) for p in paths)
        listing.write_text(json.dumps(paths))
        mine = _run(str(ROOT / "src"), listing, tmp / "mine.json")
        theirs = _run(args.other, listing, tmp / "theirs.json")
    differ = [p for p in paths if mine[p][:2] != theirs[p][:2]]
    for p in differ:
        print(f"DIFFERS: {p} (exit {theirs[p][0]} -> {mine[p][0]})")
        print("  other:", theirs[p][2][:600].replace("\n", " "))
        print("  this: ", mine[p][2][:600].replace("\n", " "))
    codes = sorted({mine[p][0] for p in paths})
    counts = ", ".join(f"exit {c}: {sum(mine[p][0] == c for p in paths)}" for c in codes)
    print(f"{len(paths)} inputs, {total_bytes / (1 << 20):,.0f} MB ({counts}), {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
