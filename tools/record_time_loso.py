"""Record the leave-one-source-out figures the time model's tests assert (tests/fixtures/timing/time_loso.json).

Each variant is the shipped fit's knobs (tools/fit_efficiency.py) with some changed; each calibration source is
refitted without and scored (bench/bench_time_model.py --loso), every source counted once. One such run takes minutes
on 200 sources, so the tests read this recording, check it is the recording of today's corpus and code (a digest of the
corpus's calibration rows and of every module the runs import), and re-run the shipped fit's leave-one-source-out live.

    python tools/record_time_loso.py          # every variant, two at a time; rewrites the fixture
"""

from __future__ import annotations

import hashlib
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_time_model  # noqa: E402
import fit_efficiency  # noqa: E402
from trainsteps.timing import efficiency  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "timing" / "time_loso.json"


def variants() -> dict[str, dict]:
    """Each variant's knobs, as changes to the shipped fit's: the choices docs/time.md states and their tests assert."""
    shipped_levels = fit_efficiency.LEVEL_FACTS
    hardware = frozenset(efficiency.HARDWARE_LEVELS)
    unmodelled = fit_efficiency.UNMODELLED
    return {
        "shipped": {},
        "stack levels shrunk by six sources": {"PSEUDO_SOURCES": 6.0},
        "without the accelerator's level": {"LEVEL_FACTS": shipped_levels - hardware},
        "without a whole run's level": {"LEVEL_FACTS": shipped_levels - {"whole_run"}},
        "fp8 in each source's level": {"FP8_AS_FACT": False, "UNMODELLED": unmodelled | {"fp8_log_params"}},
        "without fp8's gain by model size": {"UNMODELLED": unmodelled | {"fp8_log_params"}},
        "without the micro-batch fill": {"FILL_RIDGE": 1e6},
        "intervals unkeyed": {"RESIDUAL_BY": ()},
        "with a GeForce card's level": {"LEVEL_FACTS": shipped_levels | {"geforce"}, "UNMODELLED": unmodelled - {"geforce"}},
    }


def inputs_digest(files: list[str]) -> str:
    """The corpus's calibration rows and models and the named source files, as one digest: a recording is today's only
    while it matches (a held-out split added to the corpus with its models, or its `about` reworded, leaves it
    today's)."""
    corpus = json.loads(fit_efficiency.CORPUS.read_text())
    calibration = [row for row in corpus["rows"] if row["split"] == "calibration"]
    models = {name: corpus["models"].get(name) for name in sorted({row["model"] for row in calibration})}
    digest = hashlib.blake2b(json.dumps([calibration, models], sort_keys=True).encode(), digest_size=16)
    for relative in files:
        digest.update(relative.encode() + b"\0" + (ROOT / relative).read_bytes())
    return digest.hexdigest()


def imported_files() -> list[str]:
    """The repository's source files the leave-one-source-out runs import (trainsteps, the fit, the bench); not this
    recorder, whose variants the tests compare knob by knob."""
    files = set()
    for module in list(sys.modules.values()):
        path = Path(getattr(module, "__file__", None) or "/").resolve()
        if path.suffix == ".py" and path.is_relative_to(ROOT) and ".venv" not in path.parts and path != Path(__file__).resolve():
            files.add(path.relative_to(ROOT).as_posix())
    return sorted(files)


def run(knobs: dict) -> tuple[dict[str, dict], list[str]]:
    """Leave-one-source-out with the knobs set, by category (bench_time_model.summary's rows), and the files it read."""
    for name, value in knobs.items():
        setattr(fit_efficiency, name, value)
    table = bench_time_model.summary(bench_time_model.loso(fit_efficiency.load("calibration")))
    by_category = {row["category"]: {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()}
                   for row in table}
    return by_category, imported_files()


def knobs_as_recorded() -> dict[str, dict]:
    """variants() as the fixture records them (sets and tuples as sorted lists): what a recording is compared with."""
    def as_json(value):
        return sorted(value) if isinstance(value, (set, frozenset, tuple)) else value

    return {name: {knob: as_json(value) for knob, value in knobs.items()} for name, knobs in variants().items()}


def main() -> None:
    table = variants()
    # one process per variant, so no variant's knobs outlive it
    with ProcessPoolExecutor(max_workers=2, max_tasks_per_child=1) as pool:
        results = dict(zip(table, pool.map(run, table.values()), strict=True))
    files = sorted({file for _, read in results.values() for file in read})
    record = {
        "about": "Leave-one-source-out over the time corpus's calibration sources, every source once, for the shipped "
                 "fit and each variant its tests assert; written by tools/record_time_loso.py. `inputs` is the digest "
                 "of the corpus and of `files`: the tests refuse a recording whose digest is not today's.",
        "inputs": inputs_digest(files),
        "files": files,
        "variants": {name: {"knobs": knobs, "by_category": results[name][0]} for name, knobs in knobs_as_recorded().items()},
    }
    FIXTURE.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {FIXTURE.relative_to(ROOT)}: {len(table)} variants")


if __name__ == "__main__":
    main()
