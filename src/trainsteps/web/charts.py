"""What the page plots, computed from the CLI's JSON (no rule restated): the LR schedule with the run's events on
the same step axis, samples or tokens over steps, and the release families side by side. Numbers meant to be read
are formatted here the way the CLI's report formats them (`3,900`, `278.61`)."""

from __future__ import annotations

import json
import threading

from trainsteps.derivation import format_epochs
from trainsteps.schedule import expand_steps, indexed_steps

MAX_TICKS = 1500
"""Event ticks drawn per kind; longer lists are thinned evenly (the full lists stay in the JSON's `run`)."""


def _count(value) -> str:
    return "?" if value is None else f"{value:,}"


def _epochs(value) -> str:
    return format_epochs(value)


def _thin(steps) -> list[int]:
    steps = expand_steps(steps, MAX_TICKS)  # a long list comes in its compact form (schedule.compact_steps)
    if len(steps) <= MAX_TICKS:
        return steps
    stride = len(steps) / MAX_TICKS
    return sorted({steps[int(i * stride)] for i in range(MAX_TICKS)} | {steps[-1]})


def schedule_charts(data: dict, lr: tuple[str, float, dict] | None) -> dict:
    """Charts for a Trainer-like schedule (the `plan` JSON): LR + events, and samples/tokens over steps."""
    run = data["run"]
    steps, planned = run["optimizer_steps"], run["max_steps"]
    ends = expand_steps(run.get("epoch_end_steps"), MAX_TICKS)
    chart = {
        "steps": steps, "steps_text": _count(steps), "max_steps": planned, "max_steps_text": _count(planned),
        "epochs_completed_text": _epochs(run.get("epochs_completed")), "epochs_planned_text": _epochs(run.get("epochs_planned")),
        "epoch_end_steps": _thin(ends), "log_steps": _thin(run.get("log_steps")), "eval_steps": _thin(run.get("eval_steps")),
        "save_steps": _thin(run.get("save_steps")), "warmup_steps": run.get("warmup_steps") or 0,
        "planned_end_step": None, "planned_end_text": None,
    }
    completed, wanted = run.get("epochs_completed"), run.get("epochs_planned")
    by_epochs = (data.get("inputs") or {}).get("max_steps", -1) in (-1, None, 0)
    if ends and completed is not None and wanted and completed < wanted and by_epochs and run.get("rank_split") is None \
            and data.get("framework", "hf") == "hf":
        # the loop's own steps per full epoch (its first epoch), times the epochs asked for: where the plan would end
        planned_end = round(ends[0] * wanted)
        if planned_end > steps:
            chart["planned_end_step"], chart["planned_end_text"] = planned_end, _count(planned_end)
    chart["progress"] = _progress(run, run.get("epoch_end_steps"), data.get("framework", "hf"), data.get("inputs") or {})
    if lr is not None and data.get("framework", "hf") == "hf":
        chart["lr"] = _lr_chart(lr, run)
    return chart


def _progress(run: dict, ends, framework: str, inputs: dict) -> dict | None:
    """Samples (or tokens) fed over optimizer steps: exact at every epoch end and at the last step. `ends`: the JSON's
    epoch end steps, plain or compact."""
    tokens = framework in ("neox", "megatron") and run.get("tokens_seen") is not None
    if framework == "megatron" and (inputs.get("rampup_batch_size") or inputs.get("step_batch_size_schedule")):
        return None  # the batch grows during the run: two end points would draw a false straight line
    total = run.get("tokens_seen") if tokens else run.get("samples_seen")
    if total is None or not run.get("optimizer_steps"):
        return None
    per_epoch = run.get("samples_per_epoch") if not tokens else None
    points = [(0, 0)]
    if per_epoch and framework == "hf" and run.get("rank_split") is None:
        points += _epoch_points(ends, per_epoch, total)
    points.append((run["optimizer_steps"], total))
    if len(points) > MAX_TICKS:
        keep = set(range(0, len(points), max(1, len(points) // MAX_TICKS))) | {len(points) - 1}
        points = [p for i, p in enumerate(points) if i in keep]
    return {"unit": "tokens" if tokens else "samples", "points": points, "total_text": _count(total)}


def _epoch_points(ends, per_epoch, total) -> list[tuple[int, int]]:
    """(step, samples fed) at each epoch end before the last step. A short plain list (every plan of up to
    MAX_TICKS epochs) pairs its steps with the multiples of the epoch's samples below the total, in C; any other
    form goes through the (position, step) pairs."""
    if isinstance(ends, list) and len(ends) <= MAX_TICKS and type(per_epoch) is int and type(total) is int and per_epoch > 0:
        return list(zip(ends, range(per_epoch, total, per_epoch), strict=False))  # ends where the shorter one does
    return [(step, (i + 1) * per_epoch) for i, step in indexed_steps(ends, MAX_TICKS) if (i + 1) * per_epoch < total]


def _lr_chart(lr: tuple[str, float, dict], run: dict) -> dict:
    from trainsteps.frameworks.hf.lr_schedule import METRIC_DRIVEN, LrSchedule

    name, rate, kwargs = lr
    base = {"scheduler": name, "learning_rate": rate, "kwargs": kwargs, "warmup_steps": run.get("warmup_steps") or 0,
            "total_steps": run["max_steps"]}
    if name in METRIC_DRIVEN:
        return {**base, "points": [], "problem": f"{name} follows the evaluation metric: no curve before the run"}
    key = (name, base["warmup_steps"], run["max_steps"], rate, repr(sorted(kwargs.items())))
    found = _CURVES.get(key)
    if found is None:
        found = _curve(LrSchedule(name, base["warmup_steps"], run["max_steps"], rate, kwargs))
        with _CURVES_LOCK:
            _CURVES[key] = found
            _TEXTS[id(found[0])] = (found[0], found[2])
            while len(_CURVES) > MAX_CURVES:
                dropped = _CURVES.pop(next(iter(_CURVES)))
                if _TEXTS.get(id(dropped[0]), (None,))[0] is dropped[0]:
                    del _TEXTS[id(dropped[0])]
    points, problem, _ = found
    return {**base, "points": points, "problem": problem}


def encoded_points(points) -> str | None:
    """The JSON of a kept curve's points, written once when the curve was computed (a float takes microseconds to
    write, and a curve has 400); None for any other value."""
    kept = _TEXTS.get(id(points))
    return kept[1] if kept is not None and kept[0] is points else None


MAX_CURVES = 256
"""LR curves kept: plans that differ in what the curve does not depend on (rows that give the same max_steps, the
logging or saving steps) draw the same 400 points, computed once."""
_CURVES: dict = {}
_TEXTS: dict = {}
"""id(points) -> (points, their JSON), for the curves in _CURVES."""
_CURVES_LOCK = threading.Lock()


def _curve(schedule) -> tuple[tuple, str | None, str]:
    """(points, problem, the points' JSON)."""
    problem = schedule.problem()
    if problem:
        return (), f"transformers refuses these settings: {problem}", "[]"
    try:
        # ten significant digits, plenty for a plot (a rate computed by division has 17)
        points = tuple((step, float(f"{rate:.10g}")) for step, rate in schedule.curve())
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:  # kwargs of the wrong kind: transformers fails too
        return (), f"transformers cannot build this scheduler: {type(exc).__name__}: {exc}", "[]"
    return points, None, json.dumps(points, separators=(",", ":"))


def compare_chart(data: dict) -> dict:
    """The release families side by side: optimizer steps and epochs per family, with the CLI's formatting."""
    rows = []
    for row in data.get("comparison", []):
        rows.append({"family": row["family"], "version": row["version"], "steps": row["optimizer_steps"],
                     "steps_text": "-" if row["optimizer_steps"] is None else _count(row["optimizer_steps"]),
                     "epochs_text": "-" if row["error"] else _epochs(row["epochs_completed"]),
                     "warnings": row["warnings"], "error": row["error"]})
    return {"families": rows}


def time_figures(data: dict, lang: str) -> dict | None:
    """The `time` object of a plan, said as the CLI's Time section says durations (`4 h 20 min`)."""
    spent = data.get("time")
    if not isinstance(spent, dict) or not isinstance(spent.get("wall_seconds"), dict):
        return None
    from trainsteps.timing.durations import format_duration

    wall, hours, cost = spent["wall_seconds"], spent.get("gpu_hours") or {}, spent.get("cost")
    out = {"wall_text": format_duration(wall["expected"], lang),
           "wall_range_text": f"{format_duration(wall['low'], lang)} – {format_duration(wall['high'], lang)}",
           "gpu_hours_text": None if not hours else f"{hours['expected']:,.2f} ({hours['low']:,.2f} – {hours['high']:,.2f})",
           "source": spent.get("source")}
    if isinstance(cost, dict) and cost.get("expected") is not None:
        out["cost_text"] = f"{cost['expected']:,.2f} ({cost['low']:,.2f} – {cost['high']:,.2f}) {cost.get('currency', '')}".strip()
    return out


MAX_RUNS = 8
"""Runs of one log given cards (a log of many restarts keeps its last ones; the text names every run)."""


def explain_view(data: dict, lang: str) -> list[dict]:
    """Explain's cards for each run of a log, from the CLI's JSON: the GPUs, the release, the status and where the
    run stopped, its rate, the time left and what went wrong; and the steps over time the log shows, against where
    the run really ends and what was planned (the plot)."""
    runs = data.get("runs")
    if not isinstance(runs, list):
        return []
    return [_run_cards(run, lang) for run in runs[-MAX_RUNS:] if isinstance(run, dict)]


def _run_cards(run: dict, lang: str) -> dict:
    from trainsteps.timing.durations import format_duration

    inferred, plan, spent = run.get("inferred") or {}, run.get("run") or {}, run.get("time") or {}
    progress = (run.get("observed") or {}).get("progress") or {}
    at = spent.get("at_step") or progress.get("last_step") or run.get("end_step")
    end = run.get("end_step") if run.get("stopped") else (spent.get("end_step") or run.get("end_step") or run.get("planned_end_step"))
    rate = (spent.get("rate") or {}).get("seconds_per_step") or {}
    left = spent.get("remaining_seconds")
    verdict = spent.get("verdict") or {}
    wrong = [fact["text"] for fact in run.get("facts") or () if fact.get("code")]
    wrong += [f"[{w['code']}] {w['message']}" for w in plan.get("warnings") or () if isinstance(w, dict) and w.get("code")]
    wrong += [c.get("text") or str(c) for c in run.get("contradictions") or () if c]
    release = plan.get("version") or _value_text(inferred.get("transformers"))
    return {
        "status": run.get("status") or "unknown",
        "gpus_text": _value_text(inferred.get("world_size")),
        "release_text": release,
        "release_detail": (plan.get("family") or {}).get("name"),
        "at_text": _count(at) if at is not None else None,
        "end_text": _count(end) if end is not None else None,
        "planned_text": _count(run.get("planned_end_step")) if run.get("planned_end_step") else None,
        "rate_text": _seconds(rate.get("expected"), lang),
        "rate_range_text": f"{_seconds(rate['low'], lang)} – {_seconds(rate['high'], lang)}" if rate.get("low") is not None else None,
        "rate_detail": (spent.get("rate") or {}).get("detail"),
        "left_text": format_duration(left["expected"], lang) if isinstance(left, dict) else None,
        "left_range_text": f"{format_duration(left['low'], lang)} – {format_duration(left['high'], lang)}" if isinstance(left, dict) else None,
        "left_detail": verdict.get("text"),
        "wrong": wrong,
        "plot": _progress_plot(spent, at, end, run.get("planned_end_step")),
    }


def _progress_plot(spent: dict, at, end, planned) -> dict | None:
    """The steps over time the log shows (hours), and where the measured rate takes the run from its last line."""
    trace = spent.get("trace") or []
    if len(trace) < 2:
        return None
    points = [[seconds / 3600, step] for step, seconds in trace]
    left = spent.get("remaining_seconds")
    last_hours, last_step = points[-1][0], at if isinstance(at, int) else points[-1][1]
    projection = None
    if isinstance(left, dict) and end and end > last_step:
        projection = [[last_hours, last_step], [last_hours + left["expected"] / 3600, end]]
    return {"points": points, "projection": projection, "end_step": end, "planned_end_step": planned}


def _value_text(value) -> str:
    """An inferred value as the CLI's report says it: a number, `a or b`, or a range `a – b`; `?` when unknown."""
    if value is None:
        return "?"
    if isinstance(value, dict):
        if "one_of" in value:
            return " / ".join(_value_text(v) for v in value["one_of"])
        if "min" in value or "max" in value:
            return f"{_value_text(value.get('min'))} – {_value_text(value.get('max'))}"
        return "?"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return str(value)


def _seconds(value, lang: str) -> str | None:
    """A step's time: `2.83 s` (a duration as the CLI says it from a minute on)."""
    if value is None:
        return None
    if value >= 60:
        from trainsteps.timing.durations import format_duration

        return format_duration(value, lang)
    return f"{value:.3g} s" if lang == "en" else f"{value:.3g} 秒"
