"""The time options of `plan` and `solve` (`--step-time`, `--timing-from`, `--model`, `--gpu`, ...) and the "Time"
section they add to the output. The arithmetic lives in `trainsteps.timing`; this module only reads options and
files, picks the best rate available, and renders.

`time_options(command)` adds the options and takes them out before the command runs; when one is given, the
command's output (through `output.emit`) gets a top-level `time` object and a "Time" section.
"""

from __future__ import annotations

import click

DTYPES = ("bf16", "fp16", "fp8", "tf32", "fp32")
META_KEY = "trainsteps.time"

_OPTIONS = [
    click.option("--step-time", help="Time: measured seconds per optimizer step (4, 4s, 2.5m, 1h30m)."),
    click.option("--tokens-per-second", help="Time: measured tokens/s of all GPUs together, or per GPU as N/gpu (3500/gpu)."),
    click.option("--samples-per-second", help="Time: measured samples/s of all GPUs together, or per GPU as N/gpu."),
    click.option("--timing-from", type=click.Path(exists=True), metavar="LOG",
                 help="Time: read the rate from a log explain reads (bars, train_runtime, trainer_state.json, "
                 "LLaMA-Factory trainer_log.jsonl, Megatron, Lightning)."),
    click.option("--model", "model_path", metavar="PATH", help="Time (FLOPs model): config.json or a model folder holding one."),
    click.option("--params", help="Time (FLOPs model): parameters, e.g. 7.6e9 or 7.6B (no attention term)."),
    click.option("--gpu", "gpu_name", help="Time (FLOPs model): accelerator, e.g. h100-sxm, a100-80g, rtx4090, ascend-910b."),
    click.option("--dtype", type=click.Choice(DTYPES), default="bf16", show_default=True, help="Time (FLOPs model): compute type."),
    click.option("--mfu", help="Time (FLOPs model): model FLOPs utilisation, 0.35 or a range 0.3-0.5 (default by setup)."),
    click.option("--training", type=click.Choice(["full", "lora", "qlora", "frozen"]), default=None,
                 help="Time (FLOPs model): what is trained (default: full, or the config's finetuning_type)."),
    click.option("--eval-examples", type=int, help="Time: rows in the evaluation set (forward-only FLOPs per evaluation)."),
    click.option("--eval-time", help="Time: measured seconds per evaluation."),
    click.option("--save-time", help="Time: measured seconds per checkpoint save."),
    click.option("--prepare-time", help="Time: tokenization/preprocessing before the first step."),
    click.option("--price-per-gpu-hour", type=float, help="Time: price of one GPU-hour, for the cost."),
    click.option("--currency", default="USD", show_default=True, help="Time: currency of --price-per-gpu-hour."),
]
BUDGET_OPTIONS = [
    click.option("--time-budget", help="Solve: the max_steps that fit this wall time (12h, 1-12:00:00 as in SLURM)."),
    click.option("--safety-margin", type=float, default=0.10, show_default=True, help="Solve: share of --time-budget kept free."),
    click.option("--save-every", help="Solve: checkpoint cadence as a duration (default: a tenth of --time-budget)."),
]
NAMES = ("step_time", "tokens_per_second", "samples_per_second", "timing_from", "model_path", "params", "gpu_name",
         "dtype", "mfu", "training", "eval_examples", "eval_time", "save_time", "prepare_time", "price_per_gpu_hour",
         "currency")
_ASKS = ("step_time", "tokens_per_second", "samples_per_second", "timing_from", "model_path", "params", "gpu_name")


def time_options(command: click.Command, budget: bool = False) -> click.Command:
    """Add the time options to a command; their values go to `ctx.meta[META_KEY]` (only when one asks for time)."""
    def holder(**kwargs):
        return None

    for option in reversed(_OPTIONS + (BUDGET_OPTIONS if budget else [])):
        holder = option(holder)
    added = click.command("holder")(holder).params
    command.params += added
    names = [p.name for p in added]
    callback = command.callback

    def with_time(**kwargs):
        request = {name: kwargs.pop(name, None) for name in names}
        if any(request.get(name) is not None for name in _ASKS) or request.get("time_budget"):
            ctx = click.get_current_context()
            ctx.meta[META_KEY] = {**request, "lang": kwargs.get("lang", "en"), "explain": kwargs.get("explain", False),
                                  "seq_length": kwargs.get("seq_length"), "gpus_flag": kwargs.get("gpus"),
                                  "nodes_flag": kwargs.get("nodes"), "world_flag": kwargs.get("world_size")}
        return callback(**kwargs)

    command.callback = with_time
    return command


# ------------------------------------------------------------------ output

def attach_time(ctx: click.Context, data: dict, human: str) -> tuple[dict, str]:
    """Add `time` to a plan's JSON and a "Time" section to its text (called by `output.emit`)."""
    request = ctx.meta.get(META_KEY)
    if not request or "run" not in data or not isinstance(data.get("run"), dict):
        return data, human
    from trainsteps.timing.report import render_time
    from trainsteps.timing.request import estimate_for_plan

    lang = request["lang"]
    result = estimate_for_plan(data, request, ctx.meta.get("trainsteps.counted"))
    return {**data, "time": result.to_dict(lang)}, _answer_with_time(human, result, lang) + "\n\n" + render_time(
        result, lang, request.get("explain"))


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


