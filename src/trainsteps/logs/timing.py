"""How fast a logged run goes and how long it has left (pure: no I/O), on the shared time model (`trainsteps.timing`).

The rate comes from the time model's one reader of timing lines (`timing.log_rates.RateReader`: the training bar
with warm-up steps and evaluation/save pauses taken out, LLaMA-Factory's elapsed_time, Megatron's time per
iteration, the final train_runtime), fed per run with the lines of that run. What explain adds: where the run
REALLY ends (the engine's last optimizer step for the inferred release, a crash, not the bar's total), the
evaluations still ahead at the logged eval_runtime, and a verdict on the framework's own ETA. The arithmetic is
`trainsteps.timing.remaining` (an Interval low / expected / high).
"""

from __future__ import annotations

from trainsteps.logs.observed import BarTrack, RunObservation
from trainsteps.record import field, record
from trainsteps.timing import Interval, Rate, Spoken, format_duration, remaining
from trainsteps.timing.log_rates import RateReader

WARMUP_SHARE = 0.05
"""Bar draws before this share of the run are left out of the fallback rate when later draws exist."""
AGREE = 0.10
"""The framework's own ETA agrees when it is within 10% of ours."""
TRACE_POINTS = 200
"""(step, elapsed seconds) pairs kept for a plot of the run's progress over time; longer traces are thinned evenly."""

Dur = Spoken
"""Seconds in a message parameter, said in the message's language."""


def duration(value: float | None, lang: str = "en") -> str:
    return format_duration(value, lang)


@record
class Timing:
    source: str
    """`bar` (the training loop's progress bar), `iteration` (Megatron / nanotron time per iteration), `elapsed`
    (trainer_log.jsonl / ms-swift elapsed_time) or `runtime` (train_runtime over the steps that ran)."""
    line: int
    rate: Rate
    """Seconds per optimizer step (rate.step_seconds), as the time model holds it."""
    samples: int
    at_step: int
    end_step: int | None
    elapsed_seconds: float | None = None
    remaining: Interval | None = None
    """Seconds left to end_step, evaluations included; None when the run ended."""
    total: Interval | None = None
    """elapsed + remaining."""
    evals_left: int = 0
    eval_seconds: float | None = None
    framework_eta: float | None = None
    """What the framework itself showed as remaining at its last line (tqdm's `<...`, remaining_time)."""
    framework_eta_line: int | None = None
    paused_seconds: float = 0.0
    """Seconds of evaluation/save pauses the time model took out of the rate."""
    verdict: tuple[str, dict] | None = None
    notes: list = field(default_factory=list)
    mfu: Interval | None = None
    """The model FLOPs utilisation the measured rate implies (with --model/--params and --gpu)."""
    mfu_verdict: tuple[str, dict] | None = None
    framework_mfu: tuple[str, dict] | None = None
    """The MFU the framework printed itself, beside ours, and how its count differs (FRAMEWORK_MFU)."""
    trace: list = field(default_factory=list)
    """(step, elapsed seconds) of the timing lines the rate came from, in order (at most TRACE_POINTS): the run's
    progress over time, for a plot."""

    @property
    def per_step(self) -> Interval:
        return self.rate.step_seconds

    def to_dict(self) -> dict:
        return {
            "rate": {"seconds_per_step": self.per_step.to_dict(), "source": self.source, "line": self.line, "samples": self.samples,
                     "detail": self.rate.detail},
            "at_step": self.at_step,
            "end_step": self.end_step,
            "elapsed_seconds": None if self.elapsed_seconds is None else round(self.elapsed_seconds, 1),
            "remaining_seconds": None if self.remaining is None else self.remaining.to_dict(1),
            "total_seconds": None if self.total is None else self.total.to_dict(1),
            "evaluations_left": self.evals_left,
            "eval_seconds": None if self.eval_seconds is None else round(self.eval_seconds, 2),
            "paused_seconds": round(self.paused_seconds, 1),
            "framework_eta_seconds": self.framework_eta,
            "mfu": None if self.mfu is None else self.mfu.to_dict(),
            "trace": [[step, round(seconds, 1)] for step, seconds in self.trace],
        }


def feed(run: RunObservation, line: str, line_no: int) -> None:
    """Hand a timing line of this run to the time model's reader (one reader per run, so runs stay apart)."""
    reader = run.rate_reader
    if reader is None:
        reader = run.rate_reader = RateReader()
    reader._line_no = line_no - 1  # the reader numbers lines itself; keep the input's numbering
    reader.feed(line)


def feed_tqdm(run: RunObservation, line: str, line_no: int, slash: int, *parsed: str | float | None) -> None:
    """A tqdm draw already parsed by the bar reader (progress.py), handed over as parsed: see `RateReader.feed_tqdm`."""
    reader = run.rate_reader
    if reader is None:
        reader = run.rate_reader = RateReader()
    reader._line_no = line_no - 1
    reader.feed_tqdm(line, slash, *parsed)


def feed_bare_tqdm(run: RunObservation, line_no: int, *parsed: str | float | None) -> None:
    """A bare tqdm draw (no description, no postfix) parsed by the bar reader: see `RateReader.feed_bare_tqdm`."""
    reader = run.rate_reader
    if reader is None:
        reader = run.rate_reader = RateReader()
    reader._line_no = line_no - 1
    reader.feed_bare_tqdm(*parsed)


def feed_llamafactory(run: RunObservation, line: str, line_no: int, *parsed: str | float | None) -> None:
    """A trainer_log.jsonl row whose clocks the dict reader (progress.py) has read: see `RateReader.feed_llamafactory`."""
    reader = run.rate_reader
    if reader is None:
        reader = run.rate_reader = RateReader()
    reader._line_no = line_no - 1
    reader.feed_llamafactory(line, *parsed)


def _fallback(bar: BarTrack) -> tuple[Rate, int] | None:
    """Lines the shared reader does not read (nanotron iteration lines, bars without a clock): the median of the rates
    drawn after warm-up."""
    rates = [(n, r) for n, r in bar.rates if r > 0]
    if not rates:
        return None
    later = [r for n, r in rates if n > bar.total * WARMUP_SHARE]
    kept = (later or [r for _, r in rates])[-32:]
    from statistics import median  # loaded with the first rate: `statistics` costs ~5 ms of start-up

    mid = median(kept)
    rate = Rate.from_step_seconds(mid, "log", f"{bar.kind} line {bar.line}, median of {len(kept)}")
    low, high = min([rate.step_seconds.low, *kept]), max([rate.step_seconds.high, *kept])
    return Rate(Interval(low, mid, high), "log", rate.detail), len(kept)


def _step_line_rate(rates: list, at: int, end_step: int | None) -> Timing | None:
    """The rate a loop's step lines print when no total is known: the median of the last ones, the first left out
    when there are others (the first step carries the start-up: `5.59 seconds/step`, then `92.09`)."""
    kept = [r for _, r, _ in (rates[1:] if len(rates) > 1 else rates)][-32:]
    from statistics import median  # loaded with the first rate: `statistics` costs ~5 ms of start-up

    mid = median(kept)
    rate = Rate.from_step_seconds(mid, "log", f"step lines, median of {len(kept)}")
    low, high = min([rate.step_seconds.low, *kept]), max([rate.step_seconds.high, *kept])
    return Timing("step_lines", rates[-1][2], Rate(Interval(low, mid, high), "log", rate.detail), len(kept), at, end_step)


def measure(run: RunObservation, bar: BarTrack | None, end_step: int | None, stopped: bool) -> Timing | None:
    """The rate and the time left, from whatever timing the log shows; None if it shows none."""
    if not run.shows_timing(bar):
        return None
    p = run.progress
    at = run.last_step.value if run.last_step is not None else (bar.n if bar is not None else 0)
    timing = None
    if run.rate_reader is not None:
        run.rate_reader.total_hint = (bar.total if bar is not None else None) or run.value("max_steps")
        lt = run.rate_reader.result()
        if lt.rate is not None and lt.per == "step":
            line = lt.samples[-1].line_no if lt.samples else (p.metrics_line or 0)
            source = {"tqdm": "bar", "notebook": "bar", "llamafactory": "elapsed", "megatron": "iteration",
                      "summary": "runtime"}.get(lt.kind, "bar")
            timing = Timing(source, line, lt.rate, len(lt.samples) or 1, at, end_step, elapsed_seconds=lt.elapsed_seconds,
                            framework_eta=lt.framework_remaining_seconds, framework_eta_line=line, paused_seconds=lt.paused_seconds)
            if lt.kind == "summary":
                timing.framework_eta = None
            timing.trace = _thinned([(s.step, s.elapsed) for s in lt.samples if s.elapsed is not None])
    if timing is None and bar is not None:
        found = _fallback(bar)
        if found is not None:
            timing = Timing(bar.kind, bar.line, found[0], found[1], at, end_step, elapsed_seconds=bar.elapsed,
                            framework_eta=bar.remaining, framework_eta_line=bar.line)
    if timing is None and p.step_rates:
        timing = _step_line_rate(p.step_rates, at, end_step)
    if timing is None and p.elapsed_points:
        last = p.elapsed_points[-1]
        if last[0] > 0 and last[1] > 0:
            timing = Timing("elapsed", last[3], Rate.from_step_seconds(last[1] / last[0], "log", f"elapsed_time, line {last[3]}"), 1,
                            at, end_step, elapsed_seconds=last[1], framework_eta=last[2], framework_eta_line=last[3])
            timing.trace = _thinned([(point[0], point[1]) for point in p.elapsed_points])
    if timing is None and p.train_runtime and at:
        steps_run = at - (run.resume_global_step or 0)
        if steps_run > 0:
            timing = Timing("runtime", p.metrics_line or 0,
                            Rate.from_step_seconds(p.train_runtime / steps_run, "log", f"train_runtime, line {p.metrics_line}"), 1,
                            at, end_step, elapsed_seconds=p.train_runtime)
    if timing is None:
        return None
    if p.evals and p.eval_runtime:
        timing.eval_seconds = p.eval_runtime / p.evals
    elif p.evals and timing.paused_seconds > 0:
        # no eval_runtime printed (LLaMA-Factory's trainer_log.jsonl): the pauses the rate left out were the evaluations
        timing.eval_seconds = timing.paused_seconds / p.evals
    if stopped or run.finished or end_step is None or at >= end_step:
        if timing.elapsed_seconds is not None:
            timing.total = Interval.exact(timing.elapsed_seconds)
        return timing
    every = _eval_every(p.eval_steps)
    if every and timing.eval_seconds:
        timing.evals_left = end_step // every - at // every
    estimate = remaining(timing.rate, at, end_step, evals_left=timing.evals_left,
                         eval_seconds=Interval.exact(timing.eval_seconds) if timing.evals_left else None)
    timing.remaining = estimate.wall_seconds
    if timing.elapsed_seconds is not None:
        timing.total = Interval.exact(timing.elapsed_seconds) + timing.remaining
    return timing


def _thinned(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """At most TRACE_POINTS points, evenly spread, the last one kept (where the run stood)."""
    if len(points) <= TRACE_POINTS:
        return points
    stride = len(points) / (TRACE_POINTS - 1)
    return [points[int(i * stride)] for i in range(TRACE_POINTS - 1)] + [points[-1]]


def _eval_every(steps: list[int]) -> int | None:
    distinct = sorted({s for s in steps if s > 0})
    if not distinct:
        return None
    if len(distinct) == 1:
        return distinct[0]
    gaps = [b - a for a, b in zip(distinct, distinct[1:], strict=False)]
    from statistics import median

    return int(median(gaps)) or None


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


@record
class Hardware:
    """What `explain --model/--params --gpu` adds to turn a measured step time into an MFU."""

    shape: object
    """trainsteps.timing.flops.ModelShape."""
    gpu: object
    """trainsteps.timing.gpus.Gpu."""
    gpus: int | None = None
    """Devices in all; default: the processes the log implies."""
    seq_length: int | None = None
    """Tokens per sample (packed or padded to this length)."""
    training: str = "full"
    dtype: str = "bf16"


FRAMEWORK_MFU = {
    "torchtitan": "explain.mfu.framework.torchtitan",
    "ms-swift": "explain.mfu.framework.swift",
}
"""How a framework's own printed MFU is counted, against ours (dense BF16 peak of timing/gpus.py; 6N or 4N plus
attention halved under the causal mask). torchtitan (models/utils.py get_dense_model_nparams_and_flops, tools/utils.py
get_peak_flops): causal attention counted in full, dense peaks from its own table. ms-swift (callbacks/perf_log.py):
the Trainer's total_flos (6 x non-embedding parameters x input tokens: no attention, padding and frozen weights
included) over a matmul rate it measures at start (8192-wide GEMMs) or DEVICE_TFLOPS, not a datasheet peak."""


def implied_mfu(timing: Timing, hardware: Hardware, samples_per_step: int | None, devices: int | None,
                reported: tuple | None = None) -> None:
    """The MFU the log's speed implies, and whether it is normal for the kind of training (the time model's
    published ranges). Tokens per step = seq_length x samples per step: an upper bound when rows are shorter.
    `reported`: (framework, MFU, line) the framework printed itself, set beside ours with how its count differs."""
    from trainsteps.timing.flops import MFU_DEFAULTS, train_flops_per_token
    from trainsteps.timing.flops import implied_mfu as mfu_of

    devices = hardware.gpus or devices
    if not (hardware.seq_length and samples_per_step and devices):
        timing.mfu_verdict = ("explain.mfu.missing", {})
        return
    tokens = hardware.seq_length * samples_per_step
    flops = train_flops_per_token(hardware.shape, hardware.seq_length, hardware.training).expected
    timing.mfu = mfu_of(timing.per_step, tokens, flops, hardware.gpu.peak(hardware.dtype), devices)
    normal = MFU_DEFAULTS[hardware.training].mfu
    params = {"mfu": f"{timing.mfu.expected:.1%}", "low": f"{timing.mfu.low:.1%}", "high": f"{timing.mfu.high:.1%}",
              "tokens": f"{tokens:,}", "devices": devices, "gpu": hardware.gpu.name, "training": hardware.training,
              "normal_low": f"{normal.low:.0%}", "normal_high": f"{normal.high:.0%}"}
    if reported is not None and reported[0] in FRAMEWORK_MFU:
        timing.framework_mfu = (FRAMEWORK_MFU[reported[0]], {
            "theirs": f"{reported[1]:.1%}", "line": reported[2], "mfu": params["mfu"],
            "peak": f"{hardware.gpu.peak(hardware.dtype) / 1e12:,.1f}", "dtype": hardware.dtype})
    if timing.mfu.expected < normal.low:
        timing.mfu_verdict = ("explain.mfu.low", params)
    elif timing.mfu.expected > normal.high:
        timing.mfu_verdict = ("explain.mfu.high", params)
    else:
        timing.mfu_verdict = ("explain.mfu.normal", params)
