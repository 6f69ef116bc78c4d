"""`trainsteps plan --framework neox|megatron|deepspeed|lightning`: options and dispatch.

The options are added to the `plan` command by `pretrain_options`; the shared ones (world size,
GPUs, tensor/context parallel size, gradient accumulation, batch size, max steps, drop last)
are the plan command's own.
"""

from __future__ import annotations

import click

from trainsteps.errors import InputError

PRETRAIN_FRAMEWORKS = ("neox", "megatron", "deepspeed", "lightning")

_OPTIONS = [
    click.option("--seq-length", type=click.IntRange(min=1), help="[neox/megatron] Tokens per sample window; [hf] tokens per packed row of a stream."),
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
    click.option("--max-epochs", type=click.IntRange(min=-1), help="[lightning] Trainer(max_epochs); None -> 1000 (or -1 with max_steps)."),
    click.option("--limit-train-batches", help="[lightning] int (batches) or float (fraction)."),
]


_NAMES: set[str] = set()
"""The pretraining options' parameter names, noted when `pretrain_options` adds them to the command."""


def drop_pretrain_options(opts: dict) -> dict:
    """The plan options without the pretraining-only ones (for the Hugging Face path)."""
    return {k: v for k, v in opts.items() if k not in _NAMES}


def pretrain_options(func):
    before = len(getattr(func, "__click_params__", ()))
    for option in reversed(_OPTIONS):
        func = option(func)
    _NAMES.update(param.name for param in func.__click_params__[before:])
    return func


def check_framework_options(ctx: click.Context, framework: str) -> None:
    """An option tagged for other frameworks ("[neox/megatron] ...") and typed on the command line is an error, not
    silently ignored."""
    import re

    for param in ctx.command.params:
        if not isinstance(param, click.Option) or not _given(param.name):
            continue
        tags = {name for group in re.findall(r"\[([a-z/]+)\]", param.help or "") for name in group.split("/")}
        if tags and framework not in tags:
            raise InputError("cli.error.option_framework", "cli.hint.option_framework", option=param.opts[0],
                             frameworks=", ".join(sorted(tags)), framework=framework)


def _given(name: str) -> bool:
    ctx = click.get_current_context()
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _world(opts: dict) -> int:
    world, gpus, nodes = opts.get("world_size"), opts.get("gpus"), opts.get("nodes")
    for name, value in (("world_size", world), ("gpus", gpus), ("nodes", nodes)):
        if value is not None and value < 1:  # the Trainer path checks these in validate.py; the pretraining rules need it too
            raise InputError("input.positive_int", "input.hint.positive_int", name=name, value=value)
    if world is not None and gpus is not None:
        raise InputError("cli.error.world_twice", "cli.hint.world_twice")
    if gpus is not None:
        return gpus * (nodes or 1)
    return 1 if world is None else world


def _dataset(opts: dict):
    prefixes = opts.get("data_prefix") or ()
    if not prefixes:
        return None, ()
    from trainsteps.data.idx import IdxReader

    readers = tuple(IdxReader(p) for p in prefixes)
    return readers, tuple(opts.get("data_weight") or ())


def run_pretrain(framework: str, opts: dict, fmt: str, lang: str, explain: bool) -> None:
    from trainsteps.cli.output import emit
    from trainsteps.report_pretrain import render_deepspeed, render_lightning, render_pretrain

    if framework == "deepspeed":
        from trainsteps.frameworks.deepspeed import plan_deepspeed

        dp = _world(opts) // (opts["tensor_parallel_size"] * opts["pipeline_parallel_size"])
        tb, mb = opts.get("train_batch_size"), opts.get("micro_batch_size")
        if mb is None and _given("per_device_train_batch_size"):  # the HF name of train_micro_batch_size_per_gpu
            mb = opts["per_device_train_batch_size"]
        ga = opts["gradient_accumulation_steps"] if _given("gradient_accumulation_steps") else None
        if opts.get("deepspeed_config"):
            tb, mb, ga = _from_ds_config(opts, dp)
        result = plan_deepspeed(dp, tb, mb, ga)
        emit(fmt, result.to_dict(lang), render_deepspeed(result, lang, explain))
        return
    if framework == "lightning":
        from trainsteps.frameworks.lightning import LightningSpec, plan_lightning

        if opts.get("num_examples") is None:
            raise InputError("lit.error.no_examples", "lit.hint.no_examples")
        limit = opts.get("limit_train_batches")
        max_epochs = opts.get("max_epochs")
        if max_epochs is None and _given("num_train_epochs"):  # the HF name; Lightning's max_epochs is a whole number
            epochs = opts["num_train_epochs"]
            if epochs != int(epochs):
                raise InputError("lit.error.fractional_epochs", "lit.hint.fractional_epochs", epochs=epochs)
            max_epochs = int(epochs)
        spec = LightningSpec(
            num_samples=opts["num_examples"], batch_size=opts["per_device_train_batch_size"], world_size=_world(opts),
            accumulate_grad_batches=opts["gradient_accumulation_steps"], max_epochs=max_epochs,
            max_steps=opts["max_steps"], limit_train_batches=_limit(limit), drop_last=opts["dataloader_drop_last"],
        )
        result = plan_lightning(spec)
        emit(fmt, result.to_dict(lang), render_lightning(result, lang, explain))
        return
    readers, weights = _dataset(opts)
    if framework == "neox":
        from trainsteps.frameworks.neox import NeoXSpec, plan_neox

        spec = NeoXSpec(
            global_num_gpus=_world(opts), seq_length=opts.get("seq_length") or 2048, train_batch_size=opts.get("train_batch_size"),
            train_micro_batch_size_per_gpu=opts.get("micro_batch_size"),
            gradient_accumulation_steps=opts["gradient_accumulation_steps"],  # NeoX's default is 1 too, never None
            pipe_parallel_size=opts["pipeline_parallel_size"], model_parallel_size=opts["tensor_parallel_size"],
            train_iters=opts.get("train_iters"), train_epochs=opts.get("train_epochs"),
            eval_interval=opts.get("eval_interval") or 1000, eval_iters=opts["eval_iters"], split=opts.get("data_split") or "969, 30, 1",
            dataset=readers[0] if readers and len(readers) == 1 and not weights else None, train_tokens=opts.get("train_tokens"),
            train_data_tokens=tuple(r.tokens(0, r.num_sequences) for r in readers) if readers and (weights or len(readers) > 1) else None,
            train_data_weights=weights or None, data_path=(opts.get("data_prefix") or ("data/mydataset_text_document",))[0],
            seed=opts["seed"], warmup=opts["warmup"], checkpoint_factor=opts.get("save_interval"), version=opts["neox_version"],
        )
        schedule = plan_neox(spec)
    else:
        from trainsteps.frameworks.megatron import MegatronSpec, plan_megatron

        if opts.get("micro_batch_size") is None:
            raise InputError("mega.error.micro", "mega.hint.micro")
        spec = MegatronSpec(
            world_size=_world(opts), micro_batch_size=opts["micro_batch_size"], seq_length=opts.get("seq_length") or 2048,
            global_batch_size=opts.get("global_batch_size"), tensor_model_parallel_size=opts["tensor_parallel_size"],
            pipeline_model_parallel_size=opts["pipeline_parallel_size"], context_parallel_size=opts["context_parallel_size"],
            expert_model_parallel_size=opts["expert_parallel_size"], train_iters=opts.get("train_iters"),
            train_samples=opts.get("train_samples"), rampup_batch_size=tuple(opts["rampup_batch_size"]) if opts.get("rampup_batch_size") else None,
            decrease_batch_size_if_needed=opts["decrease_batch_size_if_needed"],
            eval_interval=opts.get("eval_interval") or 1000, eval_iters=opts["eval_iters"], eval_global_batch_size=opts.get("eval_global_batch_size"),
            split=opts.get("data_split") or "969, 30, 1", dataset=readers[0] if readers and len(readers) == 1 and not weights else None,
            train_tokens=opts.get("train_tokens"), blend=readers if readers and (weights or len(readers) > 1) else None,
            blend_weights=weights or None, lr_warmup_iters=opts["lr_warmup_iters"], save_interval=opts.get("save_interval"),
            code=opts["megatron_code"], step_batch_size_schedule=opts.get("step_batch_size_schedule"),
            release=opts.get("megatron_version"),
        )
        schedule = plan_megatron(spec)
    data = schedule.to_dict(lang)
    text = render_pretrain(schedule, lang, explain)
    if readers:
        from trainsteps.report_pretrain import render_idx_summary

        summaries = [r.summary() for r in readers]
        data["datasets"] = [s.to_dict() for s in summaries]
        text = "\n".join(render_idx_summary(s, lang) for s in summaries) + "\n\n" + text
    emit(fmt, data, text)


def _from_ds_config(opts: dict, dp: int):
    """Read the batch keys of a DeepSpeed JSON config; fill "auto" as the HF Trainer integration does."""
    import os

    from trainsteps.configs.files import read_config
    from trainsteps.frameworks.deepspeed import HF_MISMATCH_FOOTER, HF_MISMATCH_HEADER, resolve_hf_batch
    from trainsteps.frameworks.framework_error import FrameworkRuleError

    path = opts["deepspeed_config"]
    if not os.path.isfile(path):
        raise InputError("ds.error.config_missing", "ds.hint.config_missing", path=path)
    config = read_config(path).data  # size, nesting, NaN and "not a mapping" checked (and named) like every config file
    keys = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    if not isinstance(config, dict):
        raise InputError("ds.error.config", "ds.hint.config", path=path, detail="the file holds no JSON object")
    for key in keys:
        value = config.get(key)
        if value not in (None, "auto") and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError("ds.error.config", "ds.hint.config", path=path,
                             detail=f"{key} is {value!r}; DeepSpeed wants a whole number of at least 1 or \"auto\"")
    if any(config.get(k) == "auto" for k in keys):
        config, mismatches = resolve_hf_batch(config, opts["per_device_train_batch_size"], opts["gradient_accumulation_steps"], dp)
        if mismatches:
            text = HF_MISMATCH_HEADER + "\n" + "\n".join(mismatches) + "\n" + HF_MISMATCH_FOOTER
            raise FrameworkRuleError("ds.error.hf_mismatch", "ds.hint.hf_mismatch", framework_error=text, mismatches="; ".join(mismatches))
    return tuple(config.get(k) for k in keys)


def _limit(text):
    if text is None:
        return 1.0
    import math

    from trainsteps.numbers import normalize

    text = normalize(text)
    try:
        return int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise InputError("lit.error.limit", "lit.hint.limit", value=text) from None
        return value
