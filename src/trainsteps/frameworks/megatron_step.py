"""Megatron-LM's step batch-size schedule: `--step-batch-size-schedule "0:768 250B:1536 500B:3072"`.

The rules of megatron-core's `StepBatchsizeNumMicroBatchesCalculator`
(`megatron/core/num_microbatches_calculator.py`) and Megatron-LM's `update_train_iters` and training
loop (`megatron/training/training.py`), Megatron-LM commit 532ad926 (PR #4411, 2026-04-21), first
released in core_v0.18.0 and unchanged through core_v0.19.0. Checked against the real code in
tests/fixtures/pretrain/mcore_step.json.

Pure functions: no I/O. Every error carries Megatron's own text, verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

_SUFFIXES = (("T", 1_000_000_000_000), ("B", 1_000_000_000), ("M", 1_000_000), ("K", 1_000))


class StepScheduleError(ValueError):
    """Megatron stops on this schedule; `kind` is the Python exception it raises, the text its message."""

    def __init__(self, kind: str, text: str, iteration: int | None = None):
        super().__init__(text)
        self.kind = kind
        self.text = text
        self.iteration = iteration
        """Iterations completed when it stops (None: before training starts)."""


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """One THRESHOLD:BATCH pair after Megatron parsed it."""

    threshold: int
    """Consumed samples from which this batch applies (tokens // seq_length when thresholds are tokens)."""
    batch: int
    """Global batch size from that point on."""
    written: int
    """The threshold as written, suffix applied (tokens when a seq_length is given)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of training during which one schedule entry is in force."""

    entry: int
    """Index of the entry in the sorted schedule."""
    batch: int
    """Global batch size of every iteration of the stretch."""
    first_iteration: int
    """Iterations completed before the stretch starts (Megatron's 0-based `iteration`)."""
    consumed_at_start: int
    """Samples consumed when it starts (>= the entry's threshold: a batch may jump past it)."""
    iterations: int
    """Iterations run with this batch."""


def parse_number(text: str) -> int:
    """`_parse_numeric_value`: optional K/M/B/T suffix, then int(float(x) * multiplier)."""
    value = text.strip().upper()
    multiplier = 1
    for suffix, factor in _SUFFIXES:
        if value.endswith(suffix):
            multiplier, value = factor, value[:-1]
            break
    try:
        return int(float(value) * multiplier)  # float first, as Megatron does: "2.4B" -> 2399999999 or 2400000000 alike
    except (ValueError, OverflowError) as exc:
        raise StepScheduleError(type(exc).__name__, str(exc)) from None


def parse_schedule(text: str, seq_length: int | None) -> list[ScheduleEntry]:
    """`_parse_schedule`: pairs split on spaces or commas; thresholds in tokens become samples by floor division."""
    entries = []
    for item in text.strip().replace(",", " ").split():
        if ":" not in item:
            raise StepScheduleError("ValueError", f'Invalid schedule entry "{item}". Expected format: "THRESHOLD:BATCH_SIZE"')
        threshold_text, batch_text = item.split(":", 1)
        written = parse_number(threshold_text)
        batch = parse_number(batch_text)
        threshold = written // seq_length if seq_length is not None else written
        entries.append(ScheduleEntry(threshold, batch, written))
    entries.sort(key=lambda e: e.threshold)  # stable, as list.sort with a key
    return entries


def validate_schedule(entries: list[ScheduleEntry]) -> None:
    """`_validate_schedule`: at least one entry, the first at 0, strictly increasing, positive batches."""
    if not entries:
        raise StepScheduleError("AssertionError", "schedule must have at least one entry")
    if entries[0].threshold != 0:
        raise StepScheduleError("AssertionError", f"first schedule entry must have threshold 0, got {entries[0].threshold}")
    for before, after in zip(entries, entries[1:], strict=False):
        if after.threshold <= before.threshold:
            raise StepScheduleError("AssertionError", f"schedule thresholds must be strictly increasing, "
                                                      f"got {before.threshold} before {after.threshold}")
    for entry in entries:
        if entry.batch <= 0:
            raise StepScheduleError("AssertionError", f"batch size must be positive, got {entry.batch}")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def walk(entries: list[ScheduleEntry], train_samples: int | None = None, train_iters: int | None = None) -> list[Segment]:
    """The stretches a run goes through: until `train_samples` are consumed (Megatron's `update_train_iters`:
    iterate while consumed < train_samples, so the last batch may overshoot) or for `train_iters` iterations."""
    segments: list[Segment] = []
    consumed = iteration = 0
    for k, entry in enumerate(entries):
        done = consumed >= train_samples if train_samples is not None else iteration >= train_iters
        if done:
            break
        end = entries[k + 1].threshold if k + 1 < len(entries) else None
        if end is not None and consumed >= end:
            continue  # one batch jumped past this whole entry: it is never in force
        if train_samples is not None:
            limit = train_samples if end is None else min(end, train_samples)
            steps = _ceil_div(limit - consumed, entry.batch)
        else:
            steps = train_iters - iteration
            if end is not None:
                steps = min(steps, _ceil_div(end - consumed, entry.batch))
        segments.append(Segment(k, entry.batch, iteration, consumed, steps))
        consumed += steps * entry.batch
        iteration += steps
    return segments


def check_run(segments: list[Segment], first_batch: int, micro_batch_size: int, data_parallel_size: int) -> None:
    """What stops a run: the start-up check (batch too small for micro x dp), then in the training loop, at the
    first iteration of each stretch, a shrinking number of micro-batches and a batch not divisible by micro x dp."""
    unit = micro_batch_size * data_parallel_size
    if first_batch // unit < 1:
        raise StepScheduleError(
            "AssertionError",
            f"current global batch size ({first_batch}) is too small for micro_batch_size ({micro_batch_size}) * "
            f"data_parallel_size ({data_parallel_size}) = {unit}. The world size cannot accommodate the batch size. "
            f"This can happen when resuming with more GPUs than the current batch size schedule entry supports.")
    previous = first_batch // unit
    for segment in segments:
        micro = segment.batch // unit
        if micro != previous and segment.first_iteration != 0 and micro < previous:
            raise StepScheduleError("AssertionError", f"Number of microbatches should not decrease; going from {previous} to {micro}",
                                    segment.first_iteration)
        previous = micro
        if segment.batch % unit:
            raise StepScheduleError("AssertionError", f"current global batch size ({segment.batch}) is not divisible by "
                                                      f"micro_batch_size ({micro_batch_size}) * data_parallel_size ({data_parallel_size})",
                                    segment.first_iteration)


def calculator_lines(raw: str, entries: list[ScheduleEntry], seq_length: int | None, micro_batch_size: int,
                     data_parallel_size: int) -> list[str]:
    """What Megatron-LM prints (rank 0) when it sets the calculator up."""
    unit = micro_batch_size * data_parallel_size
    kind = "tokens" if seq_length else "samples"
    out = [f"> using step batch size schedule: {raw}", "> initializing step batch size schedule", f'  raw schedule string: "{raw}"',
           f"  seq_length: {seq_length} (thresholds interpreted as {kind})", f"  micro_batch_size: {micro_batch_size}",
           f"  data_parallel_size: {data_parallel_size}", f"step batch size schedule ({len(entries)} steps):"]
    for entry in entries:
        where = f"{entry.threshold * seq_length:,} tokens ({entry.threshold:,} samples)" if seq_length else f"{entry.threshold:,} samples"
        out.append(f"  >= {where} -> batch_size={entry.batch}, num_microbatches={entry.batch // unit}")
    return out
