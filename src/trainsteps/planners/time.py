"""The time of any plan: the one place that turns a planner's answer and the time settings into a "Time" section and
a `time` object (`trainsteps.timing` does the arithmetic). Every planner whose answer has steps gets it."""

from __future__ import annotations

from trainsteps.errors import InputError
from trainsteps.planners.table import TIME, Answer
from trainsteps.steps import Steps


def time_request(request) -> dict:
    """The time settings as the time model reads them (with the world size and sequence length of the plan)."""
    settings = request.settings
    return {**{name: settings.get(name) for name in TIME}, "lang": request.lang, "explain": request.explain,
            "seq_length": settings.get("seq_length"), "gpus_flag": settings.get("gpus"), "nodes_flag": settings.get("nodes"),
            "world_flag": settings.get("world_size")}


def attach_time(answer: Answer, request, counted) -> Answer:
    """Add `time` to the answer's JSON, a "Time" section to its text and the expected wall time to its first line."""
    data = answer.data
    if not isinstance(data.get("run"), dict):
        return answer
    from trainsteps.timing.report import render_time
    from trainsteps.timing.request import estimate_for_plan

    asked = time_request(request)
    view = data if answer.time_steps == "optimizer_steps" else _steps_view(data, answer.time_steps)
    _refuse_times_of_no_events(request, view["run"])
    result = estimate_for_plan(view, asked, counted.report if counted is not None else None)
    lang = request.lang
    human = _answer_with_time(answer.human, result, lang) + "\n\n" + render_time(result, lang, request.explain)
    return Answer({**data, "time": result.to_dict(lang)}, human, notes=answer.notes, time_steps=answer.time_steps)


def _refuse_times_of_no_events(request, run: dict) -> None:
    """`--eval-time 60` on a plan that never evaluates would be ignored: refused instead."""
    from trainsteps.i18n import message
    from trainsteps.planners.table import option_name

    for name, steps, event in (("eval_time", "eval_steps", "time.event.evaluation"),
                               ("eval_examples", "eval_steps", "time.event.evaluation"),
                               ("save_time", "save_steps", "time.event.save")):
        if request.gave(name) and not run.get(steps):
            raise InputError("time.error.no_events", "time.hint.no_events", option=option_name(name),
                             event=message(event, request.lang))


def _steps_view(data: dict, steps: str) -> dict:
    """An RL plan as the time model reads a plan: its step is a training step (generation, scoring, update), whose
    time a measurement gives (the FLOPs model covers only the update)."""
    run, inputs = data["run"], data.get("inputs") or {}
    gpus = inputs.get("world_size") or (inputs.get("n_gpus_per_node") or 0) * (inputs.get("nnodes") or 1) or None
    return {"framework": data.get("framework"), "inputs": {"world_size": gpus},
            "run": {"optimizer_steps": run[steps], "eval_steps": Steps.of(run.get("test_steps")).at_least(1),
                    "save_steps": Steps.of(run.get("save_steps")), "warmup_steps": 0}}


def _answer_with_time(human: str, result, lang: str) -> str:
    """The one-line answer that opens a plan (`3,900 optimizer steps · ...`) also gives the expected wall time."""
    from trainsteps.timing.durations import format_duration

    first, sep, rest = human.partition("\n")
    if " · " not in first or result.wall_seconds is None:
        return human
    return f"{first} · ~{format_duration(result.wall_seconds.expected, lang)}{sep}{rest}"


def solve_time(request: dict, steps: int, opts: dict, world: int) -> tuple[dict, str]:
    """`solve --epochs 3 --step-time 4`: the time of the max_steps found (JSON object and text section)."""
    from trainsteps.timing.report import render_time
    from trainsteps.timing.request import estimate_for_plan, pseudo_plan

    micro, ga = opts.get("per_device_train_batch_size") or 1, opts.get("gradient_accumulation_steps") or 1
    data = pseudo_plan(steps, micro * ga * world, opts.get("seq_length"), world, micro)
    request = {**request, "seq_length": request.get("seq_length") or opts.get("seq_length")}
    result = estimate_for_plan(data, request)
    return result.to_dict(request["lang"]), render_time(result, request["lang"], request.get("explain"))
