"""The learning rate the Trainer's scheduler gives at each optimizer step (transformers `get_scheduler`).

The Trainer builds `get_scheduler(lr_scheduler_type, optimizer, num_warmup_steps=warmup,
num_training_steps=max_steps, scheduler_specific_kwargs=lr_scheduler_kwargs)`: a `LambdaLR` whose factor at
scheduler step k multiplies `learning_rate`. The scheduler steps once per optimizer step, so the rate logged at
`global_step` s (and used by step s + 1) is `learning_rate * factor(s)`. The factors below are transformers'
own lambdas (`transformers/optimization.py`), checked step by step against them by `tools/record_lr.py`.
`reduce_lr_on_plateau` and `greedy` follow the evaluation metric and have no curve before the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SCHEDULERS = (
    "linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup", "inverse_sqrt",
    "cosine_with_min_lr", "cosine_warmup_with_min_lr", "warmup_stable_decay",
)
METRIC_DRIVEN = ("reduce_lr_on_plateau", "greedy")


@dataclass(frozen=True, slots=True)
class LrSchedule:
    """One scheduler as the Trainer builds it."""

    name: str = "linear"
    """`lr_scheduler_type` (TrainingArguments' default is linear)."""
    warmup_steps: int = 0
    """num_warmup_steps: the plan's warmup steps."""
    total_steps: int = 0
    """num_training_steps: the plan's max_steps (not where the loop really stops)."""
    learning_rate: float = 5e-5
    """TrainingArguments.learning_rate (the optimizer's initial rate)."""
    kwargs: dict = field(default_factory=dict)
    """lr_scheduler_kwargs: num_cycles, power, lr_end, timescale, min_lr, min_lr_rate, warmup_lr_rate,
    num_stable_steps, num_decay_steps, warmup_type, decay_type, min_lr_ratio."""

    def problem(self) -> str | None:
        """transformers' own refusal of these settings, word for word, or None when it builds the scheduler."""
        if self.name in ("cosine_with_min_lr", "cosine_warmup_with_min_lr"):
            if self.kwargs.get("min_lr") is not None and self.kwargs.get("min_lr_rate") is not None:
                return "Only one of min_lr or min_lr_rate should be set"
            if self.kwargs.get("min_lr") is None and self.kwargs.get("min_lr_rate") is None:
                return "One of min_lr or min_lr_rate should be set through the `lr_scheduler_kwargs`"
        if self.name == "warmup_stable_decay" and self.kwargs.get("num_decay_steps") is None:
            return "get_wsd_schedule() missing 1 required positional argument: 'num_decay_steps'"
        if self.name == "polynomial" and not self.learning_rate > float(self.kwargs.get("lr_end", 1e-7)):
            return f"lr_end ({self.kwargs.get('lr_end', 1e-7)}) must be smaller than initial lr ({self.learning_rate})"
        return None

    def factor(self, step: int) -> float:
        """The LambdaLR factor at scheduler step `step`."""
        return _FACTORS[self.name](step, self.warmup_steps, self.total_steps, self.learning_rate, self.kwargs)

    def rate(self, step: int) -> float:
        return self.learning_rate * self.factor(step)

    def boundaries(self) -> list[int]:
        """Steps where the curve changes shape (end of warmup, WSD's stable and decay phases)."""
        marks = [0, self.warmup_steps, self.total_steps]
        if self.name == "warmup_stable_decay":
            stable, decay = _wsd_phases(self.warmup_steps, self.total_steps, self.kwargs)
            marks += [self.warmup_steps + stable, self.warmup_steps + stable + decay]
        return sorted({m for m in marks if 0 <= m <= self.total_steps})

    def curve(self, points: int = 400) -> list[tuple[int, float]]:
        """(step, rate) at every step for short runs, else at `points` evenly spaced steps plus the boundaries."""
        total = self.total_steps
        if total <= points:
            steps = range(total + 1)
        else:
            steps = sorted({round(i * total / points) for i in range(points + 1)}
                           | {s + d for s in self.boundaries() for d in (-1, 0, 1) if 0 <= s + d <= total})
        factor, args = _FACTORS[self.name], (self.warmup_steps, self.total_steps, self.learning_rate, self.kwargs)
        return [(s, self.learning_rate * factor(s, *args)) for s in steps]


def _warmup(step: float, warmup: float) -> float:
    return float(step) / float(max(1, warmup))


def _progress(step: float, warmup: float, total: float) -> float:
    return float(step - warmup) / float(max(1, total - warmup))


def _linear(step, warmup, total, lr, kw):
    if step < warmup:
        return _warmup(step, warmup)
    return max(0.0, float(total - step) / float(max(1, total - warmup)))


def _cosine(step, warmup, total, lr, kw):
    if step < warmup:
        return _warmup(step, warmup)
    cycles = float(kw.get("num_cycles", 0.5))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * cycles * 2.0 * _progress(step, warmup, total))))


def _cosine_restarts(step, warmup, total, lr, kw):
    if step < warmup:
        return _warmup(step, warmup)
    progress = _progress(step, warmup, total)
    if progress >= 1.0:
        return 0.0
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((float(kw.get("num_cycles", 1)) * progress) % 1.0))))


def _polynomial(step, warmup, total, lr, kw):
    lr_end, power = float(kw.get("lr_end", 1e-7)), float(kw.get("power", 1.0))
    if step < warmup:
        return _warmup(step, warmup)
    if step > total:
        return lr_end / lr
    remaining = 1 - (step - warmup) / (total - warmup)
    return ((lr - lr_end) * remaining**power + lr_end) / lr


def _constant(step, warmup, total, lr, kw):
    return 1.0


def _constant_warmup(step, warmup, total, lr, kw):
    return float(step) / float(max(1.0, warmup)) if step < warmup else 1.0


def _inverse_sqrt(step, warmup, total, lr, kw):
    timescale = kw.get("timescale") or warmup or 10_000
    if step < warmup:
        return _warmup(step, warmup)
    return 1.0 / math.sqrt((step + timescale - warmup) / timescale)


def _min_lr_rate(lr: float, kw: dict) -> float:
    if kw.get("min_lr") is not None:
        return float(kw["min_lr"]) / lr
    return float(kw.get("min_lr_rate") or 0.0)


def _cosine_min_lr(step, warmup, total, lr, kw):
    if step < warmup:
        return _warmup(step, warmup)
    factor = 0.5 * (1.0 + math.cos(math.pi * float(kw.get("num_cycles", 0.5)) * 2.0 * _progress(step, warmup, total)))
    rate = _min_lr_rate(lr, kw)
    return max(0, factor * (1 - rate) + rate)


def _cosine_warmup_min_lr(step, warmup, total, lr, kw):
    """Warmup reaches the full rate one step earlier, and the cosine starts one step later, than cosine_with_min_lr."""
    step, warmup, total = float(step), float(warmup), float(total)
    if step < warmup:
        start = kw.get("warmup_lr_rate")
        if start is None:
            return (step + 1.0) / max(1.0, warmup)
        return float(start) + (1.0 - float(start)) * step / max(1, warmup - 1)
    progress = (step - warmup + 1.0) / max(1.0, total - warmup)
    factor = 0.5 * (1.0 + math.cos(math.pi * float(kw.get("num_cycles", 0.5)) * 2.0 * progress))
    rate = _min_lr_rate(lr, kw)
    return max(0, factor * (1 - rate) + rate)


def _wsd_phases(warmup: int, total: int, kw: dict) -> tuple[int, int]:
    decay = int(kw.get("num_decay_steps") or 0)
    stable = kw.get("num_stable_steps")
    return (total - warmup - decay if stable is None else int(stable)), decay


def _rise(kind: str, progress: float) -> float:
    if kind == "linear":
        return progress
    if kind == "cosine":
        return 0.5 * (1.0 - math.cos(math.pi * progress))
    return 1.0 - math.sqrt(1.0 - progress)  # 1-sqrt


def _wsd(step, warmup, total, lr, kw):
    stable, decay = _wsd_phases(warmup, total, kw)
    floor = float(kw.get("min_lr_ratio", 0))
    if step < warmup:
        factor = _rise(kw.get("warmup_type", "linear"), float(step) / float(max(1, warmup)))
        return max(0.0, factor * (1.0 - floor) + floor)
    if step < warmup + stable:
        return 1.0
    if step < warmup + stable + decay:
        progress = float(step - warmup - stable) / float(max(1, decay))
        kind = kw.get("decay_type", "cosine")
        if kind == "cosine":
            factor = 0.5 * (1.0 + math.cos(math.pi * float(kw.get("num_cycles", 0.5)) * 2.0 * progress))
        else:
            factor = 1.0 - progress if kind == "linear" else 1.0 - math.sqrt(progress)
        return max(0.0, factor * (1.0 - floor) + floor)
    return floor


_FACTORS = {
    "linear": _linear, "cosine": _cosine, "cosine_with_restarts": _cosine_restarts, "polynomial": _polynomial,
    "constant": _constant, "constant_with_warmup": _constant_warmup, "inverse_sqrt": _inverse_sqrt,
    "cosine_with_min_lr": _cosine_min_lr, "cosine_warmup_with_min_lr": _cosine_warmup_min_lr, "warmup_stable_decay": _wsd,
}
