"""What progress lines pin down without a banner, and how every run ended (pure: no I/O).

From bars, loss/eval dicts, trainer_log.jsonl and ms-swift dicts alone:
- where the run stands (step k of the bar's total n) and whether it finished, crashed or was interrupted;
- optimizer steps per epoch, from a step and the epoch logged with it: k / epoch, within the rounding of the
  printed epoch;
- the epochs the total covers;
- the number of processes, when the log also shows the rows and the batch settings: only the world sizes whose
  loader length gives those steps per epoch fit (e.g. 90 steps over 981 rows fit only 4 processes);
- a stream re-read (the logged epoch passes 1 while the dataset has no length).
"""

from __future__ import annotations

import math

from trainsteps.derivation import format_epochs
from trainsteps.frameworks.hf.loader import ceil_div
from trainsteps.logs.infer_release import releases_known
from trainsteps.logs.inference import MAXSIZE, Finding, Inference, Known
from trainsteps.logs.progress import printed_number, training_bar
from trainsteps.logs.text import clip

MAX_WORLD = 4096


def infer_progress(inf: Inference) -> None:
    run = inf.run
    p = run.progress
    bar = training_bar(run)
    step, total = _where(run, bar)
    if step is not None and total:
        inf.facts.append(Finding("explain.fact.progress_at", {"step": step, "total": total, "share": f"{step / total:.1%}",
                                                              "line": run.last_step.line if run.last_step else (bar.line if bar else 1)}))
    nupe = _steps_per_epoch(inf)
    if nupe is not None and total:
        low, high = nupe
        # k / epoch counts micro-batches over GA; the planned steps per epoch are that rounded down (< 4.52) or up
        epochs_low, epochs_high = total / math.ceil(high), total / max(math.floor(low), 1)
        inf.facts.append(Finding("explain.fact.progress_epochs", {"total": total, "low": f"{epochs_low:.2f}", "high": f"{epochs_high:.2f}"}))
        inf.inferred["max_steps_planned"] = Known(exact=total)
        _processes(inf, low, high, total)
    elif total:
        inf.inferred["max_steps_planned"] = Known(exact=total)
    for name in ("per_device_train_batch_size", "gradient_accumulation_steps"):
        reading = run.settings.get(name)
        usable = reading is not None and type(reading.value) is int and reading.value >= 1  # a batch of -10 is no batch
        if usable and name not in inf.inferred:
            inf.inferred[name] = Known(exact=reading.value)
    if inf.world_size is not None and "world_size" not in inf.inferred:
        inf.inferred["world_size"] = Known(exact=inf.world_size)
    if p.train_runtime is not None and p.train_steps_per_second:
        _runtime_metrics(inf, total, step)
    if inf.releases and run.transformers_version is not None:
        inf.inferred["transformers"] = releases_known(inf.releases)
    _nemo(inf)
    _lightning(inf)


def _lightning(inf: Inference) -> None:
    """Lightning's bar over a dataset with no length counts the batches of the current epoch (`115816it`), at the
    bar's rate; `Trainer.fit stopped: max_steps=N reached` (fit_loop.py) says the run ended on its step limit."""
    bar = inf.run.wrapper.get("lightning_epoch_batches")
    if bar is not None:
        p = bar.note_params
        inf.facts.append(Finding("explain.fact.lightning_itbar", {"batches": bar.value, "epoch": p["epoch"], "elapsed": p["elapsed"],
                                                                 "rate": p["rate"], "line": bar.line}))
    stopped = inf.run.wrapper.get("lightning_fit_stopped")
    if stopped is not None:
        inf.facts.append(Finding("explain.fact.lightning_stopped", {"limit": stopped.note_params["limit"], "n": stopped.value,
                                                                    "line": stopped.line}))


def _nemo(inf: Inference) -> None:
    """NeMo's bar postfix: consumed_samples = (global_step + 1) x global batch (megatron_base_model.
    _compute_consumed_samples_after_training_step: `global_step + 1`, the step being run is not counted yet in
    trainer.global_step), so the global batch is consumed / (global_step + 1), within tqdm's rounding."""
    step_reading, consumed_reading = inf.run.wrapper.get("nemo_global_step"), inf.run.wrapper.get("nemo_consumed_samples")
    if step_reading is None or consumed_reading is None:
        return
    step, step_err = printed_number(str(step_reading.value))
    consumed, consumed_err = printed_number(str(consumed_reading.value))
    if consumed <= 0:
        return
    low = math.ceil((consumed - consumed_err) / (step + step_err + 1) - 1e-9)
    high = math.floor((consumed + consumed_err) / max(step - step_err + 1, 1) + 1e-9)
    done_low, done_high = math.ceil(step - step_err) + 1, math.floor(step + step_err) + 1
    params = {"step": step_reading.value, "consumed": consumed_reading.value, "line": step_reading.line,
              "done": f"{done_low:,}" if done_low == done_high else f"{done_low:,}-{done_high:,}",
              "batch": f"{low:,}" if low == high else f"{low:,}-{high:,}"}
    inf.facts.append(Finding("explain.fact.nemo_batch", params))
    if low == high:
        inf.inferred["global_batch_size"] = Known(exact=low)
    elif low < high:
        inf.inferred["global_batch_size"] = Known(low=low, high=high)


def _where(run, bar) -> tuple[int | None, int | None]:
    p = run.progress
    if p.step_total is not None:
        return p.step_total[0], p.step_total[1]
    if bar is not None:
        return bar.n, bar.total
    return (run.last_step.value if run.last_step else None), None


def _decimals(value: float) -> float:
    text = repr(float(value))
    if "e" in text or "." not in text:
        return 5e-7
    return 0.5 * 10 ** -len(text.split(".")[1])


def _steps_per_epoch(inf: Inference) -> tuple[float, float] | None:
    """Optimizer steps per epoch from the (step, epoch) point with the largest step: step / epoch, within the
    rounding of the printed epoch. Not always a whole number: the Trainer's epoch advances per batch (L / GA)."""
    p = inf.run.progress
    points = [pt for pt in p.epoch_points if pt[0] > 0 and pt[1] > 0]
    if not points:
        return None
    step, epoch, line = max(points)
    tol = _decimals(epoch)
    low = step / (epoch + tol)
    high = step / (epoch - tol) if epoch > tol else float(step * 10**6)
    inf.facts.append(Finding("explain.fact.progress_nupe", {"low": f"{low:,.1f}", "high": f"{high:,.1f}", "step": step,
                                                            "epoch": format_epochs(epoch), "line": line}))
    inf.inferred["steps_per_epoch"] = Known(low=round(low, 3), high=round(high, 3))
    return low, high


def _processes(inf: Inference, low: int, high: int, total: int) -> None:
    """World sizes whose loader length per rank gives these steps per epoch, when the rows and batch are printed."""
    run = inf.run
    rows = run.wrapper.get("dataset_rows") or run.wrapper.get("raw_examples")
    bs, ga = run.settings.get("per_device_train_batch_size"), run.settings.get("gradient_accumulation_steps")
    if rows is None or bs is None or not isinstance(bs.value, int) or bs.value < 1:
        return
    g = ga.value if ga is not None and isinstance(ga.value, int) and ga.value > 0 else 1
    n = rows.value
    fits = []
    for world in range(1, MAX_WORLD + 1):
        lengths = {ceil_div(ceil_div(n, bs.value), world), ceil_div(ceil_div(n, world), bs.value), n // bs.value // world}
        nupes = {x for length in lengths if length for x in (length / g, max(length // g, 1), max(ceil_div(length, g), 1))}
        if any(low - 1e-9 <= x <= high + 1e-9 for x in nupes):
            fits.append(world)
        if ceil_div(ceil_div(n, bs.value), world) < g and world > 1 and fits and world > fits[-1] * 2:
            break
    if not fits:
        return
    params = {"rows": n, "bs": bs.value, "ga": g, "low": f"{low:,.1f}", "high": f"{high:,.1f}", "line": rows.line}
    if len(fits) == 1:
        inf.world_size = fits[0]
        inf.inferred["world_size"] = Known(exact=fits[0])
        inf.facts.append(Finding("explain.fact.progress_world", {**params, "world": fits[0]}))
    elif len(fits) <= 8:
        inf.inferred["world_size"] = Known(choices=fits)
        inf.facts.append(Finding("explain.fact.progress_worlds", {**params, "worlds": ", ".join(map(str, fits))}))


RUNTIME_DECIMALS, STEPS_PER_SECOND_DECIMALS = 4, 3
"""speed_metrics (transformers/trainer_utils.py) prints round(runtime, 4) and round(num_steps / runtime, 3), read in
the wheels of 4.30.0 to 4.52.1, 4.57.0, 5.0.0, 5.3.0, 5.19.0 and 5.24.0."""


def runtime_steps_range(runtime: float, per_second: float) -> tuple[float, float]:
    """The num_steps that printed runtime x printed steps/s can stand for, each printed figure within its rounding."""
    dr, ds = 0.5 * 10 ** -RUNTIME_DECIMALS, 0.5 * 10 ** -STEPS_PER_SECOND_DECIMALS
    return max(runtime - dr, 0.0) * max(per_second - ds, 0.0), (runtime + dr) * (per_second + ds)


def _runtime_metrics(inf: Inference, planned: int | None, step: int | None) -> None:
    """train_runtime x train_steps_per_second: the planned max_steps before transformers 5.19 (speed_metrics gets
    state.max_steps), the steps run in this call from 5.19 on (num_steps_trained). Both printed figures are rounded,
    so the product is a range; it names one of the two only when the range excludes the other."""
    p = inf.run.progress
    product = p.train_runtime * p.train_steps_per_second
    low, high = runtime_steps_range(p.train_runtime, p.train_steps_per_second)
    ran = None if step is None else step - (inf.run.resume_global_step or 0)
    from trainsteps.logs.timing import Dur

    params = {"runtime": Dur(p.train_runtime), "sps": p.train_steps_per_second, "product": f"{product:,.0f}",
              "line": p.metrics_line or 1, "low": f"{low:,.1f}", "high": f"{high:,.1f}",
              "planned": f"{planned:,}" if planned else "?", "ran": f"{ran:,}" if ran is not None else "?"}
    if not planned or ran is None:
        msg = "explain.fact.runtime_steps"
    else:
        has_planned, has_ran = low <= planned <= high, low <= ran <= high
        if planned == ran:
            msg = "explain.fact.runtime_steps_same" if has_ran else "explain.fact.runtime_steps_neither"
        elif has_planned and has_ran:
            msg = "explain.fact.runtime_steps_both"
        elif has_planned:
            msg = "explain.fact.runtime_steps_planned"
        elif has_ran:
            msg = "explain.fact.runtime_steps_ran"
        else:
            msg = "explain.fact.runtime_steps_neither"
    inf.facts.append(Finding(msg, params))


def ending(inf: Inference) -> None:
    """Crashed or interrupted at step k of n, finished, or still running; then the timing to the real end."""
    run = inf.run
    p = run.progress
    bar = training_bar(run)
    best = inf.best
    planned = run.value("max_steps") if run.kind != "progress" else (_where(run, bar)[1] or _declared_max_steps(run))
    end = best.schedule.run.optimizer_steps if best is not None else planned
    step = run.last_step.value if run.last_step is not None else (bar.n if bar is not None else None)
    inf.planned_end_step = end
    stop = _signal_after_the_last_step(inf, _before_the_end(inf, p.stop), bar, step, end)
    if stop is not None:
        status, line, text, at, reason = stop
        at = step if step is not None else at
        inf.stopped = inf.status = status
        inf.end_step = at
        msg = "explain.fact.crashed" if status == "crashed" else "explain.fact.interrupted"
        inf.facts.insert(0, Finding(msg, {"step": at or 0, "total": _total(end), "line": line, "text": clip(text, 100),
                                          "reason": "explain.reason." + reason},
                                    code="LOG_CRASHED" if status == "crashed" else "LOG_INTERRUPTED"))
        _stopped_in_evaluation(inf, bar, line)
    elif (said := _stated_stop(run)) is not None and not run.finished and not (step is not None and end and step >= end):
        # the log shows no end of its own, but the words around it name one (a title, a sentence)
        key, reading = said
        status, code = ("crashed", "LOG_CRASHED") if key == "stated_failure" else ("interrupted", "LOG_INTERRUPTED")
        inf.stopped = inf.status = status
        inf.end_step = step
        said_step = reading.note_params.get("step") if step is None else None
        if said_step is not None:  # the log shows no step: the step the words put the failure at, said to be theirs
            inf.end_step = said_step
            inf.facts.insert(0, Finding("explain.fact.stated_failure_said_step", {"step": f"{said_step:,}", "line": reading.line,
                                                                               "text": clip(reading.text, 100)}, code=code))
        else:
            inf.facts.insert(0, Finding("explain.fact." + key, {"step": step or 0, "total": _total(end), "line": reading.line,
                                                                "text": clip(reading.text, 100)}, code=code))
    elif run.finished or (step is not None and end and step >= end):
        # finished: the log's last step (LLaMA-Factory's final line, a bar at its total), else the engine's replay
        # (a replay the log contradicts does not say where it ended)
        inf.status = "finished"
        inf.end_step = step if step is not None else (end if not inf.contradictions else None)
    elif step is not None:
        inf.status = "running"
    if inf.status == "finished" and run.finished and run.kind in ("progress", "hf", "unsloth"):
        epoch = f"{run.last_epoch.value:g}" if run.last_epoch else "?"
        shown = step if step is not None else inf.end_step  # the replay's end when the log shows no step
        if shown is None and run.last_epoch is not None:  # a running_log.txt's loss dicts carry the epoch, not the step
            inf.facts.append(Finding("explain.fact.finished_at_epoch", {"epoch": epoch}))
        else:
            inf.facts.append(Finding("explain.fact.finished", {"step": f"{shown:,}" if shown is not None else "?", "epoch": epoch}))
        if run.kind == "progress" and step is not None and planned and step < planned:
            # the end line came before the total the progress lines counted to: something stopped the loop early
            inf.facts.append(Finding("explain.fact.finished_early", {"step": f"{step:,}", "total": f"{planned:,}",
                                                                     "share": f"{step / planned:.1%}"}))
        elif _ended_epochs_early(inf):
            epochs = run.value("num_epochs")
            inf.facts.append(Finding("explain.fact.finished_early_epoch", {"epoch": f"{run.last_epoch.value:g}", "epochs": f"{epochs:,}"}))
    elif inf.status == "running" and end and run.kind in ("progress", "hf", "unsloth"):
        inf.facts.append(Finding("explain.fact.running", {"step": step, "end": end, "share": f"{step / end:.1%}"}))
    if run.kind in ("hf", "unsloth") and p.train_runtime is not None and p.train_steps_per_second:
        _runtime_metrics(inf, planned, step)
    if (run.value("num_epochs") == MAXSIZE or (inf.inferred.get("streaming") and inf.inferred["streaming"].exact is True)) \
            and p.max_epoch is not None and p.max_epoch > 1:
        inf.facts.append(Finding("explain.fact.stream_passes", {"epoch": format_epochs(p.max_epoch), "passes": math.ceil(p.max_epoch)}))
    _second_writer(inf)
    inf.timing = _measured(inf, bar, end, step)


def _measured(inf: Inference, bar, end: int | None, step: int | None):
    """The rate and the time left (logs/timing.py, loaded only for a run whose lines show any timing)."""
    run = inf.run
    if not run.shows_timing(bar):
        return None
    from trainsteps.logs import timing

    measured = timing.measure(run, bar, end, inf.stopped is not None)
    if measured is not None:
        measured.verdict = None if inf.stopped else timing.verdict(measured, bar, run.resume_global_step is not None)
        if inf.stopped and measured.framework_eta is not None:
            measured.verdict = ("explain.eta.stopped", {"step": step or 0})
    return measured


def _stopped_in_evaluation(inf: Inference, training, stop_line: int) -> None:
    """The stop came while an evaluation bar was the last one drawn: say so (an OOM in validation is not a training
    step's)."""
    evaluations = [b for b in inf.run.progress.bars.values() if b.kind == "evaluation" and b.line <= stop_line]
    last = max(evaluations, key=lambda b: b.line, default=None)
    if last is None or (training is not None and training.line > last.line):
        return
    inf.facts.insert(1, Finding("explain.fact.stopped_in_evaluation", {"n": last.n, "total": last.total, "line": last.line,
                                                                        "step": inf.end_step or 0}))


def _declared_max_steps(run) -> int | None:
    """A loop with no bar that printed its step limit (`Starting training loop (max_steps=100)`, `--max_steps 500`)."""
    reading = run.settings.get("max_steps")
    value = reading.value if reading is not None else None
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


# Ends the Trainer itself writes (train metrics, train_runtime, LLaMA-Factory's final line, Lightning's `Trainer.fit
# stopped`, trainer_state.json, a loop's own `End of training.`): training was over when they were written. A bar at its total is not one of them (the
# final evaluation and save still run inside train()).
_OWN_ENDS = ("runtime", "completed", "jsonl_final", "lightning", "state", "loop_end")


def _before_the_end(inf: Inference, stop: tuple | None) -> tuple | None:
    """The stop that ended training; a crash after the run had finished (a web UI's traceback, an export script) is
    said as such and ends nothing."""
    run = inf.run
    if stop is None or stop[0] != "crashed" or run.finished_by is None or run.finished_by[0] not in _OWN_ENDS:
        return stop
    if stop[1] <= run.finished_by[1]:
        return stop
    inf.facts.append(Finding("explain.fact.error_after_end", {"line": stop[1], "text": clip(stop[2], 100), "end_line": run.finished_by[1],
                                                              "reason": "explain.reason." + stop[4]}))
    return None


# Signals that stop processes without saying why (a launcher's or a job's teardown); a failure's own line is not one
_TEARDOWN = ("sigterm", "sigint", "sighup", "signal", "keyboard")


def _signal_after_the_last_step(inf: Inference, stop: tuple | None, bar, step: int | None, end: int | None) -> tuple | None:
    """A signal received once the training bar stood at its total stopped processes that had finished training (a
    launcher's teardown after the final save): said as such, and the run finished."""
    if stop is None or stop[4] not in _TEARDOWN or step is None or not end or step < end:
        return stop
    if bar is None or bar.n < bar.total or bar.line > stop[1]:
        return stop
    inf.facts.append(Finding("explain.fact.signal_after_end", {"line": stop[1], "text": clip(stop[2], 100), "step": f"{step:,}",
                                                               "reason": "explain.reason." + stop[4]}))
    return None


def _second_writer(inf: Inference) -> None:
    """Two trainings wrote one trainer_log.jsonl: most logging steps appear twice, with different losses.

    Sampled reading of a large file parses runs of consecutive lines, so the share holds there too; a step repeated
    by a resumed run or a copied line (same loss, same clock) is not counted.
    """
    p = inf.run.progress
    example = p.jsonl_repeat_example
    if example is None or p.jsonl_repeats < 5 or 2 * p.jsonl_repeats < 0.8 * p.jsonl_losses:
        return
    step, before, after, line = example
    inf.facts.append(Finding("explain.fact.second_writer", {"repeats": p.jsonl_repeats, "lines": p.jsonl_losses, "step": step,
                                                             "before": before, "after": after, "line": line}))


def _ended_epochs_early(inf: Inference) -> bool:
    """A banner run whose end line comes a whole epoch or more before the epochs it printed, where no replay of the
    Trainer's own count ends there (4.46-4.51 stop the 300 epochs of seed 001 at epoch 278.61 by themselves)."""
    run = inf.run
    epochs = run.value("num_epochs")
    if run.kind not in ("hf", "unsloth") or run.last_epoch is None or not isinstance(epochs, int) or epochs == MAXSIZE:
        return False
    logged = run.last_epoch.value
    replayed = inf.best.schedule.run.epochs_completed if inf.best is not None and not inf.contradictions else None
    return logged <= epochs - 1 and (replayed is None or abs(replayed - logged) > 0.01)


def _total(end: int | None) -> str | Finding:
    """A crash's total: the planned end, or said to be unknown (a NeMo bar's total also counts validation batches)."""
    return f"{end:,}" if end else Finding("explain.total_unknown", {})


def _stated_stop(run):
    """(key, reading) of an end the words around a log name: a failure (an OOM in a title), else a stop from outside
    (a time limit, a preemption, a cancel)."""
    for key in ("stated_failure", "stated_interruption"):
        if key in run.wrapper:
            return key, run.wrapper[key]
    return None
