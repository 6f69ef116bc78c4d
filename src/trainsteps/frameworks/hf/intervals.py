"""Warmup, and the steps where the Trainer logs, evaluates and saves (DefaultFlowCallback)."""

from __future__ import annotations

import math

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.releases import SAVE_BEST_NEEDS_METRIC, SAVE_BEST_REFUSED, Rules
from trainsteps.spec import RunSpec
from trainsteps.steps import Steps


def warmup_steps(d: Derivation, rules: Rules, max_steps: int, ratio: float | None, steps: float | None) -> int:
    if rules.warmup == "float_steps" and ratio is not None:
        raise InputError("hf.error.warmup_ratio_removed", "hf.hint.warmup_ratio_removed", version=rules.release)
    if rules.warmup == "steps_or_ratio":
        _check_warmup_steps(rules, steps)
        if steps and steps > 0:
            if steps != int(steps):
                return d.add("warmup_steps", steps, why="hf.warmup.fractional_steps")
            return d.add("warmup_steps", int(steps), why="hf.warmup.steps")
        ratio = ratio or 0.0
        return d.add("warmup_steps", math.ceil(max_steps * ratio), "ceil(M * warmup_ratio)", ("ceil({} * {})", max_steps, ratio), "hf.warmup.ratio")
    value = ratio if ratio is not None else (steps or 0)
    why = "hf.warmup.ratio_overrides" if ratio is not None else "hf.warmup.float"
    if value >= 1:
        return d.add("warmup_steps", int(value), "int(warmup_steps)", ("int({})", value), why)
    return d.add("warmup_steps", math.ceil(max_steps * value), "ceil(M * warmup_steps)", ("ceil({} * {})", max_steps, value), why)


def _check_warmup_steps(rules: Rules, steps: float | None) -> None:
    if rules.warmup_steps_check is None or not steps:
        return
    kind, framework_error = rules.warmup_steps_check
    refused = steps != int(steps) or (kind == "zero_or_above_one" and 0 < steps <= 1)
    if refused:
        raise InputError("hf.error.warmup_steps_int", "hf.hint.warmup_steps_int", version=rules.release,
                         value=f"{steps:g}", framework_error=framework_error)


def interval(d: Derivation, key: str, value: float, max_steps: int) -> int:
    """`*_steps` below 1 is a fraction of the planned steps, rounded up; above 1 it must be whole."""
    if value == 0 and key == "logging_steps":
        raise InputError("hf.error.interval_zero", "hf.hint.interval_zero", name=key, strategy="logging_strategy",
                         framework_error="ValueError: logging strategy steps requires non-zero --logging_steps")
    if value < 1:
        return d.add(key, math.ceil(max_steps * value), f"ceil(M * {key})", ("ceil({} * {})", max_steps, value), "hf.interval.ratio")
    if value != int(value):
        raise InputError("hf.error.interval_not_int", "hf.hint.interval_not_int", name=key, value=value)
    return d.add(key, int(value), why="hf.interval.given")


MAX_EVENTS = 5_000_000  # a list longer than this is a mistake in the settings, not a plan anyone reads


def multiples(every: int, up_to: int, start: int = 1, name: str = "logging_steps") -> Steps:
    """Multiples of `every` from `start` to `up_to`: the steps where an interval fires (none for 0: the Trainer skips it)."""
    if every <= 0:
        return Steps()
    first = max(every, math.ceil(start / every) * every)
    count = max(0, (up_to - first) // every + 1)
    if count > MAX_EVENTS:
        raise InputError("hf.error.too_many_events", "hf.hint.too_many_events", name=name, every=every, count=count, steps=up_to)
    return Steps.every(every, first, up_to)


def check_save_strategy(rules: Rules, spec: RunSpec) -> None:
    """`save_strategy="best"` exists from 4.47.0 and needs `metric_for_best_model` (the Trainer refuses otherwise)."""
    if spec.save_strategy != "best":
        return
    if rules.save_best == "refused":
        raise InputError("hf.error.save_best_refused", "hf.hint.save_best_refused", version=rules.release,
                         framework_error=SAVE_BEST_REFUSED)
    if not spec.metric_for_best_model:
        raise InputError("hf.error.save_best_metric", "hf.hint.save_best_metric", version=rules.release,
                         framework_error=SAVE_BEST_NEEDS_METRIC)


def best_saves(improving: str, eval_steps: Steps) -> Steps:
    """`save_strategy="best"`: a checkpoint at each evaluation that improves the best metric, and nowhere else.

    Which evaluations improve depends on the metric values, so the user says: `all` (an upper bound),
    `first` (the first evaluation always improves on a fresh run: the best metric starts at -inf / +inf),
    or the steps themselves.
    """
    choice = (improving or "all").strip().lower()
    if choice == "all":
        return eval_steps[:]
    if choice == "first":
        return eval_steps[:1]
    try:
        wanted = sorted({int(part) for part in choice.split(",") if part.strip()})
    except ValueError:
        raise InputError("hf.error.improving_evals", "hf.hint.improving_evals", value=improving) from None
    missing = [step for step in wanted if step not in eval_steps]
    if missing:
        raise InputError("hf.error.improving_evals_not_eval", "hf.hint.improving_evals_not_eval",
                         steps=", ".join(map(str, missing)), evals=_short_list(eval_steps))
    return Steps(wanted)


def _short_list(steps: list[int], most: int = 12) -> str:
    shown = ", ".join(map(str, steps[:most]))
    return shown + (", ..." if len(steps) > most else "") if steps else "none"
