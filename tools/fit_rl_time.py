"""Fit the RL step model (src/trainsteps/timing/rl_fit.py) on the calibration sources of
tests/fixtures/timing/rl_step_corpus.json, choose its structure by leave-one-source-out over calibration only, and
score the held-out sources it never saw once, when writing.

What is fitted, in this order:
- the weight copy's bandwidth (variants with a fitted copy): the median of all bytes / published seconds over the
  corpus's `sync_rows`, with an interval that holds all of them;
- the mean response used when only the cap is known: a typical length fitted through the step times of the rows that
  state only their cap (the former default), the median mean of the rows that state one, or the median share of the
  cap those rows reach;
- the decode bandwidth share, the training engine's efficiency, the fixed step overhead and the decode half batch, by
  coordinate descent on the mean over sources of each source's median |log(modelled / measured)|;
- the interval, widened from x/÷ 1.5 until it holds 80% of the rows fitted on.

Structure variants: the fitted factors alone; a fixed step overhead; decode bandwidth that grows with the rollout batch;
asynchronous engines that stream across steps; the copy at its fitted bandwidth (for every run, per training GPU, or for
separate rollout engines only, colocated engines resharding in device memory); each alone and in every combination.
Then the response defaults are compared on the best structure. Leave-one-source-out: for every calibration source
with step times, fit on the others and score its rows; the summary is over all rows so scored.

    python tools/fit_rl_time.py            # in-sample fit of the chosen variant, calibration rows only
    python tools/fit_rl_time.py --loso     # every variant's leave-one-source-out score (calibration only)
    python tools/fit_rl_time.py --write    # rewrites src/trainsteps/timing/rl_fit.py, scoring the held-out rows once
    python tools/fit_rl_time.py --score fresh   # also scores the fitted model on another split (once, after the final fit)
    python tools/fit_rl_time.py --score fresh2  # the second fresh split, gathered 2026-11-28 before the next fit
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from trainsteps.timing import rl, rl_fit  # noqa: E402
from trainsteps.timing.estimate import Interval  # noqa: E402
from trainsteps.timing.rl_corpus import score, summary  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "timing" / "rl_step_corpus.json"
OUT = ROOT / "src" / "trainsteps" / "timing" / "rl_fit.py"
HOLD_TARGET = 0.8
MIN_SPREAD = 1.5
"""The interval is at least x/÷ this: a fit on a few sources that lands on its own rows says little about others."""
DECODE_GRID = [x / 100 for x in range(4, 101, 2)]
UPDATE_GRID = [x / 100 for x in range(20, 201, 5)]
"""Up to 2x the training MFU of timing.flops (0.7 expected): beyond it a factor stands for a missing part, not an engine."""
OVERHEAD_GRID = [0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0]
HALF_BATCH_GRID = [0, 1, 2, 4, 8, 16, 32, 64, 128]
DEFAULT_TYPICAL = 1000


@dataclass(frozen=True)
class Variant:
    name: str
    overhead: bool = False
    batch: bool = False
    streaming: bool = False
    copy: bool = False
    copy_per_gpu: bool = False
    copy_separate: bool = False
    response: str = "typical via steps"
    """typical via steps | median mean | share of cap"""


BASE = Variant("fitted factors only")
FEATURES = [
    ("step overhead", {"overhead": True}),
    ("decode batch", {"batch": True}),
    ("async streaming", {"streaming": True}),
    ("copy bandwidth", {"copy": True}),
    ("copy per training GPU", {"copy": True, "copy_per_gpu": True}),
    ("copy bandwidth, separate engines only", {"copy": True, "copy_separate": True}),
]
"""Each feature is first scored alone on the fitted factors; then every combination of the step overhead, the decode batch,
async streaming and the copy (none, whole, per training GPU, whole for separate engines only) is scored, because they act
together (streaming shortens generation, the copy adds the time it hides; the overhead and the batch both lengthen small steps)."""
RESPONSES = ["typical via steps", "median mean", "share of cap"]


@dataclass
class Params:
    decode: float = 0.5
    update: float = 1.0
    overhead: float = 0.0
    half_batch: int = 0
    spread: float = 1.0
    typical: int = DEFAULT_TYPICAL
    share_of_cap: float | None = None
    streaming: bool = False
    copy: float | None = None
    copy_spread: float = 1.5
    copy_per_gpu: bool = False
    copy_separate: bool = False


def corpus() -> dict:
    return json.loads(CORPUS.read_text())


def rows(data: dict, split: str) -> list[dict]:
    sources = set(data["split"][split])
    return [r for r in data["rows"] if r["source"] in sources]


def apply(p: Params) -> None:
    """Set the model's fitted constants (the modules' attributes) for a trial."""
    rl.DECODE_BANDWIDTH_SHARE = Interval(p.decode / p.spread, p.decode, min(p.decode * p.spread, 1.0))
    rl.UPDATE_EFFICIENCY = Interval(p.update / p.spread, p.update, p.update * p.spread)
    rl.STEP_OVERHEAD = Interval(p.overhead / p.spread, p.overhead, p.overhead * p.spread)
    rl.DECODE_HALF_BATCH = p.half_batch
    rl.ASYNC_STREAMING = p.streaming
    rl.SYNC_PER_TRAINING_GPU = p.copy_per_gpu
    rl.SYNC_SEPARATE_ONLY = p.copy_separate
    rl.SYNC_COPY_GB_PER_S = None if p.copy is None else Interval(p.copy / p.copy_spread, p.copy, p.copy * p.copy_spread)
    rl_fit.TYPICAL_RESPONSE = p.typical
    rl_fit.RESPONSE_SHARE_OF_CAP = p.share_of_cap


def loss(part: list[dict], models: dict) -> float:
    """Mean over sources of each source's median |log(modelled / measured)|: every source weighs the same."""
    by_source: dict[str, list[float]] = {}
    for s in score(part, models):
        by_source.setdefault(s.source, []).append(abs(math.log(s.modelled.expected / s.measured)))
    per_source = [sorted(v)[len(v) // 2] for v in by_source.values()]
    return sum(per_source) / len(per_source)


def fit_copy(sync_rows: list[dict], models: dict, per_gpu: bool) -> tuple[float, float]:
    """Median copy bandwidth (GB/s of all the policy's bf16 bytes, or of each training GPU's share) and the factor that
    holds HOLD_TARGET of the published copies."""
    rates = sorted(2 * models[r["model"]]["params"] / (r["gpus"] if per_gpu else 1) / 1e9 / r["sync_seconds"] for r in sync_rows)
    median = rates[len(rates) // 2] if len(rates) % 2 else math.sqrt(rates[len(rates) // 2 - 1] * rates[len(rates) // 2])
    factors = sorted(max(rate / median, median / rate) for rate in rates)
    spread = max(factors[math.ceil(HOLD_TARGET * len(factors)) - 1], MIN_SPREAD)
    return round(median, 3), round(spread, 2)


def fit_response(variant: Variant, stated: list[dict]) -> tuple[int, float | None]:
    """The typical mean response and share of the cap from the rows that state both (the step-time route is fitted
    later, with the other factors)."""
    means = sorted(r["prompt_tokens"] + r["response_tokens"] for r in stated if r["response_cap"])
    shares = sorted((r["prompt_tokens"] + r["response_tokens"]) / (r["prompt_tokens"] + r["response_cap"]) for r in stated if r["response_cap"])
    if variant.response == "median mean" and means:
        return round(means[len(means) // 2], -1), None
    if variant.response == "share of cap" and shares:
        return DEFAULT_TYPICAL, round(shares[len(shares) // 2], 2)
    return DEFAULT_TYPICAL, None


def fit(variant: Variant, train: list[dict], sync_rows: list[dict], models: dict) -> Params:
    """The variant's constants fitted on `train` (step rows) and `sync_rows`."""
    stated = [r for r in train if r["response_tokens"] is not None]
    capped = [r for r in train if r["response_tokens"] is None]
    p = Params(streaming=variant.streaming, copy_per_gpu=variant.copy_per_gpu, copy_separate=variant.copy_separate)
    if variant.copy and sync_rows:
        p.copy, p.copy_spread = fit_copy(sync_rows, models, variant.copy_per_gpu)
    p.typical, p.share_of_cap = fit_response(variant, stated)
    grids = {"decode": DECODE_GRID, "update": UPDATE_GRID}
    if variant.overhead:
        grids["overhead"] = OVERHEAD_GRID
    if variant.batch:
        grids["half_batch"] = HALF_BATCH_GRID
    p = _descend(p, grids, stated or train, models)
    if variant.response == "typical via steps" and capped:
        p = _descend(p, {"typical": list(range(200, 8001, 100))}, capped, models)
    p.spread = MIN_SPREAD
    while True:
        apply(p)
        if summary(score(train, models))["interval_holds"] >= HOLD_TARGET or p.spread > 4:
            p.spread = round(p.spread, 2)
            return p
        p.spread += 0.05


def _descend(p: Params, grids: dict, part: list[dict], models: dict) -> Params:
    """Coordinate descent: each factor in turn to its best grid value, the others fixed, until nothing moves."""
    best = _trial(p, part, models)
    for _ in range(6):
        moved = False
        for name, grid in grids.items():
            for value in grid:
                trial = replace(p, **{name: value})
                trial_loss = _trial(trial, part, models)
                if trial_loss < best - 1e-9:
                    best, p, moved = trial_loss, trial, True
        if not moved:
            return p
    return p


def _trial(p: Params, part: list[dict], models: dict) -> float:
    apply(replace(p, spread=1.0))
    return loss(part, models)


def loso(variant: Variant, data: dict) -> tuple[dict, dict[str, float]]:
    """Leave one calibration source out: fit on the rest, score its rows; summary over all left-out rows, and each
    source's median error."""
    calibration = rows(data, "calibration")
    sync_rows = data.get("sync_rows", [])
    scored, per_source = [], {}
    for source in dict.fromkeys(r["source"] for r in calibration):
        left_out = [r for r in calibration if r["source"] == source]
        apply(fit(variant, [r for r in calibration if r["source"] != source], sync_rows, data["models"]))
        these = score(left_out, data["models"])
        scored += these
        per_source[source] = summary(these)["median_error"]
    return summary(scored), per_source


def choose(data: dict, verbose: bool) -> Variant:
    """Forward selection of the structure by leave-one-source-out median error (interval holds breaking ties), then
    the response default likewise."""
    def run(v: Variant) -> tuple[float, float]:
        result, per_source = loso(v, data)
        if verbose:
            print(f"LOSO {v.name:<58} {v.response:<18} median error {result['median_error']:.0%}  "
                  f"interval holds {result['interval_holds']:.0%}  ({result['runs']} rows)")
            print("     " + ", ".join(f"{_short(s)} {e:.0%}" for s, e in per_source.items()))
        return result["median_error"], -result["interval_holds"]
    best, best_score = BASE, run(BASE)
    trials = [replace(BASE, name="factors + " + name, **features) for name, features in FEATURES]
    for overhead, batch, streaming in itertools.product((False, True), repeat=3):
        for copy, per_gpu, separate in ((False, False, False), (True, False, False), (True, True, False), (True, False, True)):
            if (overhead + batch + streaming + copy) < 2:
                continue  # scored above
            name = " + ".join(["factors"] + ["step overhead"] * overhead + ["decode batch"] * batch + ["async streaming"] * streaming +
                              ([_copy_name(per_gpu, separate)] if copy else []))
            trials.append(replace(BASE, name=name, overhead=overhead, batch=batch, streaming=streaming, copy=copy, copy_per_gpu=per_gpu,
                                  copy_separate=separate))
    for trial in trials:
        trial_score = run(trial)
        if trial_score < best_score:
            best, best_score = trial, trial_score
    scored = [(run(replace(best, response=r)) if r != best.response else best_score, replace(best, response=r)) for r in RESPONSES]
    return min(scored, key=lambda t: t[0])[1]


def _copy_name(per_gpu: bool, separate: bool) -> str:
    return "copy per training GPU" if per_gpu else "copy bandwidth, separate engines only" if separate else "copy bandwidth"


def _short(source: str) -> str:
    """`NeMo RL v0.4`, `verl fully_async`: a source's name short enough for a table."""
    if "(v" in source:
        return "NeMo RL " + source.split("(")[1].rstrip(")")
    return source.replace("verl docs: ", "verl ").split(" (")[0]


def split_to_score(argv: list[str]) -> str | None:
    """The split named by `--score SPLIT` (e.g. `fresh`, the sources gathered after the fit: scored only when asked, so
    that looking at them is a deliberate act, never a side effect of refitting)."""
    if "--score" not in argv:
        return None
    index = argv.index("--score") + 1
    known = json.loads(CORPUS.read_text())["split"]
    if index >= len(argv) or argv[index] not in known or argv[index] == "calibration":
        print(f"--score needs a split of {CORPUS.name} other than calibration; hint: one of "
              f"{', '.join(k for k in known if k != 'calibration')}", file=sys.stderr)
        sys.exit(2)
    return argv[index]


def main() -> None:
    extra = split_to_score(sys.argv)
    data = corpus()
    variant = choose(data, verbose="--loso" in sys.argv or "--write" in sys.argv)
    calibration = rows(data, "calibration")
    p = fit(variant, calibration, data.get("sync_rows", []), data["models"])
    apply(p)
    scored = score(calibration, data["models"])
    print(f"chosen: {variant.name}, response default {variant.response}")
    print(f"calibration (in sample): {summary(scored)}")
    for s in scored:
        print(f"  {s.row_id:<42} measured {s.measured:>7.1f}  modelled {s.modelled.expected:>7.1f} "
              f"({s.modelled.low:.0f}-{s.modelled.high:.0f})  error {s.error:.0%}{'' if s.held else '  outside'}")
    print(f"fitted: {p}")
    if extra:
        print(f"{extra}: {summary(score(rows(data, extra), data['models']))}")
    if "--write" not in sys.argv:
        return
    held = summary(score(rows(data, "held_out"), data["models"]))
    print(f"held out (scored once, on writing): {held}")
    sources = ", ".join(data["split"]["calibration"])
    OUT.write_text(f'"""Generated by tools/fit_rl_time.py from the calibration sources of tests/fixtures/timing/rl_step_corpus.json '
                   f'({sources}); structure chosen by leave-one-source-out: {variant.name}, response default {variant.response}. '
                   f'Do not edit."""\n\n'
                   f"DECODE_SHARE = {p.decode}\nUPDATE_EFFICIENCY = {p.update}\nSPREAD = {p.spread}\nTYPICAL_RESPONSE = {p.typical}\n"
                   f"STEP_OVERHEAD = {p.overhead}\nDECODE_HALF_BATCH = {p.half_batch}\nSYNC_GB_PER_S = {p.copy}\n"
                   f"SYNC_SPREAD = {p.copy_spread}\nSYNC_PER_TRAINING_GPU = {p.copy_per_gpu}\nSYNC_SEPARATE_ONLY = {p.copy_separate}\nRESPONSE_SHARE_OF_CAP = {p.share_of_cap}\nASYNC_STREAMING = {p.streaming}\n"
                   f"HELD_OUT = {held!r}\n")


if __name__ == "__main__":
    main()
