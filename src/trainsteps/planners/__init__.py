"""One dispatcher for `trainsteps plan`, whatever surface asks (command line, web page, Python API).

`dispatch(request)` picks the planner for a `PlanRequest` (`table.choose`), refuses every setting the user gave that
this planner does not use (one line naming the frameworks that would use it), counts `--data` where the planner takes
it (`data`), runs the planner (`hf`, `configs`, `pretrain`, `rl`), and attaches the time when a time setting was given
(`time`). What it returns only needs printing: an `Answer`.
"""

from __future__ import annotations

from trainsteps.planners.table import (  # noqa: F401 - the names every surface reads
    FRAMEWORKS,
    PLANNERS,
    PRETRAIN_FRAMEWORKS,
    RL_FRAMEWORKS,
    STACK_FRAMEWORKS,
    TIME,
    Answer,
    asks_time,
    choose,
    option_name,
    refuse_time_refiners,
    refuse_unused,
)


def dispatch(request) -> Answer:
    """Plan a request: choose, refuse what is unused, count the data, plan, attach the time."""
    import importlib

    from trainsteps.planners.data import counted_data

    planner = choose(request)
    refuse_unused(planner, request)
    counted = counted_data(request) if planner.counts_data else None
    module, function = planner.run.split(":")
    answer = getattr(importlib.import_module(module), function)(request, counted)
    if "time" not in answer.data and asks_time(request.settings):
        from trainsteps.planners.time import attach_time

        answer = attach_time(answer, request, counted)
    if counted is not None and counted.origin is not None:
        answer.data = {**answer.data, "num_examples_from": counted.origin}
    return answer
