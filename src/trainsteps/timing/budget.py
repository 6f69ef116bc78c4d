"""Fitting a run into a wall-time budget (a SLURM --time limit): the max_steps whose learning-rate schedule ends
inside it, with a safety margin and a checkpoint cadence.

The steps are fitted at the rate's *slow* end (`step_seconds.high`), so the run ends in time even when it is as slow
as the rate allows; the figures at the expected rate are reported too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.timing.durations import Spoken
from trainsteps.timing.estimate import Interval, Rate, RunCounts, TimeEstimate, estimate

DEFAULT_MARGIN = 0.10
"""Share of the budget kept free (start-up, the final save, a slow node)."""
SAVES_PER_BUDGET = 10
"""Default checkpoint cadence: about ten checkpoints over the budget, so a kill loses at most a tenth of it."""


@dataclass(slots=True)
class BudgetFit:
    """The longest run that fits."""

    budget_seconds: float
    """The wall-time limit."""
    margin: float
    """Share of the budget kept free."""
    max_steps: int
    """Optimizer steps that fit at the slow end of the rate: set this as max_steps so the LR schedule ends in time."""
    save_steps: int
    """Save a checkpoint every this many steps (the cadence)."""
    eval_steps: int | None
    """Evaluate every this many steps (as given), or None."""
    estimate: TimeEstimate
    """The time of that run (prepare + steps + evaluations + saves)."""
    derivation: Derivation
    """How max_steps was found."""

    def to_dict(self, lang: str = "en") -> dict:
        return {"budget_seconds": self.budget_seconds, "margin": self.margin, "max_steps": self.max_steps,
                "save_steps": self.save_steps, "eval_steps": self.eval_steps,
                "time": self.estimate.to_dict(lang), "derivation": self.derivation.to_list(lang)}


def fit_budget(budget_seconds: float, rate: Rate, *, margin: float = DEFAULT_MARGIN, eval_steps: int | None = None,
               eval_seconds: Interval | None = None, save_seconds: Interval | None = None,
               prepare_seconds: Interval | None = None, save_every_seconds: float | None = None,
               step_limit: int | None = None, gpus: int | None = None) -> BudgetFit:
    """max_steps such that prepare + steps x t_high + evals x t_eval,high + saves x t_save,high <= budget x (1 - margin).

    `step_limit`: never more than this (e.g. the steps the data allows for the epochs asked)."""
    if not 0 <= margin < 1:
        raise InputError("time.error.margin", "time.hint.margin", value=margin)
    d = Derivation()
    usable = d.add("time_budget_usable", round(budget_seconds * (1 - margin), 3), "budget × (1 - margin)",
                   f"{budget_seconds:g} × (1 - {margin:g})", "time.why.budget", duration=Spoken(budget_seconds * (1 - margin)))
    t = rate.step_seconds.high
    fixed = prepare_seconds.high if prepare_seconds else 0.0
    cadence_seconds = save_every_seconds or budget_seconds / SAVES_PER_BUDGET
    save_k = max(1, int(cadence_seconds // t))
    d.add("time_save_steps", save_k, "floor(t_cadence / t_step,high)", f"floor({cadence_seconds:g} / {t:.4g})",
          "time.why.save_cadence", duration=Spoken(cadence_seconds))
    t_save = save_seconds.high if save_seconds else 0.0
    t_eval = eval_seconds.high if eval_seconds else 0.0

    def cost(steps: int) -> float:
        evals = steps // eval_steps if eval_steps else 0
        return fixed + steps * t + evals * t_eval + (steps // save_k + 1) * t_save

    high = max(1, int((usable - fixed) / t) + 1)
    low = 0
    while low < high:  # the largest step count whose cost fits
        mid = (low + high + 1) // 2
        if cost(mid) <= usable:
            low = mid
        else:
            high = mid - 1
    steps = low if step_limit is None else min(low, step_limit)
    if steps < 1:
        raise InputError("time.error.budget_too_small", "time.hint.budget_too_small",
                         budget=Spoken(budget_seconds), step=Spoken(t))
    d.add("time_budget_steps", steps, "max S: prepare + S × t_step,high + evals + saves <= usable",
          f"{fixed:g} + {steps:,} × {t:.4g} + ... <= {usable:g}", "time.why.budget_steps")
    counts = RunCounts(optimizer_steps=steps, eval_count=steps // eval_steps if eval_steps else 0,
                       save_count=steps // save_k + 1)
    result = estimate(counts, rate, eval_seconds=eval_seconds, save_seconds=save_seconds,
                      prepare_seconds=prepare_seconds, gpus=gpus)
    return BudgetFit(budget_seconds, margin, steps, save_k, eval_steps, result, d)


def epochs_for(steps: int, steps_per_epoch: float) -> float:
    """Epochs that `steps` optimizer steps cover (for the report)."""
    return math.floor(steps / steps_per_epoch * 1000) / 1000 if steps_per_epoch else 0.0
