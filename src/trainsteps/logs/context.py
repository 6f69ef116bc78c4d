"""State shared by the line parsers while one input is read: the current run and numbers waiting for a banner."""

from __future__ import annotations

from trainsteps.logs.observed import LogObservations, Reading, RunObservation
from trainsteps.record import field, record


@record
class ScanContext:
    file: str = "-"
    line_no: int = 0
    line: str = ""
    raw_line: str | None = None
    """The line as written, when reading it changed it (full-width `，` read as `,`): what a quote shows."""
    out: LogObservations = field(default_factory=LogObservations)
    current: RunObservation | None = None
    pending: dict[str, Reading] = field(default_factory=dict)
    """Wrapper numbers seen before the next banner (they describe the run about to start)."""
    pending_notice: str | None = None
    """Level of a `max_steps is given` notice waiting for its banner."""
    pending_trainer_lines: int = 0
    in_other_block: bool = False
    """Inside an `***** Running Evaluation/Prediction *****` block, whose `Num examples` is not the training set."""
    loose: RunObservation | None = None
    """Progress lines with no banner before them: a run of its own if the input never shows a banner."""
    evaluation_next: bool = False
    """`***** Running Evaluation *****` was printed and no training bar was drawn since: a new bar is the evaluation's."""
    declared_totals: dict[str, int] = field(default_factory=dict)
    """Totals a loop declared before its step lines, by unit (`step`, `iter`): logs/step_lines.py."""
    metrics_block: str | None = None
    """Inside `***** train metrics *****` (`train`) or `***** eval metrics *****` (`eval`)."""
    last_bar_step: int | None = None
    """The position of the last progress bar drawn: the step a loss or eval dict that follows belongs to."""
    settings: dict[str, Reading] = field(default_factory=dict)
    """Settings printed as arguments, waiting for the run they describe."""
    transformers_version: Reading | None = None
    """A transformers release printed anywhere in this input."""
    pip_show_transformers: bool = False
    repeats: dict = field(default_factory=dict)
    """How often each banner key was printed again for the current run (other nodes or ranks)."""
    copying: bool = False
    """Reading a banner that repeats the current run's (another node printed it)."""
    train_dataset_line: int | None = None
    slurm_nodes: int | None = None
    """`#SBATCH --nodes` of a batch script, for the `--gres=gpu:N` that follows it."""
    split_off: list = field(default_factory=list)
    """Runs of progress lines closed because a loop's step counter fell back (several runs in one input, no banner)."""
    counted_since: int = 0
    """The line where the last run closed by a fallen-back counter had its last step: numbers before it were that run's."""
    last_counted_step: int | None = None
    """The step of the last step line read (logs/step_lines.py): a much lower one starts another run."""
    shell_vars: dict = field(default_factory=dict)
    """A launch script's numeric variables (`NNODES=4`), for the `$NNODES` of the command that follows."""
    command: str = ""
    """The lines of a shell command continued with a trailing backslash, read so far."""
    open_dict: str | None = None
    """A metric dict whose line ended before its `}` (a terminal wrapped it): read with the line that closes it."""

    def reading(self, value, source_line: int | None = None, note: str | None = None, **params) -> Reading:
        return Reading(value, self.line_no, self.line[:200].strip(), source_line, note, params)

    def start_run(self, kind: str) -> RunObservation:
        run = RunObservation(kind=kind, file=self.file, first_line=self.line_no)
        run.wrapper.update(self.pending)
        self.pending.clear()
        run.settings.update(self.settings)
        self.settings.clear()
        self.loose = None
        self.repeats = {}
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

    def start_over(self, step: int) -> RunObservation:
        """A loop's step counter fell back to the start of another run with no banner between them: the progress read
        so far is a run of its own, with the wrapper numbers printed before its last step line."""
        old = self.loose
        if old is None:
            return self._loose_run()
        last = old.last_step.line if old.last_step is not None else self.line_no
        old.wrapper.update({key: reading for key, reading in self.pending.items() if reading.line <= last})
        self.out.runs.append(old)
        self.split_off.append(old)
        self.counted_since = last
        self.loose = None
        run = self._loose_run()
        before = old.last_step.value if old.last_step is not None else 0
        run.notes.append(("explain.note.counter_fell_back", {"line": self.line_no, "before": f"{before:,}", "step": f"{step:,}"}))
        return run

    def lend_pending(self, run: RunObservation) -> None:
        """At a loose run's first step line, the wrapper numbers printed before it since the run before it ended (its
        own launch command): a later command of another run pasted after it replaces them in `pending`."""
        run.wrapper.update({key: reading for key, reading in self.pending.items()
                            if reading.line > self.counted_since or run.elsewhere(reading)})

    def _loose_run(self) -> RunObservation:
        if self.loose is None:
            self.loose = RunObservation(kind="progress", file=self.file, first_line=self.line_no)
        return self.loose

    def wrapper_value(self, key: str, reading: Reading) -> None:
        """A wrapper's number: it belongs to the next banner, or to the current run if no banner follows."""
        self.pending[key] = reading

    def finish(self) -> None:
        """End of input: numbers still waiting go to the last run (a banner printed before them),
        or make a run of their own when the input has no banner (e.g. only Axolotl's lines, or only progress lines)."""
        mine = [r for r in self.out.runs if r.file == self.file]
        crashed_at_start = self.loose is not None and self.loose.progress.stop is not None and bool(self.settings)
        banner_runs = [r for r in mine if not any(r is split for split in self.split_off)]
        if not banner_runs and self.loose is not None and (self.loose.progress.has_training() or crashed_at_start):
            # progress lines with no banner; or a launch command and the error it stopped with before any step
            run = self.loose
            run.wrapper.update(self.pending)
            run.settings.update(self.settings)
            self.pending.clear()
            self.out.runs.append(run)
            mine = [*mine, run]
        elif mine and self.settings:
            for key, reading in self.settings.items():
                mine[-1].settings.setdefault(key, reading)
        if self.transformers_version is not None:
            for run in mine:
                if run.transformers_version is None:
                    run.transformers_version = self.transformers_version
        if self.transformers_version is not None and not mine:  # a model card or env report beside the log
            self.out.state("transformers_version", self.transformers_version, self.file)
        if self.pending and not mine:
            self.start_run("wrapper").transformers_version = self.transformers_version
            return
        if self.pending and self.out.runs:
            last = [r for r in self.out.runs if r.file == self.file]
            if last:
                for key, reading in self.pending.items():
                    last[-1].wrapper.setdefault(key, reading)
        self.pending.clear()
