"""Leave-one-source-out over the calibration rows for each structural variant of the time model's fit: each
calibration source is refitted without and scored (bench/bench_time_model.py --loso), one line per variant. The
held-out sets are never read.

    python tools/loso_variants.py            # every variant
    python tools/loso_variants.py fp8 peak   # the named ones (and the baseline)

The rule the variants are chosen by is in docs/time.md ("How the fit was chosen").
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_time_model  # noqa: E402
import fit_efficiency  # noqa: E402

BASE = {"FP8_AS_FACT": False, "UNMODELLED": frozenset({"ada", "log_peak"}), "PSEUDO_SOURCES": 6.0,
        "LOW_Q": 0.10, "HIGH_Q": 0.90, "RESIDUAL_SOURCES": 2,
        "FP8_RIDGE": 1.0}
VARIANTS = {
    "baseline": {},
    "fp8": {"FP8_AS_FACT": True},
    "ada": {"UNMODELLED": frozenset({"log_peak"})},
    "peak": {"UNMODELLED": frozenset({"ada"})},
    "peak, no generations": {"UNMODELLED": frozenset({"ada", "ampere", "blackwell"})},
    "pseudo3": {"PSEUDO_SOURCES": 3.0},
    "pseudo10": {"PSEUDO_SOURCES": 10.0},
    "q15": {"LOW_Q": 0.15, "HIGH_Q": 0.85},
    "q12": {"LOW_Q": 0.125, "HIGH_Q": 0.875},
    "res3": {"RESIDUAL_SOURCES": 3},
    "fp8+res3": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3},
    "fp8 ridge 0.3+res3": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.3},
    "fp8 ridge 0.1+res3": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.1},
    "fp8 ridge 0.03+res3": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.03},
    "fp8 ridge 0.1+res3+pseudo10": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.1, "PSEUDO_SOURCES": 10.0},
    "fp8 ridge 0.1+res3+peak": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.1, "UNMODELLED": frozenset({"ada"})},
    "fp8 ridge 0.1+res3+ada": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.1, "UNMODELLED": frozenset({"log_peak"})},
    "fp8 ridge 0.03+res3+ada": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.03, "UNMODELLED": frozenset({"log_peak"})},
    "fp8 ridge 0.03+res3+ada+peak": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.03, "UNMODELLED": frozenset()},
    "fp8 ridge 0.1+res3+ada+peak": {"FP8_AS_FACT": True, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.1, "UNMODELLED": frozenset()},
}


def run(name: str, knobs: dict) -> str:
    for key, value in {**BASE, **knobs}.items():
        setattr(fit_efficiency, key, value)
    rows = {r["category"]: r for r in bench_time_model.summary(bench_time_model.loso(fit_efficiency.load("calibration")))}
    every = rows["all"]
    cats = " ".join(f"{c} {rows[c]['model_error_by_source']:.0%}/{rows[c]['napkin_error_by_source']:.0%}"
                    for c in bench_time_model.CATEGORIES if c in rows)
    return (f"| {name} | {every['model_error_by_source']:.1%} | {every['model_inside_by_source']:.1%} | "
            f"{every['model_width']:.2f}x, {every['model_width_by_source']:.2f}x | {every['model_error']:.1%} | {cats} |")


def main() -> None:
    names = ["baseline", *[n for n in sys.argv[1:] if n != "baseline"]] if sys.argv[1:] else list(VARIANTS)
    print("| variant | error (each source once) | holds (each source once) | median width (rows, each source once) | error (rows) | "
          "per category, model/napkin error (each source once) |\n|---|---|---|---|---|---|")
    for name in names:
        print(run(name, VARIANTS[name]), flush=True)


if __name__ == "__main__":
    main()
