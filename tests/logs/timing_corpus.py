"""Predict a run's total training time from the first 10% and the first 50% of its progress lines, and compare with
the real total the corpus states (`train_runtime_seconds`), next to the framework's own ETA at the same line
(elapsed + its remaining). `python -m tests.logs.timing_corpus` prints the table for docs/benchmarks.md."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log

from .corpus_score import items

FRACTIONS = (0.1, 0.5)


@dataclass
class Prediction:
    id: str
    fraction: float
    at_step: int
    truth: float
    ours: float | None
    framework: float | None

    def error(self, value: float | None) -> float | None:
        return None if value is None else abs(value - self.truth) / self.truth


def _cut(text: str, line_no: int) -> str:
    return "\n".join(text.splitlines()[:line_no])


def predictions() -> list[Prediction]:
    out = []
    for meta, path in items():
        truth = meta["facts"].get("train_runtime_seconds")
        if not truth or "timing" not in meta["kinds"] or "not_a_log" in meta["kinds"]:
            continue
        main = path[0] if isinstance(path, list) else path  # the log itself: its first lines are what a prediction sees
        text = main.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        runs = [inf for inf in explain_log(read_log(text=text)) if inf.run.rate_reader is not None]
        if not runs:
            continue
        reader = runs[-1].run.rate_reader
        samples = [s for s in reader.samples if s.elapsed is not None]
        if not samples:
            continue
        final = max(s.step for s in samples)
        for fraction in FRACTIONS:
            first = next((s for s in samples if s.step >= fraction * final and s.step > 0), None)
            if first is None or first.step >= final:
                continue
            cut = explain_log(read_log(text=_cut(text, first.line_no)))
            timed = [inf for inf in cut if inf.timing is not None and inf.timing.total is not None]
            ours = timed[-1].timing.total.expected if timed else None
            framework = first.elapsed + first.remaining if first.remaining is not None else None
            out.append(Prediction(meta["id"], fraction, first.step, truth, ours, framework))
    return out


def mdape(preds: list[Prediction], fraction: float, who: str) -> tuple[float | None, int]:
    errors = [p.error(getattr(p, who)) for p in preds if p.fraction == fraction]
    errors = [e for e in errors if e is not None]
    return (statistics.median(errors) if errors else None), len(errors)


def main() -> None:
    preds = predictions()
    print("| log | at | step | real total | trainsteps | framework ETA |")
    print("|---|---|---|---|---|---|")
    for p in preds:
        ours = "-" if p.ours is None else f"{p.ours:,.0f} s ({p.error(p.ours):.1%})"
        fw = "-" if p.framework is None else f"{p.framework:,.0f} s ({p.error(p.framework):.1%})"
        print(f"| {p.id} | {p.fraction:.0%} | {p.at_step:,} | {p.truth:,.0f} s | {ours} | {fw} |")
    for fraction in FRACTIONS:
        ours, n = mdape(preds, fraction, "ours")
        theirs, m = mdape(preds, fraction, "framework")
        print(f"MdAPE at {fraction:.0%}: trainsteps {ours if ours is None else f'{ours:.1%}'} ({n} runs), "
              f"framework {theirs if theirs is None else f'{theirs:.1%}'} ({m} runs)")


if __name__ == "__main__":
    main()
