"""Leave-one-source-out over the calibration rows for each structural variant of the time model's fit: each
calibration source is refitted without and scored (bench/bench_time_model.py --loso), one line per variant. The
held-out sets are never read.

    python tools/loso_variants.py            # every variant
    python tools/loso_variants.py fp8 peak   # the named ones (and the baseline)

The rule the variants are chosen by is in docs/time.md ("The fit on 46 calibration sources"). A variant named
"a+b" runs the knobs of both.
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

OFF = frozenset({"log_peak", "ada", "quant_int8", "quant_gptq", "offload", "whole_run", "log_small", "pretraining",
                 "quant_fp4", "qlora_log_params"})
BASE = {"EVALUATIONS": True, "FP8_AS_FACT": True, "UNMODELLED": OFF, "LEVEL_FACTS": frozenset(), "PSEUDO_SOURCES": 0.0,
        "LOW_Q": 0.075, "HIGH_Q": 0.925, "RESIDUAL_SOURCES": 3, "FP8_RIDGE": 0.03, "RESIDUAL_BY": (),
        "SOURCE_CAP": 30, "PRETRAINING_LEVELS": False}
"""The structure chosen on 69 sources (2026-11-28): fp8's gain fitted, unshrunk stack levels, a stack/method's own
residuals from three sources, the 7.5th-92.5th percentiles, a wall time's evaluations costed. Each variant changes it
by the knobs named."""
VARIANTS = {
    "baseline": {},
    # the interval's residuals keyed by more of what the user states (timing.efficiency.residual_key_suffix)
    "by nodes": {"RESIDUAL_BY": ("nodes",)},
    "by generation": {"RESIDUAL_BY": ("generation",)},
    "by pretraining": {"RESIDUAL_BY": ("pretraining",)},
    "by packed": {"RESIDUAL_BY": ("packed",)},
    # pretraining: a level of its own, read between sources (few sources both pretrain and fine-tune)
    "pretraining level": {"UNMODELLED": OFF - {"pretraining"}, "LEVEL_FACTS": frozenset({"pretraining"})},
    "pretraining levels by stack": {"PRETRAINING_LEVELS": True},
    # QLoRA: the base's quantization kind (fp4 apart from NF4), the dequantization's cost by model size
    "fp4": {"UNMODELLED": OFF - {"quant_fp4"}},
    "qlora size": {"UNMODELLED": OFF - {"qlora_log_params"}},
    # the GPU: Ada (RTX 4090, L4) as a generation of its own, the GPU's peak (log, against H100's)
    "ada": {"UNMODELLED": OFF - {"ada"}},
    "peak": {"UNMODELLED": OFF - {"log_peak"}},
    # every source weighs the same in the interval's quantiles (the hold is scored with every source once)
    "cap1": {"SOURCE_CAP": 1},
    "cap5": {"SOURCE_CAP": 5},
    "cap10": {"SOURCE_CAP": 10},
    "q8": {"LOW_Q": 0.08, "HIGH_Q": 0.92},
    "q8.5": {"LOW_Q": 0.085, "HIGH_Q": 0.915},
    "q9": {"LOW_Q": 0.09, "HIGH_Q": 0.91},
    "q10": {"LOW_Q": 0.10, "HIGH_Q": 0.90},
    "q6": {"LOW_Q": 0.06, "HIGH_Q": 0.94},
    # a. the base's quantization kind (QLoRA): inside sources (MIN_SOURCES contrasts) or also between them
    "quant": {"UNMODELLED": OFF - {"quant_int8", "quant_gptq"}},
    "quant, int8 between sources": {"UNMODELLED": OFF - {"quant_gptq"}, "LEVEL_FACTS": frozenset({"quant_int8"})},
    # b. the interval's size
    "q7.5": {"LOW_Q": 0.075, "HIGH_Q": 0.925},
    "q7": {"LOW_Q": 0.07, "HIGH_Q": 0.93},
    # e. a wall time's evaluations costed as a plan costs them
    "evaluations": {"EVALUATIONS": True},
    "q5": {"LOW_Q": 0.05, "HIGH_Q": 0.95},
    "res2": {"RESIDUAL_SOURCES": 2},
    "res5": {"RESIDUAL_SOURCES": 5},
    # c. stack levels shrunk toward every source's
    "pseudo1": {"PSEUDO_SOURCES": 1.0},
    "pseudo3": {"PSEUDO_SOURCES": 3.0},
    "pseudo6": {"PSEUDO_SOURCES": 6.0},
    # d. what the residuals by category show
    "offload": {"UNMODELLED": OFF - {"offload"}},
    "small": {"UNMODELLED": OFF - {"log_small"}},
    "whole run": {"UNMODELLED": OFF - {"whole_run"}, "LEVEL_FACTS": frozenset({"whole_run"})},
}


def knobs_of(name: str) -> dict:
    """A variant's knobs; "a+b" merges a's and b's (the fact sets are intersected for UNMODELLED, joined for the rest)."""
    merged: dict = {}
    for part in name.split("+"):
        for key, value in VARIANTS[part].items():
            if key == "UNMODELLED" and key in merged:
                value = merged[key] & value
            elif key == "LEVEL_FACTS" and key in merged:
                value = merged[key] | value
            elif key == "RESIDUAL_BY" and key in merged:
                value = (*merged[key], *value)
            merged[key] = value
    return merged


def run(name: str, knobs: dict) -> str:
    for key, value in {**BASE, **knobs}.items():
        setattr(fit_efficiency, key, value)
    rows = {r["category"]: r for r in bench_time_model.summary(bench_time_model.loso(fit_efficiency.load("calibration")))}
    every = rows["all"]
    cats = ", ".join(f"{c} {rows[c]['model_error_by_source']:.0%}/{rows[c]['napkin_error_by_source']:.0%} "
                     f"{rows[c]['model_inside_by_source']:.0%} {rows[c]['model_width_by_source']:.2f}x"
                     for c in bench_time_model.CATEGORIES if c in rows)
    return (f"| {name} | {every['model_error_by_source']:.1%} | {every['model_inside_by_source']:.1%} | "
            f"{every['model_width']:.2f}x, {every['model_width_by_source']:.2f}x | {every['model_error']:.1%} | {cats} |")


def main() -> None:
    names = ["baseline", *[n for n in sys.argv[1:] if n != "baseline"]] if sys.argv[1:] else list(VARIANTS)
    print("| variant | error (each source once) | holds (each source once) | median width (rows, each source once) | error (rows) | "
          "per category, model/napkin error, holds, width (each source once) |\n|---|---|---|---|---|---|")
    for name in names:
        print(run(name, knobs_of(name)), flush=True)


if __name__ == "__main__":
    main()
