"""State shared by the line parsers while one input is read: the current run and numbers waiting for a banner."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainsteps.logs.observed import LogObservations, Reading, RunObservation


@dataclass(slots=True)
class ScanContext:
    file: str = "-"
    line_no: int = 0
    line: str = ""
    out: LogObservations = field(default_factory=LogObservations)
    current: RunObservation | None = None
    pending: dict[str, Reading] = field(default_factory=dict)
    """Wrapper numbers seen before the next banner (they describe the run about to start)."""
    pending_notice: str | None = None
    """Level of a `max_steps is given` notice waiting for its banner."""
    pending_trainer_lines: int = 0
    in_other_block: bool = False
    """Inside an `***** Running Evaluation/Prediction *****` block, whose `Num examples` is not the training set."""

    def reading(self, value, source_line: int | None = None, note: str | None = None, **params) -> Reading:
        return Reading(value, self.line_no, self.line[:200].strip(), source_line, note, params)

    def start_run(self, kind: str) -> RunObservation:
        run = RunObservation(kind=kind, file=self.file)
        run.wrapper.update(self.pending)
        self.pending.clear()
        if self.pending_notice is not None:
            run.max_steps_notice_seen = True
            run.level_of_max_steps_notice = self.pending_notice or None
            self.pending_notice = None
        run.other_trainer_lines = self.pending_trainer_lines
        self.pending_trainer_lines = 0
        self.out.runs.append(run)
        self.current = run
        self.in_other_block = False
        return run

    def wrapper_value(self, key: str, reading: Reading) -> None:
        """A wrapper's number: it belongs to the next banner, or to the current run if no banner follows."""
        self.pending[key] = reading

    def finish(self) -> None:
        """End of input: numbers still waiting go to the last run (a banner printed before them),
        or make a run of their own when the input has no banner (e.g. only Axolotl's lines)."""
        if self.pending and not any(r.file == self.file for r in self.out.runs):
            self.start_run("wrapper")
            return
        if self.pending and self.out.runs:
            last = [r for r in self.out.runs if r.file == self.file]
            if last:
                for key, reading in self.pending.items():
                    last[-1].wrapper.setdefault(key, reading)
        self.pending.clear()
