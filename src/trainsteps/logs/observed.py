"""What a log says, before any inference: numbers exactly as printed, with where they were read."""

from __future__ import annotations

from trainsteps.record import field, record

# Banner quantities, keyed by the names used throughout trainsteps.logs (and frameworks/hf/log_lines.OFFSETS).
BANNER_KEYS = ("num_examples", "num_epochs", "update_steps_per_epoch", "per_device_batch", "dataparallel_batch",
               "total_batch", "grad_accum", "max_steps", "trainable_parameters")


@record
class Reading:
    """One number read from the log."""

    value: int | float
    """The number."""
    line: int
    """1-based line of the input it was read from (per file)."""
    text: str
    """The line as read (shortened), for the report."""
    source_line: int | None = None
    """The `trainer.py:NNNN` (or other file:line) of the logger prefix, when the log shows one."""
    note: str | None = None
    """Message id of a remark about the reading (e.g. text glued after the number)."""
    note_params: dict = field(default_factory=dict)
    file: str | None = None
    """Set when the number was read in another file than the run's (a model card or launch script beside a log)."""

    def to_dict(self) -> dict:
        out = {"value": self.value, "line": self.line, "text": self.text}
        if self.file is not None:
            out["file"] = self.file
        if self.source_line is not None:
            out["source_line"] = self.source_line
        if self.note:
            out["note"] = self.note
        return out


@record
class BarTrack:
    """One progress bar (one `total`) as it was redrawn: tqdm, notebook, ms-swift, Lightning."""

    total: int
    n: int = 0
    """The last position drawn."""
    line: int = 0
    text: str = ""
    count: int = 0
    """How many times it was drawn."""
    labelled: bool = False
    """It carried a description (`Train:`, `Epoch 3:`); plain bars without one are the Trainer's."""
    elapsed: float | None = None
    """Seconds tqdm shows as elapsed at the last draw."""
    remaining: float | None = None
    """Seconds tqdm shows as remaining at the last draw (its own ETA)."""
    first_n: int | None = None
    first_elapsed: float | None = None
    rates: list = field(default_factory=list)
    """(position, seconds per step) of the draws, thinned to at most RATE_SAMPLES."""
    kind: str = "bar"
    """`bar` (a progress bar), `iteration` (Megatron / nanotron iteration lines with their time per iteration) or
    `evaluation` (a bar first drawn after `***** Running Evaluation *****`: never the training loop's)."""


RATE_SAMPLES = 512


@record
class Progress:
    """Where a run stood and how fast it went, from any line that shows it (bars, loss/eval dicts, metrics blocks,
    LLaMA-Factory trainer_log.jsonl, ms-swift dicts), and how it ended."""

    bars: dict = field(default_factory=dict)
    """total -> BarTrack."""
    step_total: tuple | None = None
    """(step, total, line) from a line that states both (trainer_log.jsonl, ms-swift `global_step/max_steps`)."""
    epoch_points: list = field(default_factory=list)
    """(step, epoch, line): the first and the last point where both the step and the logged epoch are known."""
    max_epoch: float | None = None
    """The largest logged epoch (a stream re-read when it passes 1)."""
    elapsed_points: list = field(default_factory=list)
    """(step, elapsed seconds, framework's remaining seconds or None, line): LLaMA-Factory / ms-swift timing, first and last."""
    evals: int = 0
    """Evaluation results logged (eval dicts / eval metrics)."""
    eval_runtime: float = 0.0
    """Their summed `eval_runtime` seconds."""
    eval_steps: list = field(default_factory=list)
    """Training steps at which an evaluation was logged (when a bar showed the step), at most 64."""
    train_runtime: float | None = None
    train_steps_per_second: float | None = None
    train_samples_per_second: float | None = None
    metrics_line: int | None = None
    stop: tuple | None = None
    """(status, line, text): `crashed` or `interrupted`, from a traceback, `Killed`, CUDA OOM, an NCCL timeout, ..."""
    loss_dicts: int = 0
    step_lines: int = 0
    """Lines stating a global step with no total (DeepSpeed's `global_step=13120` timer lines)."""
    step_rates: list = field(default_factory=list)
    """(step, seconds per step) a loop's own step lines print when no total is known (`91.93 seconds/step`,
    `steps/sec: 0.1`), at most RATE_SAMPLES (every other one kept when full)."""
    jsonl_losses: int = 0
    """trainer_log.jsonl lines with a training loss."""
    jsonl_recent: dict = field(default_factory=dict)
    """step -> (loss, elapsed) of the last 8 such lines."""
    jsonl_repeats: int = 0
    """Such lines that repeat one of those steps: a second writer when some repeat has another loss."""
    jsonl_repeat_example: tuple | None = None
    """(step, loss before, loss, line): the first repeat whose losses differ (two trainings, not one line copied)."""
    reported_mfu: tuple | None = None
    """(framework, MFU as a fraction, line): the last MFU the framework printed itself (torchtitan's `mfu: 38.5%`,
    ms-swift's `'MFU': 0.385`), to set beside the one explain computes."""

    def has_training(self) -> bool:
        return bool(self.step_total or self.epoch_points or self.loss_dicts or self.train_runtime is not None
                    or bool(self.bars) or self.max_epoch is not None or self.step_lines > 0 or self.stop is not None)


@record
class RunObservation:
    """Everything read about one training run (one banner and what follows it)."""

    kind: str = "hf"
    """Who printed the banner: `hf` (transformers Trainer), `unsloth`, `trainer_state` (a trainer_state.json)."""
    file: str = "-"
    """The file it was read from (`-` for stdin or pasted text)."""
    banner: dict[str, Reading] = field(default_factory=dict)
    """Banner quantities (BANNER_KEYS) as printed."""
    header_line: int | None = None
    """Input line of `***** Running training *****`, if present."""
    header_source_line: int | None = None
    """trainer.py line of that header, if the logger prefix shows it."""
    header_date: str | None = None
    """The date the banner's header (or first) line is stamped with (`2021-05-20`): a release published later cannot
    have printed it."""
    banner_order: list[str] = field(default_factory=list)
    """Banner keys in the order they were read (to tell which lines a layout has)."""
    level_of_max_steps_notice: str | None = None
    """Level (INFO / WARNING) of `max_steps is given, it will override ...`; None if absent."""
    max_steps_notice_seen: bool = False
    other_trainer_lines: int = 0
    """Logger lines from transformers seen before the banner: shows whether the log is complete."""
    resume_global_step: int | None = None
    resume_epoch: int | None = None
    last_epoch: Reading | None = None
    """The last `epoch` value of a progress/metrics line."""
    last_step: Reading | None = None
    """The last global step seen (tqdm bar of the training loop, trainer_state, LLaMA-Factory's trainer_log)."""
    finished: bool = False
    """A line that ends a run was seen (see `finished_by`)."""
    finished_by: tuple | None = None
    """(evidence, line) of the finish: `runtime` (train_runtime), `completed` (Training completed), `jsonl_final`
    (LLaMA-Factory's final trainer_log.jsonl line, without a loss), `at_total` (a step at the total it counts to),
    `state` (train_runtime in trainer_state.json's log_history), `lightning`, `loop_end` (a custom loop's `End of training.`)."""
    runtime_steps: float | None = None
    """train_runtime x train_steps_per_second, when both are printed (an estimate of the final step)."""
    wrapper: dict[str, Reading] = field(default_factory=dict)
    """Numbers from a wrapper's own lines: axolotl_total_num_steps, axolotl_data_loader_len, axolotl_total_num_tokens,
    deepspeed_train_batch_size, deepspeed_micro_batch, deepspeed_grad_accum, raw_examples (LLaMA-Factory/datasets bars),
    unsloth_num_gpus, devices_hint."""
    notes: list[tuple[str, dict]] = field(default_factory=list)
    """(message id, params) remarks on how the log was read."""
    progress: Progress = field(default_factory=Progress)
    """Progress and timing lines that followed the banner (or that make a run of their own without one)."""
    first_line: int = 0
    """The input line where this run was first seen."""
    copies: int = 0
    """The same banner printed again by other nodes or ranks (one run, not several)."""
    transformers_version: Reading | None = None
    """A transformers version printed in the log (Unsloth's header, an env block, `transformers==`, config.json)."""
    rate_reader: object = None
    """The time model's reader of this run's timing lines (trainsteps.timing.log_rates.RateReader)."""
    settings: dict = field(default_factory=dict)
    """Settings printed as arguments (`per_device_train_batch_size=4`, ms-swift's args line), name -> Reading."""

    def finish(self, evidence: str, line: int) -> None:
        """Mark the run finished; the first evidence read on a line names it, a later line's evidence replaces it."""
        self.finished = True
        if self.finished_by is None or self.finished_by[1] != line:
            self.finished_by = (evidence, line)

    def elsewhere(self, reading: Reading) -> str | None:
        """The file a number was read in when it is not this run's (a model card or launch script beside the log)."""
        return reading.file if reading.file is not None and reading.file != self.file else None

    def value(self, key: str):
        reading = self.banner.get(key)
        return None if reading is None else reading.value

    def source_lines(self) -> dict[str, int]:
        lines = {k: r.source_line for k, r in self.banner.items() if r.source_line is not None}
        if self.header_source_line is not None:
            lines["header"] = self.header_source_line
        return lines

    def has_banner(self) -> bool:
        return bool(self.banner)

    def shows_timing(self, bar: BarTrack | None) -> bool:
        """A line of this run gave something to time it by: timing lines, a training bar (`bar`), step lines with a rate,
        elapsed times or train_runtime. logs/timing.py `measure` reads only these (and is loaded only when one is there)."""
        p = self.progress
        return self.rate_reader is not None or bar is not None or bool(p.step_rates or p.elapsed_points or p.train_runtime)

    def to_dict(self) -> dict:
        out: dict = {"kind": self.kind, "file": self.file,
                     "banner": {k: r.to_dict() for k, r in self.banner.items()}}
        if self.header_source_line is not None:
            out["header_source_line"] = self.header_source_line
        if self.max_steps_notice_seen:
            out["max_steps_notice"] = self.level_of_max_steps_notice or True
        if self.resume_global_step is not None:
            out["resume"] = {"global_step": self.resume_global_step, "epoch": self.resume_epoch}
        progress = {}
        if self.last_epoch is not None:
            progress["last_epoch"] = self.last_epoch.value
        if self.last_step is not None:
            progress["last_step"] = self.last_step.value
        if self.runtime_steps is not None:
            progress["runtime_x_steps_per_second"] = round(self.runtime_steps, 2)
        progress["finished"] = self.finished
        out["progress"] = progress
        if self.wrapper:
            out["wrapper"] = {k: r.to_dict() for k, r in self.wrapper.items()}
        return out


@record
class LogObservations:
    """All runs found in the input, in order."""

    runs: list[RunObservation] = field(default_factory=list)
    lines_read: int = 0
    bytes_read: int = 0
    files: list[str] = field(default_factory=list)
    topic: str | None = None
    """What a text with no run is about, for the hint: `stream` or `neox`."""
    problems: list = field(default_factory=list)
    """(file, message id, hint id, params) for inputs that are empty, compressed, binary or broken JSON (input_kind.py):
    the error explain gives when it finds no run."""
    also: object = None
    """A callable that sees every line as well (set by read_log)."""
    stated: dict[str, Reading] = field(default_factory=dict)
    """What the words around the logs state (logs/stated.py, logs/model_card.py): stated_gpus, stated_failure,
    card_* numbers of a Trainer model card, a transformers release printed in a file with no run. Lent to every run
    of every file once all are read (`lend_stated`), so a README or launch script beside a log informs its run."""

    def state(self, key: str, reading: Reading, file: str) -> None:
        reading.file = file
        self.stated[key] = reading

    def lend_stated(self) -> None:
        """Once every file is read: a launch script or model card read with a log has no run of its own (its numbers
        join the log's runs), and what the words state joins every run (a failure: only the last one)."""
        files_with_runs = {r.file for r in self.runs if r.kind != "wrapper" or r.progress.has_training()}
        if files_with_runs:
            for extra in [r for r in self.runs if r.kind == "wrapper" and r.file not in files_with_runs]:
                self.runs.remove(extra)
                for run in self.runs:
                    for key, reading in extra.wrapper.items():
                        reading.file = extra.file
                        run.wrapper.setdefault(key, reading)
                    if run.transformers_version is None and extra.transformers_version is not None:
                        extra.transformers_version.file = extra.file
                        run.transformers_version = extra.transformers_version
        for run in self.runs:
            for key, reading in self.stated.items():
                if key == "transformers_version":
                    if run.transformers_version is None:
                        run.transformers_version = reading
                elif key not in ("stated_failure", "stated_interruption") or run is self.runs[-1]:
                    run.wrapper.setdefault(key, reading)
