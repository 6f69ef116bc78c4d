"""The time options of `plan` and `solve` (`--step-time`, `--timing-from`, `--model`, `--gpu`, ...). The time of a plan
is attached by `trainsteps.planners.time`; the arithmetic lives in `trainsteps.timing`.
"""

from __future__ import annotations

import click

DTYPES = ("bf16", "fp16", "fp8", "tf32", "fp32")

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
    click.option("--peak-tflops", type=float, help="Time (FLOPs model): peak dense TFLOP/s of one accelerator, for a card "
                 "--gpu does not list (or to replace its figure)."),
    click.option("--stack", type=click.Choice(["megatron", "nemo", "fsdp", "torchtitan", "hf", "trainer", "deepspeed", "peft",
                                               "unsloth"], case_sensitive=False),
                 help="Time (FLOPs model): the training stack, for the fitted MFU (default: from the config, else a range)."),
    click.option("--activation-checkpointing", type=click.Choice(["none", "full", "selective"]),
                 help="Time (FLOPs model): activation (gradient) checkpointing, for the fitted MFU (default: the config's "
                 "gradient_checkpointing, else a range)."),
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


def time_params(budget: bool = False) -> list[click.Parameter]:
    """The click parameters of the time options (and, for `solve`, the budget options)."""
    def holder(**kwargs):
        return None

    for option in reversed(_OPTIONS + (BUDGET_OPTIONS if budget else [])):
        holder = option(holder)
    return click.command("holder")(holder).params
