"""Fit the RL step model's efficiencies (src/trainsteps/timing/rl_fit.py) on the calibration sources of
tests/fixtures/timing/rl_step_corpus.json, and score it on the held-out sources it never saw.

Two factors are fitted (a grid search of the median |log(modelled / measured)| over calibration rows, every source
weighing the same): the share of peak memory bandwidth a rollout engine's decode reaches, and the efficiency of the
training engine's forwards and updates relative to the training MFU of timing.flops. The interval is then widened from x/÷ 1.5
until it holds 80% of the calibration rows.

    python tools/fit_rl_time.py          # prints both halves; --write rewrites src/trainsteps/timing/rl_fit.py
    python tools/fit_rl_time.py --score fresh   # also scores the fitted model on another split (once, after the final fit)
"""

from __future__ import annotations

import json
import math
import sys
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
"""The interval is at least x/÷ this: a fit on two sources that lands on its own rows says little about a third."""


def rows(split: str) -> tuple[list[dict], dict]:
    corpus = json.loads(CORPUS.read_text())
    sources = set(corpus["split"][split])
    return [r for r in corpus["rows"] if r["source"] in sources], corpus["models"]


def apply(decode: float, update: float, spread: float, typical: float) -> None:
    """Set the model's factors (the module's constants) for a trial."""
    rl.DECODE_BANDWIDTH_SHARE = Interval(decode / spread, decode, min(decode * spread, 1.0))
    rl.UPDATE_EFFICIENCY = Interval(update / spread, update, update * spread)
    rl_fit.TYPICAL_RESPONSE = typical


def loss(calibration, models) -> float:
    by_source: dict[str, list[float]] = {}
    for s in score(calibration, models):
        by_source.setdefault(s.source, []).append(abs(math.log(s.modelled.expected / s.measured)))
    per_source = [sorted(v)[len(v) // 2] for v in by_source.values()]
    return sum(per_source) / len(per_source)


def fit() -> tuple[float, float, float, float]:
    """The factors with the smallest loss: decode share and training factor first on the rows that state their mean
    response, then the typical response on the rows that state only a cap."""
    calibration, models = rows("calibration")
    stated = [r for r in calibration if r["response_tokens"] is not None]
    capped = [r for r in calibration if r["response_tokens"] is None]
    best = None
    for decode in [x / 100 for x in range(10, 91, 2)]:
        for update in [x / 100 for x in range(20, 201, 5)]:
            apply(decode, update, 1.0, 1000)
            trial = (loss(stated, models), decode, update)
            best = trial if best is None or trial < best else best
    _, decode, update = best
    typical = _typical_response(capped, models, decode, update) if capped else 1000
    spread = MIN_SPREAD
    while True:
        apply(decode, update, spread, typical)
        if summary(score(calibration, models))["interval_holds"] >= HOLD_TARGET or spread > 4:
            return decode, update, round(spread, 2), typical
        spread += 0.05


def _typical_response(capped: list[dict], models: dict, decode: float, update: float) -> int:
    """The mean response (tokens) that fits the rows stating only their cap best, the other factors fixed."""
    losses = []
    for typical in range(200, 8001, 100):
        apply(decode, update, 1.0, typical)
        losses.append((loss(capped, models), typical))
    return min(losses)[1]


def splits_to_print(argv: list[str]) -> list[str]:
    """calibration and held_out, plus the split named by `--score SPLIT` (e.g. `fresh`, the sources gathered after the fit:
    scored only when asked, so that looking at them is a deliberate act, never a side effect of refitting)."""
    splits = ["calibration", "held_out"]
    if "--score" not in argv:
        return splits
    index = argv.index("--score") + 1
    known = json.loads(CORPUS.read_text())["split"]
    if index >= len(argv) or argv[index] not in known:
        print(f"--score needs a split of {CORPUS.name}; hint: one of {', '.join(known)}", file=sys.stderr)
        sys.exit(2)
    return splits + [argv[index]] if argv[index] not in splits else splits


def main() -> None:
    splits = splits_to_print(sys.argv)
    decode, update, spread, typical = fit()
    apply(decode, update, spread, typical)
    for split in splits:
        part, models = rows(split)
        scored = score(part, models)
        print(f"{split}: {summary(scored)}")
        for s in scored:
            print(f"  {s.row_id:<42} measured {s.measured:>7.1f}  modelled {s.modelled.expected:>7.1f} "
                  f"({s.modelled.low:.0f}-{s.modelled.high:.0f})  error {s.error:.0%}{'' if s.held else '  outside'}")
    held = summary(score(*rows("held_out")))
    print(f"decode share {decode}, update efficiency {update}, spread x{spread}, typical response {typical}")
    if "--write" in sys.argv:
        calibration = json.loads(CORPUS.read_text())["split"]["calibration"]
        OUT.write_text(f'"""Generated by tools/fit_rl_time.py from the calibration sources of tests/fixtures/timing/rl_step_corpus.json '
                       f'({", ".join(calibration)}). Do not edit."""\n\n'
                       f"DECODE_SHARE = {decode}\nUPDATE_EFFICIENCY = {update}\nSPREAD = {spread}\nTYPICAL_RESPONSE = {typical}\n"
                       f"HELD_OUT = {held!r}\n")


if __name__ == "__main__":
    main()
