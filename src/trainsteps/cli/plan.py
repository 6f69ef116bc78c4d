"""`trainsteps plan`: the banner and the real run of a training job, before it starts."""

from __future__ import annotations

import click

from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, user_errors

# ---- pretraining frameworks (neox, megatron, deepspeed, lightning) -------------------------------
# Their options and the dispatch live in cli/plan_pretrain.py; used below in exactly three places,
# each marked "pretraining": the --framework choices, the @pretrain_options decorator, the dispatch
# (which also removes the pretraining options before the Hugging Face path reads the rest).
from trainsteps.cli.plan_pretrain import (
    PRETRAIN_FRAMEWORKS,
    check_framework_options,
    drop_pretrain_options,
    pretrain_options,
    run_pretrain,
)
from trainsteps.cli.plan_rl import RL_FRAMEWORKS, rl_plan  # RL trainers (verl, OpenRLHF, EasyR1): cli/plan_rl.py
from trainsteps.errors import InputError

# ---- end of the pretraining block ----------------------------------------------------------------


@click.command("plan")
@click.argument("configs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--launch", help='Launch command line, for the process count: "torchrun --nproc_per_node 4 train.py".')
@click.option("--framework-version", help="Release of the wrapper read from the config (LLaMA-Factory, TRL, Axolotl, ms-swift).")
@click.option("--framework", type=click.Choice(["hf", *PRETRAIN_FRAMEWORKS, *RL_FRAMEWORKS]), default="hf", show_default=True,  # pretraining, RL
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
@click.option("--streaming", is_flag=True, help="Iterable dataset without a length (needs --max-steps); --num-examples is one pass.")
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
@pretrain_options  # pretraining
@FORMAT_OPTION
@LANG_OPTION
@click.pass_context
def plan_command(ctx: click.Context, fmt: str, lang: str, explain: bool, compare_versions: bool, framework: str,
                 configs: tuple[str, ...], launch: str | None, framework_version: str | None, **opts) -> None:
    """Predict the banner and the real run of a Hugging Face Trainer job.

    CONFIG files (LLaMA-Factory / Axolotl / TRL / ms-swift YAML, TrainingArguments JSON or YAML, DeepSpeed JSON,
    accelerate config, a checkpoint's trainer_state.json) are read first; options typed on the command line
    override them.

    \b
    Example (seed 001: 1,047 rows, batch 10, accumulation 8, 300 epochs, 1 GPU):
      trainsteps plan --num-examples 1047 --per-device-train-batch-size 10 \\
        --gradient-accumulation-steps 8 --num-train-epochs 300 --transformers 4.49.0
    """
    with user_errors(lang):
        check_framework_options(ctx, framework)
        if framework in PRETRAIN_FRAMEWORKS:  # pretraining
            if configs or launch:  # their config files are not read: say so rather than plan without them
                raise InputError("pt.error.configs", "pt.hint.configs", framework=framework)
            try:
                return run_pretrain(framework, opts, fmt, lang, explain)
            except (ValueError, ZeroDivisionError) as exc:  # the rules refuse settings the framework would refuse
                raise InputError("pt.error.settings", "pt.hint.settings", detail=str(exc) or type(exc).__name__) from exc
        seq_length = opts.get("seq_length")  # one option for both: tokens per packed row of a stream
        opts = drop_pretrain_options(opts)  # pretraining
        opts["seq_length"] = seq_length
        if configs or launch:
            from trainsteps.cli.plan_configs import plan_from_configs

            plan_from_configs(ctx, fmt, lang, explain, list(configs), launch, framework_version, opts)
            return
        spec = spec_from_options(opts)
        if compare_versions:
            from trainsteps.compare import compare_families, render_comparison

            rows = compare_families(spec)
            emit(fmt, {"comparison": [row.to_dict(lang) for row in rows]}, render_comparison(rows, lang))
            return
        from trainsteps import plan
        from trainsteps.report import render_schedule

        schedule = plan(spec, framework=framework)
        attach_known_tokens(schedule, spec, lang)
        emit(fmt, with_tokens_note(schedule.to_dict(lang)), answer_first(schedule, lang, render_schedule(schedule, lang, explain)))


def attach_known_tokens(schedule, spec, lang: str) -> None:
    """Tokens per step / epoch / run whenever the data's tokens are known: counted with `--data` (and a tokenizer),
    or every row `--seq-length` tokens (packed rows, `--dataset-tokens` streams)."""
    context = click.get_current_context(silent=True)
    profile = context.meta.get("trainsteps.token_profile") if context else None
    if profile is None and not spec.seq_length:
        return  # tokens unknown: the token module is not loaded
    from trainsteps import tokens

    if profile is None:
        rows = spec.num_examples or (spec.dataset_tokens // spec.seq_length if spec.dataset_tokens else None)
        if rows:
            profile = tokens.fixed(rows, spec.seq_length)
    if profile is not None and schedule.run.samples_seen is not None:
        tokens.attach(schedule, profile, lang)


def with_tokens_note(data: dict) -> dict:
    context = click.get_current_context(silent=True)
    note = context.meta.get("trainsteps.tokens_unknown") if context else None
    return {**data, "tokens_unknown": note} if note else data


def answer_first(schedule, lang: str, body: str, wrapper: str | None = None, extra: str | None = None) -> str:
    """The one-line answer, then the report (and, when tokens could not be counted, why)."""
    from trainsteps.answer import plan_line

    context = click.get_current_context(silent=True)
    meta = context.meta if context else {}
    head = plan_line(schedule, lang, packed=bool(meta.get("trainsteps.packed")), wrapper=wrapper)
    if extra:
        head += " · " + extra
    note = meta.get("trainsteps.tokens_unknown")
    return head + ("\n" + note if note else "") + "\n\n" + body


def spec_from_options(opts: dict):
    from trainsteps.spec import RunSpec

    world = opts.pop("world_size")
    gpus, nodes = opts.pop("gpus"), opts.pop("nodes")
    if world is not None and gpus is not None:
        raise InputError("cli.error.world_twice", "cli.hint.world_twice")
    if gpus is not None:
        world = gpus * (nodes or 1)
    elif nodes is not None:
        raise InputError("cli.error.nodes_without_gpus", "cli.hint.world_twice")
    epochs = opts.pop("num_train_epochs")
    even = not opts.pop("no_even_batches")
    dispatch = False if opts.pop("no_dispatch_batches") else None
    if opts["streaming"] and opts["max_steps"] > 0 and opts["num_examples"] is None and opts["dataset_tokens"] is None:
        raise InputError("stream.error.no_size", "stream.hint.no_size")
    return RunSpec(
        world_size=1 if world is None else world,
        num_train_epochs=3.0 if epochs is None else epochs,
        even_batches=even,
        dispatch_batches=dispatch,
        transformers=opts.pop("transformers_version"),
        **opts,
    )


# --- count: `plan --data PATH --tokenizer PATH [--packing NAME]` counts the data to get --num-examples ---
from trainsteps.cli.data_options import plan_data_options  # noqa: E402 - extends the command defined above

plan_command = plan_data_options(plan_command)
# --- end count ---

# --- time: `plan --step-time / --timing-from / --model --gpu ...` adds the "Time" section (cli/timing.py) ---
from trainsteps.cli.timing import time_options  # noqa: E402 - extends the command defined above

plan_command = time_options(plan_command)
# --- end time ---

plan_command = rl_plan(plan_command)  # RL: verl / OpenRLHF / EasyR1 runs are planned by cli/plan_rl.py
