"""`solve`: the max_steps that meets a target (epochs, examples or tokens), what a max_steps covers,
and the batch layouts that reach a global batch.

Pure functions over the plan engine: every candidate max_steps is planned with `trainsteps.plan`
for the release asked for, so release differences (rounding, early stops, stream sharding) are
the engine's, never re-derived here. Coverage grows with max_steps, so the answer is found by
doubling then bisecting: the least max_steps that reaches the target (ceil) and the one below it
(floor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.schedule import Schedule, Trap
from trainsteps.spec import RunSpec

TARGETS = ("epochs", "examples", "tokens")
_LIMIT = 1 << 40  # no real run has more optimizer steps; beyond it the target is unreachable


@dataclass(slots=True)
class Coverage:
    """What one value of max_steps really covers."""

    max_steps: int
    """The max_steps set."""
    optimizer_steps: int
    """Optimizer steps the loop really takes."""
    samples_seen: int
    """Rows fed to the model, all ranks."""
    epochs: float | None
    """Passes over the data: the loop's epoch at the end (map-style) or rows fed / rows per pass (stream)."""
    tokens_seen: int | None
    """Rows fed x seq_length, for packed data."""
    logged_epoch: float | None
    """The `epoch` value the Trainer itself logs at the end."""
    warnings: list[Trap] = field(default_factory=list)

    def to_dict(self, lang: str = "en") -> dict:
        return {
            "max_steps": self.max_steps,
            "optimizer_steps": self.optimizer_steps,
            "samples_seen": self.samples_seen,
            "epochs": self.epochs,
            "tokens_seen": self.tokens_seen,
            "logged_epoch": self.logged_epoch,
            "warnings": [t.to_dict(lang) for t in self.warnings],
        }


@dataclass(slots=True)
class Solution:
    """The max_steps to set for a target, with both roundings and what each covers."""

    target: str
    """`epochs`, `examples` or `tokens`."""
    value: float
    """The target amount."""
    streaming: bool
    version: str
    """transformers release the answer holds for."""
    total_batch: int
    """Rows per optimizer step over all ranks (bs x GA x ranks)."""
    ceil: Coverage
    """The least max_steps that reaches the target."""
    floor: Coverage | None
    """The greatest max_steps that stays at or below the target (None when even 1 step overshoots)."""
    exact: bool
    """The ceil choice meets the target exactly."""
    by_epochs: Coverage | None = None
    """Map-style epochs target: what `num_train_epochs=E` itself gives, for comparison."""
    derivation: Derivation = field(default_factory=Derivation)

    def recommended(self) -> Coverage:
        return self.ceil

    def to_dict(self, lang: str = "en") -> dict:
        return {
            "target": {"kind": self.target, "value": self.value},
            "streaming": self.streaming,
            "transformers": self.version,
            "total_train_batch_size": self.total_batch,
            "exact": self.exact,
            "max_steps": self.ceil.max_steps,
            "ceil": self.ceil.to_dict(lang),
            "floor": self.floor.to_dict(lang) if self.floor else None,
            "num_train_epochs_instead": self.by_epochs.to_dict(lang) if self.by_epochs else None,
            "derivation": self.derivation.to_list(lang),
        }


_MAX_PASSES = 1_000_000  # the loop model walks pass by pass; beyond this an answer would take minutes


def coverage(spec: RunSpec, max_steps: int) -> Coverage:
    """Plan `spec` with this max_steps and read what it covers."""
    _refuse_too_many_passes(spec, max_steps)
    schedule = _plan(replace(spec, max_steps=max_steps))
    _refuse_endless(schedule)
    return _coverage_of(spec, schedule, max_steps)


def _refuse_too_many_passes(spec: RunSpec, max_steps: int) -> None:
    rows = spec.num_examples or (spec.dataset_tokens // spec.seq_length if spec.dataset_tokens and spec.seq_length else None)
    if not rows:
        return
    per_step = spec.per_device_train_batch_size * spec.gradient_accumulation_steps * spec.world_size
    passes = max_steps * per_step / rows
    if passes > _MAX_PASSES:
        raise InputError("solve.error.too_many_passes", "solve.hint.too_many_passes", passes=f"{passes:.3g}", limit=f"{_MAX_PASSES:,}")


def _coverage_of(spec: RunSpec, s: Schedule, max_steps: int) -> Coverage:
    r = s.run
    epochs = r.equivalent_epochs if spec.streaming else r.epochs_completed
    tokens = r.samples_seen * spec.seq_length if spec.seq_length and r.samples_seen is not None else None
    return Coverage(max_steps, r.optimizer_steps, r.samples_seen, epochs, tokens, r.epochs_completed, list(s.warnings))


def _plan(spec: RunSpec) -> Schedule:
    from trainsteps.frameworks.hf import plan

    return plan(spec)


def _amount(target: str, c: Coverage) -> float:
    if target == "epochs":
        return c.epochs
    if target == "tokens":
        return c.tokens_seen
    return c.samples_seen


def check_target(spec: RunSpec, target: str, value: float) -> None:
    """Refuse targets that cannot be computed, with one clear message each."""
    if target not in TARGETS:
        raise InputError("solve.error.target_kind", "solve.hint.target", kind=target)
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise InputError("solve.error.target_positive", "solve.hint.target", kind=target, value=value)
    if target == "tokens" and not spec.seq_length:
        raise InputError("solve.error.tokens_need_length", "solve.hint.tokens_need_length")
    if target == "epochs" and spec.num_examples is None and spec.dataset_tokens is None:
        raise InputError("solve.error.epochs_need_size", "solve.hint.epochs_need_size")


def solve(spec: RunSpec, target: str, value: float) -> Solution:
    """The max_steps that covers `value` epochs / examples / tokens under `spec` (whose max_steps is ignored)."""
    check_target(spec, target, value)
    d = Derivation()
    probe = _plan(replace(spec, max_steps=max(spec.max_steps, 1) if spec.streaming else spec.max_steps))
    total = probe.derivation["total_train_batch_size"].value
    d.given("total_train_batch_size", total, "solve.total_batch")
    _refuse_endless(probe)
    rows = _target_rows(d, spec, target, value, probe)
    guess = d.add("max_steps_estimate", max(1, math.ceil(rows / total)), "ceil(target rows / total batch)",
                  f"ceil({_num(rows)} / {total})", "solve.estimate")
    hi = _least_reaching(spec, target, value, guess)
    ceil_c = coverage(spec, hi)
    exact = math.isclose(_amount(target, ceil_c), value, rel_tol=0, abs_tol=1e-9)
    floor_c = None if exact or hi == 1 else coverage(spec, hi - 1)
    d.add("max_steps_ceil", hi, "min S: covered(S) >= target", f"covered({hi}) = {_num(_amount(target, ceil_c))}", "solve.ceil")
    if floor_c:
        d.add("max_steps_floor", hi - 1, "S_ceil - 1", f"covered({hi - 1}) = {_num(_amount(target, floor_c))}", "solve.floor")
    by_epochs = None
    if target == "epochs" and not spec.streaming:
        s = _plan(replace(spec, max_steps=-1, num_train_epochs=float(value)))
        by_epochs = _coverage_of(spec, s, s.run.max_steps)
    return Solution(target, value, spec.streaming, probe.version, total, ceil_c, floor_c, exact, by_epochs, d)


def _refuse_endless(s: Schedule) -> None:
    """A loop that never takes an optimizer step covers nothing, whatever max_steps is."""
    trap = next((t for t in s.warnings if t.code == "HF_STREAM_NEVER_ENDS"), None)
    if trap is not None:
        raise InputError("solve.error.never_steps", "solve.hint.never_steps", **trap.params)
    if s.run.optimizer_steps == 0 and s.run.max_steps > 0:
        batches = s.run.batches_per_epoch if s.run.batches_per_epoch is not None else 0
        raise InputError("solve.error.never_steps", "solve.hint.never_steps", batches=batches,
                         ga=s.inputs.get("gradient_accumulation_steps"))


def _target_rows(d: Derivation, spec: RunSpec, target: str, value: float, probe: Schedule) -> float:
    """The target in rows fed, for the first estimate."""
    if target == "examples":
        return d.given("target_rows", value, "solve.target.examples")
    if target == "tokens":
        return d.add("target_rows", value / spec.seq_length, "T / seq_length", f"{_num(value)} / {spec.seq_length}", "solve.target.tokens")
    if spec.streaming:
        n = probe.derivation["stream_rows"].value
        return d.add("target_rows", value * n, "E x N", f"{_num(value)} x {n}", "solve.target.epochs")
    per_epoch = probe.run.samples_per_epoch
    return d.add("target_rows", value * per_epoch, "E x rows per epoch", f"{_num(value)} x {per_epoch}", "solve.target.epochs_map")


def _least_reaching(spec: RunSpec, target: str, value: float, guess: int) -> int:
    """The least max_steps whose coverage reaches `value` (coverage never shrinks as max_steps grows)."""
    lo, hi = 0, guess  # invariant: covered(lo) < value (lo = 0 covers nothing), covered(hi) unknown
    while _amount(target, coverage(spec, hi)) < value - 1e-9:
        lo, hi = hi, hi * 2
        if hi > _LIMIT:
            raise InputError("solve.error.unreachable", "solve.hint.unreachable", kind=target, value=_num(value))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _amount(target, coverage(spec, mid)) >= value - 1e-9:
            hi = mid
        else:
            lo = mid
    return hi


def covers(spec: RunSpec, max_steps: int) -> tuple[Coverage, Schedule]:
    """The inverse question: what `max_steps` covers (epochs, examples, tokens)."""
    if not isinstance(max_steps, int) or max_steps < 1:
        raise InputError("input.positive_int", "input.hint.positive_int", name="max_steps", value=max_steps)
    _refuse_too_many_passes(spec, max_steps)
    s = _plan(replace(spec, max_steps=max_steps))
    _refuse_endless(s)
    return _coverage_of(spec, s, max_steps), s


# --- batch layouts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    """One way to reach a global batch."""

    per_device_train_batch_size: int
    gradient_accumulation_steps: int
    world_size: int

    @property
    def global_batch(self) -> int:
        return self.per_device_train_batch_size * self.gradient_accumulation_steps * self.world_size

    def to_dict(self) -> dict:
        return {"per_device_train_batch_size": self.per_device_train_batch_size,
                "gradient_accumulation_steps": self.gradient_accumulation_steps,
                "world_size": self.world_size, "global_batch": self.global_batch}


@dataclass(slots=True)
class Layouts:
    """Every per-device batch x accumulation pair for a global batch on a number of ranks."""

    global_batch: int
    world_size: int
    exact: list[Layout]
    """Pairs that reach the global batch exactly, largest per-device batch first."""
    nearest: list[Layout]
    """When none is exact: the pairs of the nearest reachable global batches below and above."""
    max_per_device: int | None = None

    def to_dict(self) -> dict:
        return {"global_batch": self.global_batch, "world_size": self.world_size, "exact": [x.to_dict() for x in self.exact],
                "nearest": [x.to_dict() for x in self.nearest], "max_per_device_batch": self.max_per_device}


def layouts(global_batch: int, world_size: int, max_per_device: int | None = None) -> Layouts:
    """bs x GA x W == global_batch, every way; the nearest global batches when it cannot be met."""
    for name, value in (("global_batch", global_batch), ("world_size", world_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError("input.positive_int", "input.hint.positive_int", name=name, value=value)
    if max_per_device is not None and max_per_device < 1:
        raise InputError("input.positive_int", "input.hint.positive_int", name="max_per_device_batch", value=max_per_device)
    if global_batch > _LARGEST_GLOBAL_BATCH:
        raise InputError("input.too_large", "input.hint.too_large", name="global_batch", value=global_batch, limit=_LARGEST_GLOBAL_BATCH)
    exact = _pairs(global_batch // world_size, world_size, max_per_device) if global_batch % world_size == 0 else []
    nearest: list[Layout] = []
    if not exact:
        below = global_batch // world_size
        for per_rank in sorted({below, below + 1} - {0}):
            nearest += _pairs(per_rank, world_size, max_per_device)
    return Layouts(global_batch, world_size, exact, nearest, max_per_device)


_LARGEST_GLOBAL_BATCH = 10**9  # rows per optimizer step; far beyond any run, and its divisors are found in a blink


def _pairs(per_rank: int, world: int, cap: int | None) -> list[Layout]:
    """Every bs dividing the rows per rank, largest first; divisors come in pairs, so only up to the square root is tried."""
    small = [d for d in range(1, math.isqrt(per_rank) + 1) if per_rank % d == 0]
    divisors = sorted({*small, *(per_rank // d for d in small)}, reverse=True)
    out = [Layout(bs, per_rank // bs, world) for bs in divisors]
    return [x for x in out if cap is None or x.per_device_train_batch_size <= cap]


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.4f}".rstrip("0").rstrip(".")
