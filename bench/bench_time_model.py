"""The time model against published throughputs it was not fitted on, by category, next to the napkin rule.

For every row of tests/fixtures/timing/time_corpus.json the model predicts tokens/s per GPU from the setup facts the
source states (timing.efficiency, fitted on the calibration half by tools/fit_efficiency.py); the napkin rule is
6·N·D / (peak x GPUs x 0.4) with N the active parameters and the BF16 peak; "before" is the previous fixed MFU ranges
(timing.flops.MFU_DEFAULTS). Errors are of the expected value (predicted / measured - 1); "in" is how many measured
figures the interval holds; "width" the median high / low. The headline errors are in throughput (tokens/s); every
table also gives them in time, |T_model / T_real - 1| = |measured / modelled tokens/s - 1|, for the model and the
napkin: a run modelled 2x too fast is 100 % off in throughput and 50 % in time. A preference row (DPO) counts its chosen and rejected
tokens, costed with the example's passes (timing.flops.PREFERENCE_TRAINERS).

    python bench/bench_time_model.py --loso          # leave one calibration source out: refit without it, score it
                                                     # (the figures in docs/time.md)
    python bench/bench_time_model.py --calibration   # the rows the fit saw, scored with the shipped fit
    python bench/bench_time_model.py --split NAME    # the rows of one split of the corpus, scored with the shipped fit
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from trainsteps.timing import efficiency  # noqa: E402
from trainsteps.timing.calibration import napkin_tokens_per_second  # noqa: E402
from trainsteps.timing.efficiency import SetupFacts, estimate_mfu  # noqa: E402
from trainsteps.timing.flops import MFU_DEFAULTS  # noqa: E402

CATEGORIES = ("pretraining", "full", "lora", "qlora", "preference")
def split_asked(argv: list[str]) -> str:
    """The split to score: `--split NAME`, `--calibration` for the rows the fit saw. Every row of the corpus is a
    calibration row today (the former held-out sets joined it: docs/time.md); a new held-out set is scored by name."""
    if "--split" in argv:
        index = argv.index("--split")
        if index + 1 >= len(argv):
            raise SystemExit("--split needs a split name, e.g. --split calibration")
        return argv[index + 1]
    return "calibration"


def as_user_states(m) -> SetupFacts:
    """What the model is told: the facts the source states (an unstated checkpointing stays unknown)."""
    return m.facts


def score(rows) -> dict[str, dict]:
    table = defaultdict(lambda: defaultdict(list))
    for m in rows:
        est = estimate_mfu(as_user_states(m)).mfu  # against the BF16 peak: the fit's fp8 coefficient is inside

        def tps(mfu: float, m=m) -> float:
            return mfu * m.peak / m.flops_per_token

        measured = m.tokens_per_second_per_gpu
        old = MFU_DEFAULTS["pretrain" if m.category == "pretraining" else m.facts.method].mfu
        for cat in (m.category, "all"):
            t = table[cat]
            t["model"].append(tps(est.expected) / measured - 1)
            t["inside"].append(tps(est.low) <= measured <= tps(est.high))
            t["width"].append(est.high / est.low)
            t["napkin"].append(napkin_tokens_per_second(m) / measured - 1)
            # the same errors in time: T_model / T_real - 1 = measured / modelled tokens/s - 1 (a run modelled 2x too
            # fast is 50 % off in time, 100 % in throughput)
            t["model_time"].append(measured / tps(est.expected) - 1)
            t["napkin_time"].append(measured / napkin_tokens_per_second(m) - 1)
            t["before"].append(tps(old.expected) / measured - 1)
            t["before_inside"].append(tps(old.low) <= measured <= tps(old.high))
            t["sources"].append(m.group)
    return table


def summary(table) -> list[dict]:
    out = []
    for cat in (*CATEGORIES, "all"):
        t = table.get(cat)
        if not t:
            continue
        med = lambda xs: statistics.median(abs(x) for x in xs)  # noqa: E731
        out.append({"category": cat, "n": len(t["model"]), "sources": len(set(t["sources"])),
                    "napkin_error": med(t["napkin"]), "before_error": med(t["before"]),
                    "before_inside": sum(t["before_inside"]) / len(t["model"]), "model_error": med(t["model"]),
                    "model_inside": sum(t["inside"]) / len(t["model"]), "model_width": statistics.median(t["width"]),
                    "napkin_time_error": med(t["napkin_time"]), "model_time_error": med(t["model_time"]),
                    **_by_source(t)})
    return out


def _by_source(t) -> dict:
    """The same figures with every source counted once (the median of its own medians, the mean of its hold rates):
    a source with 216 rows does not set the score of fourteen."""
    rows = defaultdict(list)
    for i, source in enumerate(t["sources"]):
        rows[source].append(i)
    of = lambda key: [statistics.median(abs(t[key][i]) for i in ix) for ix in rows.values()]  # noqa: E731
    return {"model_error_by_source": statistics.median(of("model")), "napkin_error_by_source": statistics.median(of("napkin")),
            "model_time_error_by_source": statistics.median(of("model_time")),
            "napkin_time_error_by_source": statistics.median(of("napkin_time")),
            "model_inside_by_source": statistics.mean(sum(t["inside"][i] for i in ix) / len(ix) for ix in rows.values()),
            "model_width_by_source": statistics.median(statistics.median(t["width"][i] for i in ix) for ix in rows.values())}


def loso(rows_all):
    import fit_efficiency

    scored = []
    for group in sorted({m.group for m in rows_all}):
        train = [m for m in rows_all if m.group != group]
        if {m.facts.stack for m in rows_all if m.group == group} - {m.facts.stack for m in train}:
            continue  # the only source of its stack: nothing left to fit that stack on
        coefficients = fit_efficiency.fit(train)
        efficiency.COEFFICIENTS.clear()
        efficiency.COEFFICIENTS.update(coefficients)
        res = fit_efficiency.residuals(train, coefficients)
        efficiency.RESIDUALS.clear()
        efficiency.RESIDUALS.update(res)
        efficiency.RESIDUAL_BY = fit_efficiency.RESIDUAL_BY
        scored.append(score([m for m in rows_all if m.group == group]))
    merged = defaultdict(lambda: defaultdict(list))
    for table in scored:
        for cat, t in table.items():
            for k, v in t.items():
                merged[cat][k].extend(v)
    return merged


def markdown(rows) -> str:
    lines = ["| category | measurements (sources) | napkin 6ND/(peak x GPUs x 0.4): median error | before (fixed MFU ranges): "
             "median error, interval holds | model: median error | interval holds | median width (high/low) | every source "
             "once: napkin, model error, interval holds | in time, \\|T_model / T_real - 1\\|: napkin, model (every source "
             "once: napkin, model) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['category']} | {r['n']} ({r['sources']}) | {r['napkin_error']:.0%} | {r['before_error']:.0%}, "
                     f"{r['before_inside']:.0%} | {r['model_error']:.0%} | {r['model_inside']:.0%} | {r['model_width']:.2f}x | "
                     f"{r['napkin_error_by_source']:.0%}, {r['model_error_by_source']:.0%}, {r['model_inside_by_source']:.0%} | "
                     f"{r['napkin_time_error']:.0%}, {r['model_time_error']:.0%} ({r['napkin_time_error_by_source']:.0%}, "
                     f"{r['model_time_error_by_source']:.0%}) |")
    return "\n".join(lines)


def main() -> None:
    import fit_efficiency

    if "--loso" in sys.argv:
        table = loso(fit_efficiency.load("calibration"))
        title = "leave one calibration source out"
    else:
        split = split_asked(sys.argv)
        loaded = fit_efficiency.load(split)
        if not loaded:
            raise SystemExit(f"no fitted rows in split {split!r} of {fit_efficiency.CORPUS.name}")
        table = score(loaded)
        title = f"{split} rows"
    rows = summary(table)
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return
    print(f"Time model against published throughputs: {title}\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
