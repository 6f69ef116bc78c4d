"""Wrapper effects on the Trainer's own output that `RunSpec` cannot carry.

GRPO and ms-swift feed the Trainer a loader whose length is not ceil(N / batch) of the rows it prints; the
engine is planned with rows that give the wrapper's loader length, and the banner's `Num examples` is put back.
"""

from __future__ import annotations

import dataclasses

from trainsteps.steps import Steps


def adjust_schedule(imported, schedule):
    """Return the schedule as the wrapper's run will print it."""
    max_epochs = imported.settings.get("swift.max_epochs")
    if max_epochs is not None and schedule.run.epoch_end_steps:
        ends = schedule.run.epoch_end_steps
        stop = ends[min(int(max_epochs), len(ends)) - 1]
        note = ("SWIFT_MAX_EPOCHS_STOP", "swift.note.max_epochs_stop", {"max_epochs": max_epochs, "step": stop, "max_steps": schedule.run.max_steps})
        if note not in imported.notes:
            imported.notes.append(note)
        schedule = _stop_after_epochs(schedule, min(int(max_epochs), len(ends)))
    if imported.banner_num_examples is None or "Num examples" not in schedule.banner:
        return schedule
    shown = f"{imported.banner_num_examples:,}"
    banner = dict(schedule.banner, **{"Num examples": shown})
    lines = [f"  Num examples = {shown}" if line.strip().startswith("Num examples =") else line for line in schedule.banner_lines]
    return dataclasses.replace(schedule, banner=banner, banner_lines=lines)


def _stop_after_epochs(schedule, epochs: int):
    """ms-swift's --max_epochs ends the loop after that many epochs: the run facts stop there (the banner does not)."""
    run = schedule.run
    if epochs >= len(run.epoch_end_steps):
        return schedule
    stop = run.epoch_end_steps[epochs - 1]
    samples = run.samples_per_epoch * epochs if run.samples_per_epoch else run.samples_seen
    stopped = dataclasses.replace(
        run, optimizer_steps=stop, epoch_end_steps=run.epoch_end_steps[:epochs], epochs_completed=float(epochs),
        samples_seen=samples, log_steps=Steps.of(run.log_steps).up_to(stop), eval_steps=Steps.of(run.eval_steps).up_to(stop),
        save_steps=Steps.of(run.save_steps).up_to(stop),
        real_optimizer_updates=None if run.real_optimizer_updates is None else min(run.real_optimizer_updates, stop),
    )
    return dataclasses.replace(schedule, run=stopped)
