"""The pretraining options of `trainsteps plan` (`--framework neox|megatron|deepspeed|lightning`); the planners are in
`trainsteps.planners.pretrain`. The shared options (world size, GPUs, tensor/context parallel size, gradient
accumulation, batch size, max steps, drop last) are the plan command's own.
"""

from __future__ import annotations

import click

_OPTIONS = [
    click.option("--seq-length", type=click.IntRange(min=1), help="[neox/megatron] Tokens per sample window; [hf] tokens per packed row of a stream; for the time model, tokens per row (unpacked rows: their typical padded length)."),
    click.option("--data-prefix", multiple=True, help="[neox/megatron] Prefix of a .bin/.idx pair (repeat for a blend)."),
    click.option("--data-weight", type=click.FloatRange(min=0), multiple=True, help="[neox/megatron] Blend weight, one per --data-prefix."),
    click.option("--train-tokens", type=click.IntRange(min=1), help="[neox/megatron] Tokens in the train split, when there is no .idx to read."),
    click.option("--split", "data_split", help="[neox/megatron] Train/valid/test weights (default '969, 30, 1')."),
    click.option("--train-iters", type=click.IntRange(min=1), help="[neox/megatron] Iterations (optimizer steps)."),
    click.option("--train-samples", type=click.IntRange(min=1), help="[megatron] Sample-based training."),
    click.option("--train-epochs", type=click.IntRange(min=1), help="[neox] Epochs; iterations are inferred from the train loader."),
    click.option("--global-batch-size", type=click.IntRange(min=1), help="[megatron] Samples per iteration."),
    click.option("--micro-batch-size", type=click.IntRange(min=1), help="[neox/megatron/deepspeed] Samples per micro-batch per data-parallel rank."),
    click.option("--train-batch-size", type=click.IntRange(min=1), help="[neox/deepspeed] train_batch_size."),
    click.option("--pipeline-parallel-size", type=click.IntRange(min=1), default=1, show_default=True, help="[neox/megatron] Pipeline stages."),
    click.option("--expert-parallel-size", type=click.IntRange(min=1), default=1, show_default=True, help="[megatron] Expert parallel size (does not reduce dp)."),
    click.option("--rampup-batch-size", type=click.IntRange(min=1), nargs=3, default=None, help="[megatron] START INCREMENT SAMPLES."),
    click.option("--decrease-batch-size-if-needed", is_flag=True, help="[megatron] Round the global batch down."),
    click.option("--step-batch-size-schedule", help="[megatron >= 0.18.0] \"THRESHOLD:BATCH ...\", thresholds in tokens "
                 "(K/M/B/T), e.g. \"0:768 250B:1536\"; replaces --global-batch-size."),
    click.option("--megatron-version", help="[megatron] megatron-core release (default: newest known, 0.19.0); "
                 "decides between --rampup-batch-size and --step-batch-size-schedule."),
    click.option("--eval-interval", type=click.IntRange(min=1), help="[neox/megatron] Iterations between evaluations (default 1000)."),
    click.option("--eval-iters", type=click.IntRange(min=0), default=100, show_default=True, help="[neox/megatron] Iterations per evaluation."),
    click.option("--eval-global-batch-size", type=click.IntRange(min=1), help="[megatron] Evaluation global batch."),
    click.option("--save-interval", type=click.IntRange(min=1), help="[neox/megatron] Save every N iterations (NeoX checkpoint_factor)."),
    click.option("--warmup", type=click.FloatRange(min=0, max=1), default=0.01, show_default=True, help="[neox] Warmup fraction."),
    click.option("--lr-warmup-iters", type=click.IntRange(min=0), default=0, show_default=True, help="[megatron] Warmup iterations."),
    click.option("--seed", type=int, default=1234, show_default=True, help="[neox] Seed (part of the index-map file names)."),
    click.option("--neox-version", default="main", show_default=True, help="[neox] 1.0, 2.0 or main."),
    click.option("--megatron-code", type=click.Choice(["core", "legacy"]), default="core", show_default=True,
                 help="[megatron] megatron-core datasets or the legacy megatron/data."),
    click.option("--deepspeed-config", type=click.Path(dir_okay=False), help="[deepspeed] ds_config.json; \"auto\" values are "
                 "filled from --per-device-train-batch-size / --gradient-accumulation-steps as the HF Trainer does."),
    click.option("--unsupervised-rows", type=click.IntRange(min=0), help="[llamafactory-v1] Rows whose answer lies entirely "
                 "past cutoff_len: main drops them at batching, so its epochs are shorter and the run goes into extra epochs."),
    click.option("--max-epochs", type=click.IntRange(min=-1), help="[lightning] Trainer(max_epochs); None -> 1000 (or -1 with max_steps)."),
    click.option("--limit-train-batches", help="[lightning] int (batches) or float (fraction)."),
]



def pretrain_options(func):
    for option in reversed(_OPTIONS):
        func = option(func)
    return func
