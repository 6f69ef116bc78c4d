"""Damaged data files never crash the process: mutated Arrow (stream and file), Parquet, JSONL, gzip and zstd files are
each counted by `trainsteps count` in a child process, so that a crash (SIGSEGV, SIGBUS, an abort in pyarrow) is seen as
such. Every case ends in an answer (exit 0) or one `error: cannot read ...` line (exit 2), never an internal error.

The cases run in one child process, one after the other; a child that dies names the case it died on (the last one it
started) and a new child goes on from the next case. `FUZZ_FILES=N` sets the cases per format (default 24: the whole
file takes well under a minute)."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

HOSTILE = FIXTURES / "hostile"
CASES = int(os.environ.get("FUZZ_FILES", "24"))
SEED = 20261127
ROWS = [{"text": f"row {i} " + "word " * (i % 7), "id": i, "tags": [f"t{i % 3}"], "meta": {"score": i / 3}} for i in range(60)]

DRIVER = r"""
import contextlib, io, sys
from trainsteps.cli.main import main
for index, path in enumerate(sys.argv[1:]):
    print("start", index, flush=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(["count", path, "--no-cache"])
            code = 0
        except SystemExit as exc:
            code = exc.code
    text = err.getvalue().strip()
    print("done", index, code, text.splitlines()[0] if text else "", flush=True)
"""


def _originals() -> dict[str, bytes]:
    table = pa.Table.from_pylist(ROWS)
    stream, file, parquet = pa.BufferOutputStream(), pa.BufferOutputStream(), io.BytesIO()
    with pa.ipc.new_stream(stream, table.schema) as writer:
        writer.write_table(table, max_chunksize=20)
    with pa.ipc.new_file(file, table.schema) as writer:
        writer.write_table(table, max_chunksize=20)
    pq.write_table(table, parquet, row_group_size=20)
    lines = "".join(json.dumps(row) + "\n" for row in ROWS).encode()
    return {"stream.arrow": stream.getvalue().to_pybytes(), "file.arrow": file.getvalue().to_pybytes(),
            "rows.parquet": parquet.getvalue(), "rows.jsonl": lines, "rows.jsonl.gz": gzip.compress(lines),
            "rows.jsonl.zst": zstandard.ZstdCompressor().compress(lines)}


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """Flipped bytes, overwritten 4-byte words (offsets and lengths), a cut, or a repeated piece."""
    data = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(max(len(data) - 4, 1))
            data[at:at + 4] = rng.choice([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff\xff\xff\xff", rng.randbytes(4)])
    elif kind == 2:
        del data[rng.randrange(1, len(data)):]
    else:
        at, size = rng.randrange(len(data)), rng.randint(1, 64)
        data[at:at] = data[at:at + size]
    return bytes(data)


def _run(paths: list[str]) -> dict[int, tuple]:
    """Case index -> (exit code, first stderr line), or ("crash", signal) for the case a child died on."""
    results: dict[int, tuple] = {}
    start = 0
    while start < len(paths):
        child = subprocess.run([sys.executable, "-c", DRIVER, *paths[start:]], capture_output=True, text=True, timeout=240,
                               env={**os.environ, "TRAINSTEPS_DEBUG": ""})
        last = start - 1
        for line in child.stdout.splitlines():
            word, index, *rest = line.split(" ", 3)
            if word == "start":
                last = start + int(index)
            else:
                results[start + int(index)] = (int(rest[0]), rest[1] if len(rest) > 1 else "")
        if child.returncode == 0:
            break
        results[last] = ("crash", child.returncode)
        start = last + 1
    return results


def test_mutated_data_files_of_every_format_end_in_a_count_or_a_clean_refusal(tmp_path):
    rng = random.Random(SEED)
    paths = []
    for name, original in _originals().items():
        (tmp_path / f"good-{name}").write_bytes(original)
        paths.append(str(tmp_path / f"good-{name}"))
        for i in range(CASES):
            path = tmp_path / f"case{i}-{name}"
            path.write_bytes(_mutate(original, rng))
            paths.append(str(path))
    paths += [str(HOSTILE / name) for name in ("crash_sigbus.arrow", "crash_sigsegv.arrow", "pyunicode_negative.arrow")]  # found by a longer run
    results = _run(paths)
    bad = {paths[i]: outcome for i, outcome in results.items()
           if outcome[0] not in (0, 2) or "internal error" in outcome[1] or (outcome[0] == 2 and not outcome[1].startswith("error: "))}
    assert not bad, bad
    assert len(results) == len(paths)
    assert all(results[i][0] == 0 for i, path in enumerate(paths) if "/good-" in path)
