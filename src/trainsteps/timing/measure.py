"""Measuring the rate while a run goes: the clock behind the callbacks' ETA (and any reader of timed events).

`StepClock` is fed optimizer-step ends and pauses (evaluations, checkpoint saves) with timestamps the caller takes,
so it is pure and testable with a fake clock. Compared with a progress bar's extrapolation it:

- skips the first `warmup_steps` steps after every (re)start (compilation, autotuning, the first dataloader fill),
  and says "unknown" (`rate()` is None) until `min_steps` more steps are measured;
- takes evaluation and save wall time out of the step rate, and adds the evaluations and saves still ahead at their
  own measured cost (the first evaluation is dropped from that mean once there are others: it pays for warm-up);
- re-bases on a resume: only steps run in this process count, so a resumed run does not divide the new elapsed time
  by the old step count.
"""

from __future__ import annotations

from trainsteps.timing.estimate import Interval, Rate, TimeEstimate, remaining

RECENT_FRACTION = 0.25
"""The newest part of the measured steps that is compared with the whole: a drift widens the interval."""
SPREAD = (0.97, 1.05)
"""Widening of the (overall, recent) rate pair: the rest of the run may be a little faster or slower than measured."""


class StepClock:
    """Seconds per optimizer step with warm-up steps and pauses taken out."""

    def __init__(self, warmup_steps: int = 2, min_steps: int = 3):
        """
        warmup_steps: steps after a (re)start that are not measured (compile, autotune, the first dataloader fill).
        min_steps: measured steps needed before a rate (and an ETA) is given.
        """
        self.warmup_steps = max(0, int(warmup_steps))
        self.min_steps = max(1, int(min_steps))
        self.pauses: dict[str, list[float]] = {"eval": [], "save": []}
        """Wall seconds of every evaluation and save seen (this process)."""
        self.rebase(0, 0.0)

    def rebase(self, step: int, now: float) -> None:
        """Start measuring from `step` (0 at train begin, the checkpoint's step after a resume)."""
        self.base_step = int(step)
        self.last_step = int(step)
        self._warm: tuple[int, float, float] | None = None  # (step, time, paused seconds) when warm-up ended
        self._paused = 0.0
        self._marks: list[tuple[int, float]] = []  # (step, active seconds since warm) at each step end
        if self.warmup_steps == 0:
            self._warm = (self.base_step, now, 0.0)

    def step(self, step: int, now: float) -> None:
        """An optimizer step ended at `now` (the framework's global step counter)."""
        self.last_step = int(step)
        if self._warm is None:
            if step - self.base_step >= self.warmup_steps:
                self._warm = (int(step), now, self._paused)
            return
        warm_step, warm_time, warm_paused = self._warm
        self._marks.append((int(step), now - warm_time - (self._paused - warm_paused)))

    def pause(self, kind: str, seconds: float) -> None:
        """An evaluation (`eval`) or checkpoint save (`save`) took `seconds` of wall time between two steps."""
        seconds = max(0.0, float(seconds))
        self._paused += seconds
        self.pauses.setdefault(kind, []).append(seconds)

    def pause_extra(self, seconds: float) -> None:
        """More wall time of the pause just recorded (its tail: writing files, logging)."""
        self._paused += max(0.0, float(seconds))

    @property
    def measured_steps(self) -> int:
        return self._marks[-1][0] - self._warm[0] if self._marks else 0

    def rate(self, tokens_per_step: float | None = None) -> Rate | None:
        """Seconds per step since warm-up, pauses excluded; None ("unknown") until `min_steps` steps are measured."""
        steps = self.measured_steps
        if steps < self.min_steps or self._marks[-1][1] <= 0:
            return None
        last_step, active = self._marks[-1]
        overall = active / steps
        cut = last_step - max(1, int(steps * RECENT_FRACTION))
        earlier = next(((s, a) for s, a in reversed(self._marks) if s <= cut), (self._warm[0], 0.0))
        recent = (active - earlier[1]) / (last_step - earlier[0]) if last_step > earlier[0] else overall
        low, high = min(overall, recent) * SPREAD[0], max(overall, recent) * SPREAD[1]
        assumptions = (("time.assume.warmup_skipped", {"steps": self.warmup_steps}),)
        if self._paused:
            assumptions += (("time.assume.pauses_removed", {"seconds": round(self._paused, 1)}),)
        return Rate(Interval(low, overall, high), "log", f"{steps} steps measured after step {self._warm[0]}",
                    tokens_per_step=tokens_per_step, assumptions=assumptions)

    def event_seconds(self, kind: str) -> Interval | None:
        """Seconds one evaluation/save takes: the mean (the first dropped when others follow), min to max."""
        seen = self.pauses.get(kind) or []
        if not seen:
            return None
        used = seen[1:] if len(seen) > 1 else seen
        return Interval(min(used), sum(used) / len(used), max(used))

    def eta(self, final_step: int, evals_left: int = 0, saves_left: int = 0,
            tokens_per_step: float | None = None) -> TimeEstimate | None:
        """Remaining time to `final_step`, with the evaluations and saves still ahead; None until warmed up.
        Evaluations/saves ahead whose cost has not been seen yet are named in `left_out`."""
        rate = self.rate(tokens_per_step)
        if rate is None:
            return None
        return remaining(rate, self.last_step, final_step, evals_left=evals_left, saves_left=saves_left,
                         eval_seconds=self.event_seconds("eval"), save_seconds=self.event_seconds("save"))
