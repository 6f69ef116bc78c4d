"""`trainsteps plan`: the banner and the real run of a training job, before it starts.

This module only declares the options and prints: the options become one `PlanRequest`, `planners.dispatch` plans
it (and refuses any option the chosen planner does not use), and the answer is printed as it comes.
"""

from __future__ import annotations

import click
from click.core import ParameterSource

from trainsteps.cli.data_options import plan_data_params
from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, user_errors
from trainsteps.cli.plan_pretrain import pretrain_options
from trainsteps.cli.plan_rl import rl_params
from trainsteps.cli.timing import time_params
from trainsteps.planners import FRAMEWORKS

_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


@click.command("plan")
@click.argument("configs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--launch", help='Launch command line, for the process count: "torchrun --nproc_per_node 4 train.py".')
@click.option("--framework-version", help="Release of the wrapper read from the config (LLaMA-Factory, TRL, Axolotl, ms-swift).")
@click.option("--framework", type=click.Choice(FRAMEWORKS), default="hf", show_default=True,
              help="Training framework to model.")
@click.option("--num-examples", type=int, help="Rows in the training set as the Trainer sees it (after preprocessing/packing).")
@click.option("--per-device-train-batch-size", type=int, default=8, show_default=True, help="Rows per micro-batch per process.")
@click.option("--gradient-accumulation-steps", type=int, default=1, show_default=True, help="Micro-batches per optimizer step.")
@click.option("--world-size", type=int, help="Number of processes (ranks).")
@click.option("--gpus", type=int, help="GPUs per node (world size = gpus x nodes).")
@click.option("--nodes", type=int, default=None, help="Nodes (with --gpus).")
@click.option("--tensor-parallel-size", type=int, default=1, show_default=True, help="Tensor-parallel group size.")
@click.option("--context-parallel-size", type=int, default=1, show_default=True, help="Context-parallel group size.")
@click.option("--sequence-parallel-size", type=int, default=1, show_default=True, help="Sequence-parallel group size (transformers 5.x).")
@click.option("--num-train-epochs", type=float, default=None, help="Epochs (fractions allowed). Default 3.")
@click.option("--max-steps", type=int, default=-1, help="Optimizer steps; overrides epochs.")
@click.option("--dataloader-drop-last", is_flag=True, help="Drop the incomplete last batch.")
@click.option("--split-batches", is_flag=True, help="accelerate split_batches.")
@click.option("--no-even-batches", is_flag=True, help="accelerate even_batches=False.")
@click.option("--streaming", is_flag=True, help="Iterable dataset without a length (needs --max-steps; [swift-megatron] --train-iters); --num-examples is one pass.")
@click.option("--dataset-tokens", type=int, help="Streams: tokens in one pass over a packed stream (with --seq-length).")
@click.option("--no-dispatch-batches", is_flag=True, help="Streams: accelerate dispatch_batches=False (each rank reads its own part).")
@click.option("--transformers", "transformers_version", help="transformers release to model (default: newest known).")
@click.option("--resume-from-step", type=int, help="Resume from checkpoint-K.")
@click.option("--warmup-ratio", type=float, help="Warmup as a fraction of the steps.")
@click.option("--warmup-steps", type=float, help="Warmup steps (5.x: below 1 is a fraction).")
@click.option("--logging-strategy", default="steps", show_default=True, help="steps | epoch | no")
@click.option("--logging-steps", type=float, default=500, show_default=True, help="Log every N steps (below 1: fraction).")
@click.option("--logging-first-step", is_flag=True, help="Also log step 1.")
@click.option("--eval-strategy", default="no", show_default=True, help="steps | epoch | no")
@click.option("--eval-steps", type=float, help="Evaluate every N steps (below 1: fraction).")
@click.option("--eval-delay", type=float, default=0, show_default=True, help="No evaluation before this step/epoch.")
@click.option("--save-strategy", default="steps", show_default=True, help="steps | epoch | best | no")
@click.option("--save-steps", type=float, default=500, show_default=True, help="Save every N steps (below 1: fraction).")
@click.option("--metric-for-best-model", help="Metric save_strategy best compares (e.g. loss).")
@click.option("--greater-is-better/--lower-is-better", default=None, help="Direction of --metric-for-best-model (default: the Trainer's).")
@click.option("--improving-evals", default="all", show_default=True,
              help="save_strategy best: which evaluations improve the metric: all (upper bound), first, or steps '14,28'.")
@click.option("--trainable-parameters", type=int, help="Model's trainable parameters, to print the banner's last line.")
@click.option("--compare-versions", is_flag=True, help="Show the same settings under every release family side by side.")
@click.option("--explain", is_flag=True, help="Show where every number comes from.")
@pretrain_options
@FORMAT_OPTION
@LANG_OPTION
@click.pass_context
def plan_command(ctx: click.Context, configs: tuple[str, ...], **settings) -> None:
    """Predict the banner and the real run of a training job (the Hugging Face Trainer and the wrappers built on it,
    TRL's SFT, DPO, KTO, GRPO and RLOO trainers, GPT-NeoX, Megatron, DeepSpeed, Lightning, torchtitan, LitGPT; RL on
    verl, OpenRLHF, EasyR1, TRL PPO, slime, AReaL, open-instruct, TRL's async GRPO, prime-rl, ROLL).

    CONFIG files (LLaMA-Factory / Axolotl / TRL / ms-swift YAML, TrainingArguments JSON or YAML, DeepSpeed JSON,
    accelerate config, a checkpoint's trainer_state.json, an RL trainer's YAML) are read first; options typed on the
    command line override them. An option the chosen framework does not use is refused, never ignored.

    \b
    Example (seed 001: 1,047 rows, batch 10, accumulation 8, 300 epochs, 1 GPU):
      trainsteps plan --num-examples 1047 --per-device-train-batch-size 10 \\
        --gradient-accumulation-steps 8 --num-train-epochs 300 --transformers 4.49.0
    """
    from trainsteps.planners import dispatch

    request = request_from(ctx, configs, settings)
    with user_errors(request.lang):
        answer = dispatch(request)
    for note in answer.notes:
        click.echo(note, err=True)
    emit(request.fmt, answer.data, answer.human)


def request_from(ctx: click.Context, configs: tuple[str, ...], settings: dict):
    """The one request of this command line: every setting, and which of them the user gave."""
    from trainsteps.request import PlanRequest

    given = {name for name in settings if ctx.get_parameter_source(name) in _GIVEN} - {"framework"}
    if configs:
        given.add("configs")
    return PlanRequest(settings=settings, given=frozenset(given), configs=tuple(configs), launch=settings.get("launch"),
                       framework=settings["framework"], fmt=settings["fmt"], lang=settings["lang"],
                       explain=bool(settings["explain"]))


plan_command.params += plan_data_params() + time_params() + rl_params()
