"""The time model: counts from the plan x a rate -> wall-clock time, GPU-hours and cost, each an interval.

Total = preparation + optimizer steps x step time + evaluations x eval time + checkpoint saves x save time.
Pure: no torch, no I/O, no CLI. Every number is recorded in a `Derivation` (en and zh through `trainsteps.i18n`).
"""

from __future__ import annotations

import math

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.record import field, record
from trainsteps.steps import Steps
from trainsteps.timing.durations import Spoken, format_duration

MEASURED_SPREAD = (0.95, 1.10)
"""A measured step time x (low, high): steps differ with the data's lengths, and runs tend to slow down (dataloader
stalls, logging, thermal limits) more often than they speed up. Used when the measurement gives no spread of its own."""


def _with_spread_note(spread: tuple[float, float], extra: dict) -> dict:
    """A single measurement's default spread says where its range comes from (it is not the measurement's own)."""
    if spread != MEASURED_SPREAD:
        return extra
    low, high = (f"{abs(1 - bound):.0%}" for bound in spread)
    return {**extra, "assumptions": (*extra.get("assumptions", ()), ("time.assume.measured_spread", {"low": low, "high": high}))}


ORIGINS = ("flag", "log", "model")
"""Where a rate came from: typed on the command line, read from a log, or the FLOPs model."""


@record(frozen=True)
class Interval:
    """A quantity that cannot be exact: low <= expected <= high."""

    low: float
    """The smallest plausible value."""
    expected: float
    """The value to plan with."""
    high: float
    """The largest plausible value."""

    @classmethod
    def exact(cls, value: float) -> Interval:
        return cls(value, value, value)

    @classmethod
    def spread(cls, value: float, low_factor: float, high_factor: float) -> Interval:
        """`value` with relative bounds: `spread(4, 0.95, 1.1)` -> 3.8 / 4 / 4.4."""
        return cls(value * low_factor, value, value * high_factor)

    def scaled(self, factor: float) -> Interval:
        if factor < 0:
            return Interval(self.high * factor, self.expected * factor, self.low * factor)
        return Interval(self.low * factor, self.expected * factor, self.high * factor)

    def inverse(self, numerator: float = 1.0) -> Interval:
        """numerator / self, bounds swapped (a faster rate is a shorter time)."""
        return Interval(numerator / self.high, numerator / self.expected, numerator / self.low)

    def __add__(self, other: Interval) -> Interval:
        return Interval(self.low + other.low, self.expected + other.expected, self.high + other.high)

    def is_exact(self) -> bool:
        return self.low == self.expected == self.high

    def to_dict(self, digits: int = 3) -> dict:
        return {"low": _round(self.low, digits), "expected": _round(self.expected, digits), "high": _round(self.high, digits)}

    def describe(self, lang: str = "en") -> str:
        """Durations as people say them: `4 h 20 min (4 h 7 min – 4 h 46 min)`."""
        text = format_duration(self.expected, lang)
        low, high = format_duration(self.low, lang), format_duration(self.high, lang)
        return text if low == high == text else f"{text} ({low} – {high})"


def _round(value: float, digits: int) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    return float(round(value, max(digits, 5 - int(math.floor(math.log10(abs(value)))))))  # >= 6 significant digits


@record(frozen=True)
class Rate:
    """How fast the run goes: seconds per optimizer step, and where that figure came from."""

    step_seconds: Interval
    """Wall seconds per optimizer step, warm-up steps and eval/save pauses already taken out."""
    origin: str
    """`flag` (typed: --step-time, --tokens-per-second, --samples-per-second), `log` (measured in a log) or `model`
    (FLOPs model: FLOPs per step / (peak FLOP/s x GPUs x MFU))."""
    detail: str = ""
    """What exactly was read, e.g. `--step-time 4` or `train.log:812 4.00s/it`."""
    tokens_per_step: float | None = None
    """Tokens per optimizer step over all ranks, when known (turns the rate into tokens/s)."""
    mfu: Interval | None = None
    """Model FLOPs utilisation: assumed for `model`, implied for a measured rate when the model's FLOPs are known."""
    assumptions: tuple[tuple[str, dict], ...] = ()
    """(message id, params) of what the rate assumes or left out (warm-up skipped, pauses removed, MFU source...)."""

    @property
    def source(self) -> str:
        """`measured` or `model`: the JSON's `time.source`."""
        return "model" if self.origin == "model" else "measured"

    @property
    def tokens_per_second(self) -> Interval | None:
        """Tokens per second over all ranks, when tokens per step are known."""
        if not self.tokens_per_step:
            return None
        return self.step_seconds.inverse(self.tokens_per_step)

    @classmethod
    def from_step_seconds(cls, seconds: float, origin: str = "flag", detail: str = "",
                          spread: tuple[float, float] = MEASURED_SPREAD, **extra) -> Rate:
        """A measured seconds-per-step figure, with the default spread of a single measurement."""
        check_positive(seconds, "--step-time")
        return cls(Interval.spread(seconds, *spread), origin, detail, **_with_spread_note(spread, extra))

    @classmethod
    def from_tokens_per_second(cls, tokens_per_second: float, tokens_per_step: float, origin: str = "flag",
                               detail: str = "", spread: tuple[float, float] = MEASURED_SPREAD, **extra) -> Rate:
        """Total tokens/s over all GPUs and the tokens one optimizer step consumes -> seconds per step."""
        check_positive(tokens_per_second, "--tokens-per-second")
        check_positive(tokens_per_step, "tokens per step")
        return cls(Interval.spread(tokens_per_step / tokens_per_second, *spread), origin, detail,
                   tokens_per_step=tokens_per_step, **_with_spread_note(spread, extra))

    @classmethod
    def from_samples_per_second(cls, samples_per_second: float, samples_per_step: float, origin: str = "flag",
                                detail: str = "", spread: tuple[float, float] = MEASURED_SPREAD, **extra) -> Rate:
        """Total samples/s and the samples one optimizer step consumes (batch x accumulation x data-parallel ranks)."""
        check_positive(samples_per_second, "--samples-per-second")
        check_positive(samples_per_step, "samples per step")
        return cls(Interval.spread(samples_per_step / samples_per_second, *spread), origin, detail, **extra)


def check_positive(value: float, option: str) -> float:
    """A rate or a duration must be a positive, finite number."""
    if value is None or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise InputError("time.error.rate_positive", "time.hint.rate_positive", option=option, value=value)
    return value


@record(frozen=True)
class RunCounts:
    """What the plan knows about the run, in the units the time model needs."""

    optimizer_steps: int
    """Optimizer steps still to run (after a resume: final step - resume step)."""
    eval_count: int = 0
    """Evaluations still to run."""
    save_count: int = 0
    """Checkpoint saves still to run (a step that saves twice counts twice)."""
    warmup_steps: float = 0
    """Learning-rate warm-up steps. They cost as much as any other step; recorded for the derivation only."""
    tokens_per_step: float | None = None
    """Tokens per optimizer step over all ranks, when the data or --seq-length says."""
    samples_per_step: float | None = None
    """Rows per optimizer step over all ranks (per-device batch x accumulation x data-parallel ranks)."""
    start_step: int = 0
    """The step the counted part starts after (a resume, or where a log was read up to)."""

    @classmethod
    def from_schedule(cls, schedule, after_step: int | None = None, tokens_per_step: float | None = None,
                      samples_per_step: float | None = None) -> RunCounts:
        """Counts from a `Schedule` (any framework): the steps, evaluations and saves after `after_step`
        (default: the resume step, or 0)."""
        run = schedule.run
        start = after_step if after_step is not None else int((schedule.inputs or {}).get("resume_from_step") or 0)
        return cls(optimizer_steps=max(0, run.optimizer_steps - start),
                   eval_count=Steps.of(run.eval_steps).count_after(start),
                   save_count=Steps.of(run.save_steps).count_after(start),
                   warmup_steps=run.warmup_steps or 0,
                   tokens_per_step=tokens_per_step, samples_per_step=samples_per_step, start_step=start)


PARTS = ("train", "eval", "save", "prepare")
"""The parts of the wall time, in the JSON's order."""


@record
class TimeEstimate:
    """How long the run takes, its GPU-hours and cost: every figure an interval, with its derivation."""

    wall_seconds: Interval
    """Sum of the known parts."""
    train: Interval
    """Optimizer steps x seconds per step."""
    eval: Interval | None
    """Evaluations x seconds per evaluation; None when evaluations run but their time is unknown (left out)."""
    save: Interval | None
    """Checkpoint saves x seconds per save; None when saves happen but their time is unknown (left out)."""
    prepare: Interval | None
    """Preparation before the first step (tokenization, preprocessing); None when unknown (left out)."""
    step_seconds: Interval
    """Seconds per optimizer step."""
    source: str
    """`measured` or `model`."""
    rate: Rate
    """The rate used."""
    tokens_per_second: Interval | None = None
    """Tokens per second over all GPUs, when tokens per step are known."""
    mfu: Interval | None = None
    """Model FLOPs utilisation, when the model's FLOPs are known."""
    gpus: int | None = None
    """GPUs billed (all ranks)."""
    gpu_hours: Interval | None = None
    """wall_seconds x gpus / 3600 (GPUs are held during every part)."""
    cost: Interval | None = None
    """gpu_hours x price per GPU-hour."""
    currency: str | None = None
    """Currency of `cost`."""
    left_out: tuple[str, ...] = ()
    """Parts that happen but have no rate, so the wall time leaves them out."""
    notes: list[tuple[str, dict]] = field(default_factory=list)
    """(message id, params) shown under the figures: assumptions, precedence (a rate beat a model)."""
    derivation: Derivation = field(default_factory=Derivation)
    """Every figure with its formula and inputs."""
    step_parts: dict[str, Interval] | None = None
    """An RL step by part (timing.rl.PARTS: generation, forwards, updates, weight sync, overlap), when modelled."""

    def part(self, name: str) -> Interval | None:
        return getattr(self, name)

    def to_dict(self, lang: str = "en") -> dict:
        """The JSON `time` object (docs/json.md)."""
        from trainsteps.i18n import message

        def opt(value: Interval | None) -> dict | None:
            return None if value is None else value.to_dict()

        return {
            "wall_seconds": self.wall_seconds.to_dict(),
            "parts": {name: opt(self.part(name)) for name in PARTS},
            "gpu_hours": opt(self.gpu_hours),
            "cost": None if self.cost is None else {**self.cost.to_dict(), "currency": self.currency},
            "step_seconds": self.step_seconds.to_dict(),
            "tokens_per_second": opt(self.tokens_per_second),
            "source": self.source,
            "rate_from": {"origin": self.rate.origin, "detail": self.rate.detail},
            "mfu": opt(self.mfu),
            "gpus": self.gpus,
            "left_out": list(self.left_out),
            "notes": [message(msg_id, lang, **params) for msg_id, params in self.notes],
            "derivation": self.derivation.to_list(lang),
            **({} if self.step_parts is None else {"step_parts": {name: part.to_dict() for name, part in self.step_parts.items()}}),
        }


def estimate(counts: RunCounts, rate: Rate, *, eval_seconds: Interval | None = None,
             save_seconds: Interval | None = None, prepare_seconds: Interval | None = None, gpus: int | None = None,
             price_per_gpu_hour: float | None = None, currency: str = "USD",
             notes: list[tuple[str, dict]] | None = None) -> TimeEstimate:
    """The wall time of `counts` at `rate`. `eval_seconds` / `save_seconds` are per event, `prepare_seconds` in all.

    With only a step time, the expected training time is exactly steps x step time, and the parts that happen but
    have no time (evaluations, saves, preparation) are named in `left_out`."""
    d = Derivation()
    if rate.tokens_per_step is None and counts.tokens_per_step:
        rate = Rate(rate.step_seconds, rate.origin, rate.detail, counts.tokens_per_step, rate.mfu, rate.assumptions)
    steps = d.given("time_steps", counts.optimizer_steps, "time.why.steps", start=counts.start_step)
    t = rate.step_seconds
    d.given("time_step_seconds", _num(t.expected), f"time.why.origin.{rate.origin}", detail=rate.detail,
            range=_range(t, seconds=True))
    train = t.scaled(steps)
    d.add("time_train_seconds", _num(train.expected), "S × t_step", f"{steps:,} × {_sec(t.expected)}",
          "time.why.duration", duration=Spoken(train.expected), range=_range(train))
    left_out: list[str] = []
    eval_part = _events(d, "eval", counts.eval_count, eval_seconds, left_out)
    save_part = _events(d, "save", counts.save_count, save_seconds, left_out)
    prepare = prepare_seconds
    if prepare is None:
        left_out.append("prepare")
    known = [p for p in (prepare, train, eval_part, save_part) if p is not None]
    wall = known[0]
    for part in known[1:]:
        wall = wall + part
    shown = [(n, p) for n, p in zip(("prepare", "train", "eval", "save"), (prepare, train, eval_part, save_part), strict=True)
             if p is not None and (n == "train" or p.high > 0)]
    d.add("time_wall_seconds", _num(wall.expected), " + ".join(n for n, _ in shown),
          " + ".join(_sec(p.expected) for _, p in shown),
          "time.why.duration", duration=Spoken(wall.expected), range=_range(wall))
    gpu_hours = cost = None
    if gpus:
        gpu_hours = wall.scaled(gpus / 3600)
        d.add("time_gpu_hours", _num(gpu_hours.expected), "wall × G / 3600", f"{_sec(wall.expected)} × {gpus} / 3600",
              "time.why.gpu_hours")
        if price_per_gpu_hour is not None:
            check_positive(price_per_gpu_hour, "--price-per-gpu-hour")
            cost = gpu_hours.scaled(price_per_gpu_hour)
            d.add("time_cost", _num(cost.expected), "GPU-h × price",
                  f"{gpu_hours.expected:,.2f} × {price_per_gpu_hour:g}", "time.why.cost", currency=currency)
    all_notes = list(rate.assumptions) + list(notes or [])
    if left_out:
        all_notes.append(("time.note.left_out", {"parts": PartNames(left_out)}))
    return TimeEstimate(wall_seconds=wall, train=train, eval=eval_part, save=save_part, prepare=prepare,
                        step_seconds=t, source=rate.source, rate=rate, tokens_per_second=rate.tokens_per_second,
                        mfu=rate.mfu, gpus=gpus, gpu_hours=gpu_hours, cost=cost,
                        currency=currency if cost is not None else None, left_out=tuple(left_out), notes=all_notes,
                        derivation=d)


def remaining(rate: Rate, current_step: int, final_step: int, *, evals_left: int = 0, saves_left: int = 0,
              tokens_per_step: float | None = None, **overheads) -> TimeEstimate:
    """Time from `current_step` to `final_step` (where the run really ends) at `rate`, with the evaluations and
    saves still ahead. `overheads`: eval_seconds, save_seconds, gpus, price_per_gpu_hour, currency, notes.
    No preparation is left once a run is stepping, so it counts as 0 here."""
    counts = RunCounts(optimizer_steps=max(0, final_step - current_step), eval_count=evals_left,
                       save_count=saves_left, tokens_per_step=tokens_per_step, start_step=current_step)
    overheads.setdefault("prepare_seconds", Interval.exact(0.0))
    return estimate(counts, rate, **overheads)


class PartNames(tuple):
    """Names of parts that a message template formats in its language: `{parts}` / `{parts:zh}`."""

    def __format__(self, spec: str) -> str:
        from trainsteps.i18n import label

        lang = spec or "en"
        return label("list_sep", lang).join(label(f"time.part.{name}", lang) for name in self)

    def __str__(self) -> str:
        return format(self)


def _events(d: Derivation, kind: str, count: int, per_event: Interval | None, left_out: list[str]) -> Interval | None:
    if count == 0:
        return Interval.exact(0.0)
    if per_event is None:
        left_out.append(kind)
        return None
    total = per_event.scaled(count)
    d.add(f"time_{kind}_seconds", _num(total.expected), f"n_{kind} × t_{kind}", f"{count:,} × {_sec(per_event.expected)}",
          "time.why.duration", duration=Spoken(total.expected), range=_range(total))
    return total


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


def _sec(value: float) -> str:
    return f"{_num(value):,} s"


def _range(interval: Interval, seconds: bool = False) -> str | Spoken:
    if seconds:
        return f"{_num(interval.low):,} – {_num(interval.high):,} s"
    return Spoken(interval.low, interval.high)
