"""Wrapper effects on the Trainer's own output that `RunSpec` cannot carry.

GRPO and ms-swift feed the Trainer a loader whose length is not ceil(N / batch) of the rows it prints; the
engine is planned with rows that give the wrapper's loader length, and the banner's `Num examples` is put back.
"""

from __future__ import annotations

import dataclasses


def adjust_schedule(imported, schedule):
    """Return the schedule as the wrapper's run will print it."""
    max_epochs = imported.settings.get("swift.max_epochs")
    if max_epochs is not None and schedule.run.epoch_end_steps:
        ends = schedule.run.epoch_end_steps
        stop = ends[min(int(max_epochs), len(ends)) - 1]
        note = ("SWIFT_MAX_EPOCHS_STOP", "swift.note.max_epochs_stop", {"max_epochs": max_epochs, "step": stop, "max_steps": schedule.run.max_steps})
        if note not in imported.notes:
            imported.notes.append(note)
    if imported.banner_num_examples is None or "Num examples" not in schedule.banner:
        return schedule
    shown = f"{imported.banner_num_examples:,}"
    banner = dict(schedule.banner, **{"Num examples": shown})
    lines = [f"  Num examples = {shown}" if line.strip().startswith("Num examples =") else line for line in schedule.banner_lines]
    return dataclasses.replace(schedule, banner=banner, banner_lines=lines)
