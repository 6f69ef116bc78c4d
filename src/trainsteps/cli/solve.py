"""`trainsteps solve`: the max_steps for a target, what a max_steps covers, and batch layouts."""

from __future__ import annotations

import click
from click.core import ParameterSource

from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, user_errors
from trainsteps.errors import InputError
from trainsteps.planners.table import RL_FRAMEWORKS, RL_STACKS
from trainsteps.world import world_or_one


@click.command("solve")
@click.option("--epochs", type=click.FloatRange(min=0, min_open=True), help="Target: passes over the data (fractions allowed).")
@click.option("--examples", type=click.IntRange(min=1), help="Target: rows fed to the model, all ranks.")
@click.option("--tokens", type=click.IntRange(min=1), help="Target: tokens fed (needs --seq-length; rows are packed to that length).")
@click.option("--max-steps", type=int, help="Inverse: what this max_steps covers in epochs, examples and tokens.")
@click.option("--global-batch", "--global-batch-size", "global_batch", type=int, help="Layouts: every per-device batch x accumulation that reaches this global batch.")
@click.option("--max-per-device-batch", type=int, help="Layouts: largest per-device batch that fits in memory.")
@click.option("--num-examples", type=int, help="Rows in the dataset (one pass over a stream).")
@click.option("--dataset-tokens", type=int, help="Tokens in one pass over a packed dataset (with --seq-length).")
@click.option("--seq-length", type=int, help="Tokens per packed row.")
@click.option("--streaming", is_flag=True, help="Iterable dataset without a length.")
@click.option("--per-device-train-batch-size", type=int, default=8, show_default=True, help="Rows per micro-batch per process.")
@click.option("--gradient-accumulation-steps", type=int, default=1, show_default=True, help="Micro-batches per optimizer step.")
@click.option("--world-size", type=int, help="Number of processes (ranks).")
@click.option("--gpus", type=int, help="GPUs per node (world size = gpus x nodes).")
@click.option("--nodes", type=int, default=None, help="Nodes (with --gpus).")
@click.option("--dataloader-drop-last", is_flag=True, help="Drop the incomplete last batch.")
@click.option("--no-dispatch-batches", is_flag=True, help="accelerate dispatch_batches=False: each rank reads its own part of a stream.")
@click.option("--transformers", "transformers_version", help="transformers release to model (default: newest known).")
@click.option("--explain", is_flag=True, help="Show where every number comes from.")
@click.option("--framework", type=click.Choice([*RL_FRAMEWORKS, *RL_STACKS]),
              help="RL: with --time-budget, the training steps and prompts of this trainer's run that fit (as plan).")
@click.option("--set", "rl_overrides", multiple=True, metavar="KEY=VALUE",
              help="RL: one setting of the trainer, as on its launch line (data.train_batch_size=512).")
@click.option("--response-length", "response_length", metavar="MEAN|LOW-HIGH",
              help="RL: mean response length in tokens, for the RL step model.")
@FORMAT_OPTION
@LANG_OPTION
def solve_command(fmt: str, lang: str, explain: bool, **opts) -> None:
    """Find the max_steps that covers a number of epochs, examples or tokens.

    \b
    Examples:
      trainsteps solve --streaming --num-examples 1047 --epochs 3 \\
        --per-device-train-batch-size 10 --gradient-accumulation-steps 8
      trainsteps solve --streaming --dataset-tokens 1000000000 --seq-length 2048 --epochs 1 \\
        --per-device-train-batch-size 4 --gradient-accumulation-steps 8 --gpus 8
      trainsteps solve --streaming --num-examples 1047 --max-steps 40 --per-device-train-batch-size 10
      trainsteps solve --global-batch 128 --gpus 6
    """
    from trainsteps import solver as engine
    from trainsteps.solve_report import render_coverage, render_layouts, render_solution

    with user_errors(lang):
        if opts.get("framework"):
            return _solve_rl(fmt, lang, explain, opts)
        for name in ("rl_overrides", "response_length"):
            if _given(name):
                raise InputError("solve.error.rl_only", "solve.hint.rl_only", option=_option(name))
        opts.pop("framework"), opts.pop("rl_overrides"), opts.pop("response_length")
        time_request = _time_request(opts, lang, explain)  # --step-time, --time-budget, ...
        world = world_or_one(opts.pop("world_size"), opts.pop("gpus"), opts.pop("nodes"))
        targets = {k: opts.pop(k) for k in ("epochs", "examples", "tokens", "max_steps")}
        global_batch, cap = opts.pop("global_batch"), opts.pop("max_per_device_batch")
        given = [k for k, v in targets.items() if v is not None]
        if time_request and time_request.get("time_budget"):
            return _solve_budget(fmt, lang, explain, opts, world, targets, given, time_request)
        if global_batch is not None:
            if given:
                raise InputError("solve.error.one_question", "solve.hint.target")
            _refuse_unused_by_layouts()
            result = engine.layouts(global_batch, world, cap)
            emit(fmt, result.to_dict(), render_layouts(result, lang))
            return
        if cap is not None:  # the memory cap of a layout, with no layout asked for
            raise InputError("solve.error.cap_without_layouts", "solve.hint.cap_without_layouts")
        if len(given) != 1:
            raise InputError("solve.error.one_question", "solve.hint.target")
        if opts.get("num_examples") is None and opts.get("dataset_tokens") is None:
            raise InputError("solve.error.size_missing", "solve.hint.size_missing")
        spec = _spec(opts, world)
        if given[0] == "max_steps":
            cov, schedule = engine.covers(spec, targets["max_steps"])
            data = {"max_steps": targets["max_steps"], "covers": cov.to_dict(lang), "derivation": schedule.derivation.to_list(lang)}
            human = render_coverage(cov, spec, schedule, lang, explain)
            if time_request:  # the time of the max_steps given
                from trainsteps.planners.time import solve_time

                time_json, time_text = solve_time(time_request, targets["max_steps"], opts, world)
                data, human = {**data, "time": time_json}, human + "\n\n" + time_text
            emit(fmt, data, human)
            return
        solution = engine.solve(spec, given[0], targets[given[0]])
        data, human = solution.to_dict(lang), render_solution(solution, spec, lang, explain)
        if time_request:
            from trainsteps.planners.time import solve_time

            time_json, time_text = solve_time(time_request, solution.ceil.optimizer_steps, opts, world)
            data, human = {**data, "time": time_json}, human + "\n\n" + time_text
        emit(fmt, data, human)


def _solve_budget(fmt, lang, explain, opts, world, targets, given, request) -> None:
    """`--time-budget`: the max_steps that fit the wall time; with a target too, whether the target fits."""
    from trainsteps import solver as engine
    from trainsteps.timing.report import render_budget
    from trainsteps.timing.request import solve_budget

    if len(given) > 1 or "max_steps" in given:
        raise InputError("solve.error.one_question", "solve.hint.target")
    sized = opts.get("num_examples") is not None or opts.get("dataset_tokens") is not None
    limit = None
    if given:
        if not sized:
            raise InputError("solve.error.size_missing", "solve.hint.size_missing")
        limit = engine.solve(_spec(dict(opts), world), given[0], targets[given[0]]).ceil.max_steps
    fit = solve_budget(request, opts, world, limit)
    data = {"max_steps": fit.max_steps, "time_budget": fit.to_dict(lang), "time": fit.estimate.to_dict(lang)}
    covered = None
    if sized:
        cov, _ = engine.covers(_spec(dict(opts), world), fit.max_steps)
        data["covers"] = cov.to_dict(lang)
        from trainsteps.i18n import label

        parts = [f"{cov.epochs:,.4g} {label('unit.epochs', lang)}" if cov.epochs is not None else None,
                 f"{cov.samples_seen:,} {label('unit.examples', lang)}",
                 f"{cov.tokens_seen:,} {label('unit.tokens', lang)}" if cov.tokens_seen else None]
        covered = ", ".join(p for p in parts if p)
    fits = None if limit is None else fit.max_steps >= limit
    emit(fmt, data, render_budget(fit, lang, explain, covered, fits))


_RL_SETTINGS = {"framework", "rl_overrides", "response_length", "num_examples", "world_size", "gpus", "nodes", "time_budget",
                "safety_margin", "explain", "fmt", "lang"}
"""What `solve --framework verl ...` reads (with the time settings): the RL plan's own settings and its budget."""


def _solve_rl(fmt: str, lang: str, explain: bool, opts: dict) -> None:
    """`solve --framework verl --time-budget 24h ...`: the RL planner's plan with its budget (the same request as
    `plan --framework verl ... --time-budget 24h`)."""
    from trainsteps.planners import TIME, dispatch
    from trainsteps.request import PlanRequest

    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name not in _RL_SETTINGS | TIME and _given(param.name):
            raise InputError("solve.error.rl_option", "solve.hint.rl_option", option=param.opts[0])
    if not opts.get("time_budget"):
        raise InputError("solve.error.rl_budget", "solve.hint.rl_budget")
    given = frozenset(name for name in opts if _given(name)) - {"framework"}
    request = PlanRequest(settings={**opts, "explain": explain}, given=given, framework=opts["framework"], fmt=fmt, lang=lang,
                          explain=explain)
    answer = dispatch(request)
    emit(fmt, answer.data, answer.human)


def _given(name: str) -> bool:
    return click.get_current_context().get_parameter_source(name) in _GIVEN


def _option(name: str) -> str:
    return {"rl_overrides": "--set"}.get(name) or "--" + name.replace("_", "-")


_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
"""Where a setting the user gave comes from (a default does not count)."""
_LAYOUT_SETTINGS = {"global_batch", "max_per_device_batch", "world_size", "gpus", "nodes", "fmt", "lang"}
"""What `solve --global-batch N` reads: every per-device batch x accumulation that reaches N on these ranks."""


def _refuse_unused_by_layouts() -> None:
    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name not in _LAYOUT_SETTINGS and ctx.get_parameter_source(param.name) in _GIVEN:
            raise InputError("solve.error.layout_option", "solve.hint.layout_option", option=param.opts[0])



def _time_request(opts: dict, lang: str, explain: bool) -> dict | None:
    """The time and budget options, taken out of `opts`; None when none asks for a time."""
    from trainsteps.planners import TIME, asks_time, refuse_time_refiners

    names = [*TIME, "time_budget", "safety_margin", "save_every"]
    ctx = click.get_current_context()
    given = {name for name in names if ctx.get_parameter_source(name) in _GIVEN}
    request = {name: opts.pop(name, None) for name in names}
    refuse_time_refiners(given, request)
    for name in ("safety_margin", "save_every"):
        if name in given and not request.get("time_budget"):
            raise InputError("time.error.refines_budget", "time.hint.refines_budget", option="--" + name.replace("_", "-"))
    if not asks_time(request) and not request.get("time_budget"):
        return None
    return {**request, "lang": lang, "explain": explain, "seq_length": opts.get("seq_length"), "gpus_flag": opts.get("gpus"),
            "nodes_flag": opts.get("nodes"), "world_flag": opts.get("world_size")}


def _spec(opts: dict, world: int):
    from trainsteps.spec import RunSpec

    dispatch = False if opts.pop("no_dispatch_batches") else None
    return RunSpec(world_size=world, transformers=opts.pop("transformers_version"), dispatch_batches=dispatch, **opts)


from trainsteps.cli.timing import time_params  # noqa: E402 - the time and budget options, declared with plan's

solve_command.params += time_params(budget=True)
