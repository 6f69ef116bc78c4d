"""RL trainers' timing lines: what one step costs, where its time goes, and the time left to the last step.

- verl / EasyR1 print `timing_s/<phase>:<seconds>` in each step's metric line (`timing_s/gen:262.4 - timing_s/ref:39.1 -
  ... - timing_s/step:728.3`); `timing_s/step` is the whole step, evaluation (`timing_s/testing`) included. A pasted line
  broken in two keeps its phases; with no `timing_s/step` the printed phases are summed, a lower bound.
- slime prints its perf dict (`perf 0: {'perf/rollout_time': 371.2, ...}`, `'perf/train_time'`, `'perf/step_time'`,
  older `'perf/total_train_time'`) once per rollout.

Nested timings (`timing_s/agent_loop/...`) and per-token rates are detail of a phase, not phases of their own.
"""

from __future__ import annotations

from trainsteps.patterns import lazy
from trainsteps.record import field, record

_VERL = lazy(r"timing_s/([A-Za-z_]+):\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w/])")
_SLIME = lazy(r"['\"]perf/([a-z_]+_time)['\"]:\s*(\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
_STEP_TOTALS = ("step", "step_time", "total_train_time")
_INSIDE = {"generate_sequences": "gen"}
"""A phase timed inside another printed phase: verl's rollout worker times `generate_sequences` and hands it back in
the batch's meta_info, within the trainer's own `gen` timer. It is no share of its own where its outer phase printed."""


@record
class RLTiming:
    """The phases of the last step that printed them, and every step's total."""

    phases: dict[str, float] = field(default_factory=dict)
    phases_step: int | None = None
    step_seconds: list[float] = field(default_factory=list)
    line: int | None = None
    source: str | None = None
    """`verl` (timing_s/*) or `slime` (perf/*)."""
    totals_source: str | None = None
    """The trainer of the first step total read: a post that sets a verl run's `timing_s/step` beside a slime run's
    `perf/total_train_time` compares two runs, whose steps are never one median; the other trainer's lines are left."""

    def feed(self, line: str, line_no: int, step: int | None, new_step: bool) -> None:
        if "timing_s/" not in line and "perf/" not in line:
            return
        found = [(m.group(1), float(m.group(2)), "verl") for m in _VERL.finditer(line)]
        found += [(m.group(1), float(m.group(2)), "slime") for m in _SLIME.finditer(line)]
        if self.totals_source is not None:  # another trainer's timings in the same text are another run's
            found = [f for f in found if f[2] == self.totals_source]
        if not found:
            return
        if new_step or step != self.phases_step:  # a new step's line: its phases replace the last step's
            self.phases = {}
            self.phases_step = step
        for name, seconds, source in found:
            if name in _STEP_TOTALS:
                self.totals_source = source
                self.step_seconds.append(seconds)
            self.phases[name] = seconds
            self.source = source
        self.line = line_no

    def found(self) -> bool:
        return bool(self.phases)

    def total_of_last_step(self) -> tuple[float, bool] | None:
        """(seconds, exact): the last step's own total, else the sum of its printed phases (a lower bound)."""
        for name in _STEP_TOTALS:
            if name in self.phases:
                return self.phases[name], True
        parts = [v for k, v in self._parts() if v > 0]
        return (sum(parts), False) if parts else None

    def _parts(self) -> list[tuple[str, float]]:
        """The step's phases, each counted once: no step total, and no phase inside another one printed."""
        return [(k, v) for k, v in self.phases.items() if k not in _STEP_TOTALS and _INSIDE.get(k) not in self.phases]

    def seconds_per_step(self) -> tuple[float, bool] | None:
        """The median of the steps' totals (a slow first step or an evaluation step does not set the rate alone)."""
        if self.step_seconds:
            from statistics import median  # loaded with the first step: `statistics` costs ~5 ms of start-up

            return median(self.step_seconds), True
        return self.total_of_last_step()

    def shares(self) -> list[tuple[str, float, float]]:
        """(phase, seconds, share of the step) for the last step, largest first; phases under 1% are left out."""
        total = self.total_of_last_step()
        if total is None or total[0] <= 0:
            return []
        rows = [(k, v, v / total[0]) for k, v in self._parts() if v > 0]
        if len(rows) < 2:  # one phase is the whole of what was printed: no share to tell
            return []
        return sorted([r for r in rows if r[2] >= 0.01], key=lambda r: -r[1])

    def to_dict(self) -> dict:
        rate = self.seconds_per_step()
        return {"source": self.source, "line": self.line, "step": self.phases_step,
                "seconds_per_step": None if rate is None else round(rate[0], 3),
                "exact": None if rate is None else rate[1], "steps_timed": len(self.step_seconds),
                "phases": {k: round(v, 3) for k, v in self.phases.items()},
                "shares": {k: round(share, 4) for k, _, share in self.shares()}}
