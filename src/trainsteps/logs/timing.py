"""How fast a logged run goes and how long it has left (pure: no I/O).

The rate is measured from the log itself, best source first: the training loop's progress bar (its per-step rates,
warm-up draws left out), LLaMA-Factory / ms-swift `elapsed_time` between two logged steps, or the final
`train_runtime` over the steps that ran. The remaining time runs to where the run REALLY ends (the engine's
last optimizer step for the inferred release, not the bar's total), plus the evaluations still to come at the
measured evaluation time. Every figure is an interval: low / expected / high.

The interval arithmetic sits behind `interval_times` so that the shared time model can replace it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from trainsteps.logs.observed import BarTrack, RunObservation

MIN_SPREAD = 0.05
"""A measured rate is never given tighter than +-5%: step times drift (sequence lengths, other jobs, thermals)."""
WARMUP_SHARE = 0.05
"""Bar draws before this share of the run are left out of the rate when later draws exist (first steps are slow)."""
AGREE = 0.10
"""The framework's own ETA agrees when it is within 10% of ours."""


@dataclass(slots=True)
class Span:
    low: float
    expected: float
    high: float

    def to_dict(self, digits: int = 1) -> dict:
        return {"low": round(self.low, digits), "expected": round(self.expected, digits), "high": round(self.high, digits)}


def interval_times(steps: float, per_step: Span) -> Span:
    """steps x seconds per step, as an interval. (The one place the timing arithmetic happens.)"""
    return Span(steps * per_step.low, steps * per_step.expected, steps * per_step.high)


def add(a: Span, b: Span) -> Span:
    return Span(a.low + b.low, a.expected + b.expected, a.high + b.high)


@dataclass(slots=True)
class Timing:
    source: str
    """`bar` (the training loop's progress bar), `iteration` (Megatron / nanotron time per iteration), `elapsed` (trainer_log.jsonl / ms-swift elapsed_time) or `runtime`
    (train_runtime over the steps that ran)."""
    line: int
    per_step: Span
    """Seconds per optimizer step."""
    samples: int
    """How many measurements the rate rests on."""
    at_step: int
    end_step: int | None
    elapsed_seconds: float | None = None
    remaining: Span | None = None
    """Seconds left to end_step, evaluations included; None when the run ended."""
    total: Span | None = None
    """elapsed + remaining."""
    evals_left: int = 0
    eval_seconds: float | None = None
    """Seconds of one evaluation, as logged (eval_runtime)."""
    framework_eta: float | None = None
    """What the framework itself showed as remaining at its last line (tqdm's `<...`, remaining_time)."""
    framework_eta_line: int | None = None
    verdict: tuple[str, dict] | None = None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "rate": {"seconds_per_step": self.per_step.to_dict(3), "source": self.source, "line": self.line, "samples": self.samples},
            "at_step": self.at_step,
            "end_step": self.end_step,
            "elapsed_seconds": None if self.elapsed_seconds is None else round(self.elapsed_seconds, 1),
            "remaining_seconds": None if self.remaining is None else self.remaining.to_dict(),
            "total_seconds": None if self.total is None else self.total.to_dict(),
            "evaluations_left": self.evals_left,
            "eval_seconds": None if self.eval_seconds is None else round(self.eval_seconds, 2),
            "framework_eta_seconds": self.framework_eta,
        }


def _spread(expected: float, values: list[float]) -> Span:
    low, high = min(values + [expected]), max(values + [expected])
    return Span(min(low, expected * (1 - MIN_SPREAD)), expected, max(high, expected * (1 + MIN_SPREAD)))


def bar_rate(bar: BarTrack) -> tuple[Span, int] | None:
    """Seconds per step from a bar's draws: the median of the draws after warm-up, spread from their range."""
    rates = [(n, r) for n, r in bar.rates if r > 0]
    if not rates and bar.elapsed and bar.n:
        rates = [(bar.n, bar.elapsed / bar.n)]
    if not rates:
        return None
    later = [r for n, r in rates if n > bar.total * WARMUP_SHARE]
    kept = (later or [r for _, r in rates])[-32:]
    return _spread(statistics.median(kept), kept), len(kept)


def measure(run: RunObservation, bar: BarTrack | None, end_step: int | None, stopped: bool) -> Timing | None:
    """The rate and the time left, from whatever timing the log shows; None if it shows none."""
    p = run.progress
    at = run.last_step.value if run.last_step is not None else (bar.n if bar is not None else 0)
    timing = None
    if bar is not None:
        measured = bar_rate(bar)
        if measured is not None:
            per_step, count = measured
            timing = Timing(bar.kind, bar.line, per_step, count, at, end_step, elapsed_seconds=bar.elapsed)
            timing.framework_eta, timing.framework_eta_line = bar.remaining, bar.line
    if timing is None and p.elapsed_points:
        first, last = p.elapsed_points[0], p.elapsed_points[-1]
        if last[0] > first[0] and last[1] > first[1]:
            rate, count = (last[1] - first[1]) / (last[0] - first[0]), 2
        elif last[0] > 0:
            rate, count = last[1] / last[0], 1
        else:
            rate = 0.0
        if rate > 0:
            overall = last[1] / last[0] if last[0] else rate
            timing = Timing("elapsed", last[3], _spread(rate, [overall]), count, at, end_step, elapsed_seconds=last[1])
            timing.framework_eta, timing.framework_eta_line = last[2], last[3]
    if timing is None and p.train_runtime and at:
        steps_run = at - (run.resume_global_step or 0)
        if steps_run > 0:
            timing = Timing("runtime", p.metrics_line or 0, _spread(p.train_runtime / steps_run, []), 1, at, end_step,
                            elapsed_seconds=p.train_runtime)
    if timing is None:
        return None
    if p.evals and p.eval_runtime:
        timing.eval_seconds = p.eval_runtime / p.evals
    if stopped or run.finished or end_step is None or at >= end_step:
        if timing.elapsed_seconds is not None:
            timing.total = Span(timing.elapsed_seconds, timing.elapsed_seconds, timing.elapsed_seconds)
        return timing
    remaining = interval_times(end_step - at, timing.per_step)
    every = _eval_every(p.eval_steps)
    if every and timing.eval_seconds:
        timing.evals_left = end_step // every - at // every
        remaining = add(remaining, interval_times(timing.evals_left, Span(timing.eval_seconds, timing.eval_seconds, timing.eval_seconds)))
    timing.remaining = remaining
    if timing.elapsed_seconds is not None:
        timing.total = add(Span(timing.elapsed_seconds, timing.elapsed_seconds, timing.elapsed_seconds), remaining)
    return timing


def _eval_every(steps: list[int]) -> int | None:
    distinct = sorted({s for s in steps if s > 0})
    if not distinct:
        return None
    if len(distinct) == 1:
        return distinct[0]
    gaps = [b - a for a, b in zip(distinct, distinct[1:], strict=False)]
    return int(statistics.median(gaps)) or None


def verdict(timing: Timing, bar: BarTrack | None, resumed: bool) -> tuple[str, dict] | None:
    """Is the framework's own ETA right, and if not, why."""
    if timing.remaining is None or timing.framework_eta is None:
        return None
    ours, theirs = timing.remaining.expected, timing.framework_eta
    params = {"eta": Dur(theirs), "ours": Dur(ours), "line": timing.framework_eta_line}
    if bar is not None and timing.end_step is not None and bar.total != timing.end_step:
        return "explain.eta.total", {**params, "total": bar.total, "end": timing.end_step}
    if ours and abs(theirs - ours) / ours <= AGREE:
        return "explain.eta.agrees", params
    if timing.evals_left and timing.eval_seconds and theirs < ours:
        return "explain.eta.evals", {**params, "evals": timing.evals_left, "eval": Dur(timing.eval_seconds)}
    if resumed:
        return "explain.eta.resume", params
    if bar is not None and bar.n <= bar.total * WARMUP_SHARE:
        return "explain.eta.warmup", params
    return "explain.eta.differs", params


class Dur(float):
    """Seconds in a message parameter; rendered in the reader's language when the message is (see `duration`)."""


_UNITS = {"en": ("s", "min", "h", "d", " "), "zh": ("秒", "分钟", "小时", "天", " ")}


def duration(value: float | None, lang: str = "en") -> str:
    """Seconds as people say them: `4 h 15 min`, `3 d 4 h`, `52 s` (zh: `4 小时 15 分钟`)."""
    if value is None:
        return "?"
    s_, min_, h_, d_, sp = _UNITS.get(lang, _UNITS["en"])
    value = max(float(value), 0.0)
    if value < 60:
        return f"{value:.0f}{sp}{s_}"
    minutes = round(value / 60)
    if minutes < 60:
        return f"{minutes}{sp}{min_}"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}{sp}{h_} {minutes}{sp}{min_}" if minutes else f"{hours}{sp}{h_}"
    days, hours = divmod(hours, 24)
    return f"{days}{sp}{d_} {hours}{sp}{h_}" if hours else f"{days}{sp}{d_}"
