"""Wrapper effects on the Trainer's own output that `RunSpec` cannot carry (e.g. ms-swift's sampler)."""

from __future__ import annotations


def adjust_schedule(imported, schedule):
    """Return the schedule as the wrapper's run will print it."""
    if imported.framework == "swift":
        from trainsteps.frameworks import swift

        return swift.restore_num_examples(imported, schedule)
    return schedule
