"""`trainer_state.json`, which the Trainer writes next to every checkpoint (JSON only; never a pickle).

It holds the planned `max_steps`, the printed `num_train_epochs`, the per-device `train_batch_size`,
where the run stood (`global_step`, `epoch`) and `log_history`.
"""

from __future__ import annotations

from trainsteps.logs.observed import Reading, RunObservation

MAX_BYTES = 256 << 20


def looks_like_state(head: bytes) -> bool:
    text = head.lstrip()
    return text.startswith(b"{") and (b'"log_history"' in head or b'"global_step"' in head)


def parse_state(data: bytes, file: str) -> RunObservation | None:
    """A RunObservation from the bytes of a trainer_state.json; None if it is not one."""
    import json  # only for a trainer_state.json: `json` is not needed to read a text log

    try:
        state = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(state, dict) or not ("global_step" in state or "log_history" in state):
        return None
    run = RunObservation(kind="trainer_state", file=file)

    def read(key: str, name: str, target: dict) -> None:
        value = state.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            target[name] = Reading(value, 1, f'"{key}": {value}')

    read("max_steps", "max_steps", run.banner)
    read("num_train_epochs", "num_epochs", run.banner)
    read("train_batch_size", "per_device_batch", run.banner)
    run.banner_order = list(run.banner)
    if isinstance(state.get("global_step"), int):
        run.last_step = Reading(state["global_step"], 1, f'"global_step": {state["global_step"]}')
    if isinstance(state.get("epoch"), (int, float)):
        run.last_epoch = Reading(float(state["epoch"]), 1, f'"epoch": {state["epoch"]}')
    history = state.get("log_history")
    if isinstance(history, list):
        for entry in history:
            if isinstance(entry, dict) and "train_runtime" in entry:
                run.finish("state", 1)
        estimate = _steps_per_epoch(history)
        if estimate is not None:
            run.wrapper["state_steps_per_epoch"] = Reading(estimate, 1, "log_history: step / epoch")
    return run


def _steps_per_epoch(history: list) -> float | None:
    """step / epoch of the last log entry inside the first epoch: about the optimizer steps of one epoch."""
    best = None
    for entry in history:
        if not isinstance(entry, dict):
            continue
        step, epoch = entry.get("step"), entry.get("epoch")
        if isinstance(step, int) and isinstance(epoch, (int, float)) and 0 < epoch <= 1 and step > 0:
            best = step / epoch
    return None if best is None else round(best, 3)
