"""The pretraining stacks planned from flags: GPT-NeoX, Megatron (token windows over .bin/.idx data), DeepSpeed's
batch triple and Lightning's stepping batches (`trainsteps plan --framework neox|megatron|deepspeed|lightning`)."""

from __future__ import annotations

from trainsteps.errors import InputError
from trainsteps.planners.table import Answer


def _settings_refused(plan):
    """The rules refuse settings the framework would refuse (ValueError, ZeroDivisionError): one line naming why."""
    import functools

    @functools.wraps(plan)
    def checked(request, counted) -> Answer:
        try:
            return plan(request, counted)
        except (ValueError, ZeroDivisionError) as exc:
            raise InputError("pt.error.settings", "pt.hint.settings", detail=str(exc) or type(exc).__name__) from exc

    return checked


def _world(opts: dict) -> int:
    from trainsteps.world import world_or_one

    return world_or_one(opts.get("world_size"), opts.get("gpus"), opts.get("nodes"))


def _dataset(opts: dict):
    prefixes = opts.get("data_prefix") or ()
    if not prefixes:
        return None, ()
    from trainsteps.data.idx import IdxReader

    readers = tuple(IdxReader(p) for p in prefixes)
    return readers, tuple(opts.get("data_weight") or ())


@_settings_refused
def plan_deepspeed(request, counted) -> Answer:
    """DeepSpeed's batch triple (train_batch_size = micro x accumulation x data-parallel ranks)."""
    from trainsteps.frameworks.deepspeed import plan_deepspeed as plan
    from trainsteps.report_pretrain import render_deepspeed

    opts = request.settings
    dp = _world(opts) // (opts["tensor_parallel_size"] * opts["pipeline_parallel_size"])
    tb, mb = opts.get("train_batch_size"), opts.get("micro_batch_size")
    if mb is None and request.gave("per_device_train_batch_size"):  # the HF name of train_micro_batch_size_per_gpu
        mb = opts["per_device_train_batch_size"]
    ga = opts["gradient_accumulation_steps"] if request.gave("gradient_accumulation_steps") else None
    if opts.get("deepspeed_config"):
        tb, mb, ga = _from_ds_config(opts, dp)
    result = plan(dp, tb, mb, ga)
    return Answer(result.to_dict(request.lang), render_deepspeed(result, request.lang, request.explain))


@_settings_refused
def plan_lightning(request, counted) -> Answer:
    """Lightning's stepping batches and epochs."""
    from trainsteps.frameworks.lightning import LightningSpec
    from trainsteps.frameworks.lightning import plan_lightning as plan
    from trainsteps.report_pretrain import render_lightning

    opts = request.settings
    rows = counted.num_examples if counted is not None and counted.num_examples is not None else opts.get("num_examples")
    if rows is None:
        raise InputError("lit.error.no_examples", "lit.hint.no_examples")
    limit = opts.get("limit_train_batches")
    max_epochs = opts.get("max_epochs")
    if max_epochs is None and request.gave("num_train_epochs"):  # the HF name; Lightning's max_epochs is a whole number
        epochs = opts["num_train_epochs"]
        if epochs != int(epochs):
            raise InputError("lit.error.fractional_epochs", "lit.hint.fractional_epochs", epochs=epochs)
        max_epochs = int(epochs)
    spec = LightningSpec(
        num_samples=rows, batch_size=opts["per_device_train_batch_size"], world_size=_world(opts),
        accumulate_grad_batches=opts["gradient_accumulation_steps"], max_epochs=max_epochs,
        max_steps=opts["max_steps"], limit_train_batches=_limit(limit), drop_last=opts["dataloader_drop_last"],
    )
    result = plan(spec)
    return Answer(result.to_dict(request.lang), render_lightning(result, request.lang, request.explain))


@_settings_refused
def plan_neox(request, counted) -> Answer:
    return _plan_token_windows("neox", request)


@_settings_refused
def plan_megatron(request, counted) -> Answer:
    return _plan_token_windows("megatron", request)


def _plan_token_windows(framework: str, request) -> Answer:
    from trainsteps.report_pretrain import render_pretrain

    opts, lang, explain = request.settings, request.lang, request.explain
    for name, option in (("data_split", "--split"), ("data_weight", "--data-weight")):
        # NeoX's --train-tokens is the train split already; Megatron splits its --train-tokens corpus
        if request.gave(name) and not opts.get("data_prefix") and (framework == "neox" or name == "data_weight"):
            raise InputError("pt.error.split_without_data", "pt.hint.split_without_data", option=option)
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
    return Answer(data, text)


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
