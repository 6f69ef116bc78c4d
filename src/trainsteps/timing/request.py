"""From a plan and the time options to a `TimeEstimate`: the rate from the best source (measured flags, a log, the
FLOPs model), tokens per step from the plan or the counted data, evaluation time. What `plan`, `solve` and the web
page call; the arithmetic is in `estimate.py` and `flops.py`.

`request` is a dict of the option values (None when not given): step_time, tokens_per_second, samples_per_second,
timing_from, model_path, params, gpu_name, dtype, mfu, training, eval_examples, eval_time, save_time, prepare_time,
price_per_gpu_hour, currency, seq_length, gpus_flag, nodes_flag, world_flag (and for budgets time_budget,
safety_margin, save_every). `data` is a plan's JSON (`Schedule.to_dict()`, plus `config` for `plan CONFIG`).

Reads files only where an option names them: `--timing-from LOG`, `--model` (via `model_files`), and the config files
a plan came from (LoRA kind, model folder, val_size).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from trainsteps.errors import InputError


def estimate_for_plan(data: dict, request: dict, counted: dict | None = None):
    """The TimeEstimate of a planned run (the plan's JSON) under the time options."""
    from trainsteps.timing import RunCounts, estimate

    run, inputs = data["run"], data.get("inputs") or {}
    schedule = SimpleNamespace(run=SimpleNamespace(**{k: run.get(k) for k in (
        "optimizer_steps", "eval_steps", "save_steps", "warmup_steps")}), inputs=inputs)
    schedule.run.eval_steps = schedule.run.eval_steps or []  # JSON step lists: plain, or compact (docs/json.md)
    schedule.run.save_steps = schedule.run.save_steps or []
    devices = _devices(inputs, request)
    shape_tokens = tokens_per_step(data, request, counted)
    counts = RunCounts.from_schedule(schedule, tokens_per_step=shape_tokens.tokens if shape_tokens else None,
                                     samples_per_step=_samples_per_step(run))
    rate, notes, model = choose_rate(request, counts, shape_tokens, devices, data)
    eval_seconds = duration_option(request.get("eval_time"), "--eval-time")
    if eval_seconds is None and model is not None and model.gpu is not None and counts.eval_count:
        eval_seconds = _modelled_eval(data, request, counted, model, shape_tokens, notes)
    save_seconds = duration_option(request.get("save_time"), "--save-time")
    prepare_seconds = duration_option(request.get("prepare_time"), "--prepare-time")
    tokenizing = _tokenization(counted, notes) if prepare_seconds is None and counts.start_step == 0 else None
    if model is not None:
        save_seconds, prepare_seconds = _modelled_overheads(data, model, counts, save_seconds, prepare_seconds, notes,
                                                            tokenized=tokenizing is not None)
    if tokenizing is not None:
        if prepare_seconds is None:
            notes.append(("time.note.prepare_tokenization_only", {}))
        prepare_seconds = tokenizing if prepare_seconds is None else prepare_seconds + tokenizing
    return estimate(counts, rate, eval_seconds=eval_seconds, save_seconds=save_seconds,
                    prepare_seconds=prepare_seconds, gpus=devices,
                    price_per_gpu_hour=request.get("price_per_gpu_hour"), currency=request.get("currency") or "USD",
                    notes=notes)


TOKENIZE_SPREAD = (0.5, 3.0)
"""The framework's own tokenization against the time `plan --data`'s count took on the same files: it runs the same
kind of tokenizer, but with its own template code, worker count and caching (an assumption, said in the output)."""


def _tokenization(counted: dict | None, notes: list):
    """Tokenizing the counted data before step 1, at the rate its count measured on this machine (None, with a note,
    when the count was read from the cache or counted rows only)."""
    from trainsteps.timing import Interval

    if not counted or not counted.get("tokens"):
        return None
    if counted.get("from_cache"):
        notes.append(("time.note.tokenize_cached", {}))
        return None
    seconds = float(counted.get("seconds") or 0.0)
    if seconds <= 0:
        return None
    engine = (counted.get("tokenizer_engine") or {}).get("engine") or "-"
    notes.append(("time.assume.tokenize", {"tokens": f"{counted['tokens']:,}", "rate": f"{counted['tokens'] / seconds:,.0f}",
                                           "engine": engine, "seconds": f"{seconds:,.1f}", "low": TOKENIZE_SPREAD[0],
                                           "high": TOKENIZE_SPREAD[1]}))
    return Interval(seconds * TOKENIZE_SPREAD[0], seconds, seconds * TOKENIZE_SPREAD[1])


def _modelled_overheads(data: dict, model, counts, save_seconds, prepare_seconds, notes: list, tokenized: bool = False):
    """Saves and the model load from the model's size (timing.overheads) where no measured time was given; the notes
    say whether the data's tokenization is in the preparation too."""
    from trainsteps.timing.overheads import load_gigabytes, load_seconds, modelled_save

    if save_seconds is None and counts.save_count:
        only_model = bool((data.get("inputs") or {}).get("save_only_model"))
        save_seconds, note = modelled_save(model.shape, model.training, only_model)
        notes.append(note)
    if prepare_seconds is None and counts.start_step == 0:
        prepare_seconds = load_seconds(model.shape)
        reference = _precomputed_reference(data, model, counts)
        suffix = "_tokenized" if tokenized else ""
        if reference is None:
            notes.append(("time.assume.load" + suffix, {"gb": load_gigabytes(model.shape)}))
        else:
            prepare_seconds = prepare_seconds + reference
            notes.append(("time.assume.load_and_reference" + suffix, {"gb": load_gigabytes(model.shape),
                                                                      "low": f"{reference.low:,.0f}",
                                                                      "high": f"{reference.high:,.0f}"}))
    return save_seconds, prepare_seconds


def _precomputed_reference(data: dict, model, counts):
    """`precompute_ref_log_probs`: the reference model scores every training example once before step 1, at the
    training MFU. None when nothing is precomputed or the data's size is unknown."""
    from trainsteps.timing import Interval

    inputs = data.get("inputs") or {}
    examples = inputs.get("num_examples")
    if model.preference is None or not model.preference.prepare or not examples or not counts.tokens_per_step \
            or not counts.samples_per_step:
        return None
    flops = examples * counts.tokens_per_step / counts.samples_per_step * model.preference.prepare
    capacity = model.peak * _devices(inputs, {})
    return Interval(flops / (capacity * model.mfu.high), flops / (capacity * model.mfu.expected),
                    flops / (capacity * model.mfu.low))


def duration_option(text, option):
    from trainsteps.timing import Interval, parse_duration

    return None if text is None else Interval.exact(parse_duration(text, option))


def _devices(inputs: dict, request: dict) -> int:
    """GPUs the run holds: the plan's world size, else the one the settings give."""
    from trainsteps.world import world_or_one

    world = inputs.get("world_size") or inputs.get("global_num_gpus")
    return int(world or world_or_one(request.get("world_flag"), request.get("gpus_flag"), request.get("nodes_flag")))


def _samples_per_step(run: dict) -> float | None:
    steps, samples = run.get("optimizer_steps"), run.get("samples_seen")
    return samples / steps if steps and samples else None


class TokensPerStep(SimpleNamespace):
    """tokens: per optimizer step (all ranks); attended: length the attention sees; how: message id + params."""


def tokens_per_step(data: dict, request: dict, counted: dict | None) -> TokensPerStep | None:
    """Tokens one optimizer step computes on, from the best source: the plan (pretraining, packed streams), the counted
    data (unpacked: rows x expected longest row of a micro-batch), or --seq-length."""
    from trainsteps.timing.flops import expected_longest

    run, inputs = data["run"], data.get("inputs") or {}
    steps = run.get("optimizer_steps") or 0
    rows = _samples_per_step(run)
    seq = request.get("seq_length") or inputs.get("seq_length")
    samples = run.get("samples_seen") or 0
    if run.get("padded_tokens_seen") and steps:  # unpacked batches are computed at their longest row: padding costs too
        per_step = run["padded_tokens_seen"] / steps
        # a row attends its padded length: the plan's mean padded row when no --seq-length says otherwise
        return TokensPerStep(tokens=per_step, attended=seq or (run["padded_tokens_seen"] / samples if samples else None),
                             how=("time.tokens.plan_padded", {"tokens": f"{per_step:,.0f}",
                                                              "share": f"{run.get('padding_share') or 0:.1%}"}))
    if run.get("tokens_seen") and steps:
        return TokensPerStep(tokens=run["tokens_seen"] / steps,
                             attended=seq or (run["tokens_seen"] / samples if samples else None),
                             how=("time.tokens.plan", {"tokens": f"{run['tokens_seen'] / steps:,.0f}"}))
    if rows is None:
        return None
    if counted and counted.get("lengths"):
        lengths, cutoff = counted["lengths"], counted.get("cutoff_len")
        if counted.get("packing"):
            row = cutoff or lengths["max"]
            return TokensPerStep(tokens=rows * row, attended=row, how=("time.tokens.packed", {"rows": _n(rows), "row": row}))
        micro = inputs.get("per_device_train_batch_size") or 1
        percentiles = {int(k[1:]): v for k, v in lengths.items() if k.startswith("p") and k[1:].isdigit()}
        longest = expected_longest(percentiles, lengths["min"], lengths["max"], micro, cutoff)
        return TokensPerStep(tokens=rows * longest, attended=longest,
                             how=("time.tokens.padded", {"rows": _n(rows), "row": f"{longest:,.0f}", "micro": micro,
                                                          "mean": lengths.get("mean")}))
    if seq:
        return TokensPerStep(tokens=rows * seq, attended=seq, how=("time.tokens.seq_length", {"rows": _n(rows), "row": seq}))
    return _config_packed_rows(data, rows)


PACKED_LENGTH_KEYS = ("max_length", "max_seq_length", "cutoff_len", "sequence_len")
"""The row length a packing config fills: TRL's `max_length` (`max_seq_length` before 0.20), LLaMA-Factory's
`cutoff_len`, Axolotl's `sequence_len`."""


def _config_packed_rows(data: dict, rows: float) -> TokensPerStep | None:
    """Where a config packs its rows and names their length, every row is that long (the last pack of the data is
    shorter: a few rows in a run); None where the config does not pack or names no length."""
    if not data.get("config"):
        return None
    config = raw_config(data)
    if not _packing_switch(config):
        return None
    key = next((k for k in PACKED_LENGTH_KEYS if isinstance(config.get(k), int) and config[k] > 0), None)
    if key is None:
        return None
    row = config[key]
    return TokensPerStep(tokens=rows * row, attended=row, how=("time.tokens.config_packed", {"rows": _n(rows), "row": row, "key": key}))


def _n(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _per_gpu(text: str, option: str) -> tuple[float, bool]:
    raw = str(text).strip().lower().replace(" ", "")
    per_gpu = raw.endswith(("/gpu", "pergpu"))
    number = raw.removesuffix("/gpu").removesuffix("pergpu").removesuffix("/total")
    try:
        value = float(number)
    except ValueError:
        raise InputError("time.error.rate_number", "time.hint.rate_positive", option=option, value=text) from None
    from trainsteps.timing import check_positive

    return check_positive(value, option), per_gpu


def choose_rate(request: dict, counts, shape_tokens: TokensPerStep | None, devices: int, data: dict):
    """The rate from the best source (measured flags > measured log > FLOPs model), notes, and the FLOPs model when
    one was described (for eval time and the implied MFU)."""
    from trainsteps.timing import Rate, parse_duration

    notes: list[tuple[str, dict]] = []
    measured = [name for name in ("step_time", "tokens_per_second", "samples_per_second", "timing_from") if request.get(name)]
    if len(measured) > 1:
        raise InputError("time.error.two_rates", "time.hint.two_rates", options=", ".join("--" + m.replace("_", "-") for m in measured))
    model = _flops_model(request, shape_tokens, devices, data, measured=bool(measured)) if _wants_model(request) else None
    rate = None
    if request.get("step_time"):
        seconds = parse_duration(request["step_time"], "--step-time")
        rate = Rate.from_step_seconds(seconds, "flag", f"--step-time {request['step_time']}")
    elif request.get("tokens_per_second"):
        rate = _throughput(request, "tokens_per_second", counts.tokens_per_step, "time.error.tokens_unknown",
                           Rate.from_tokens_per_second, devices, notes)
    elif request.get("samples_per_second"):
        rate = _throughput(request, "samples_per_second", counts.samples_per_step, "time.error.samples_unknown",
                           Rate.from_samples_per_second, devices, notes)
    elif request.get("timing_from"):
        rate = rate_from_log(request["timing_from"], data, notes)
    if shape_tokens is not None:
        notes.append(shape_tokens.how)
    if rate is not None:
        if model is not None and model.gpu is None:
            notes.append(("time.note.rate_wins_size_only", {"rate": rate.detail}))
        elif model is not None:
            notes.append(("time.note.rate_wins", {"rate": rate.detail}))
            rate = _with_implied_mfu(rate, model, counts, devices, notes)
        return rate, notes, model
    if model is None:
        raise InputError("time.error.no_rate", "time.hint.no_rate")
    return model.rate, notes + list(model.notes), model


def _throughput(request: dict, name: str, per_step: float | None, unknown: str, make, devices: int, notes: list):
    """--tokens-per-second / --samples-per-second (all GPUs, or N/gpu) -> a Rate, with a note saying which it was."""
    option = "--" + name.replace("_", "-")
    value, per_gpu = _per_gpu(request[name], option)
    if not per_step:
        raise InputError(unknown, "time.hint.tokens_unknown")
    total = value * devices if per_gpu else value
    notes.append(("time.note.per_gpu" if per_gpu else "time.note.total",
                  {"value": f"{value:,.6g}", "gpus": devices, "total": f"{total:,.6g}"}))
    return make(total, per_step, "flag", f"{option} {request[name]}")


def _wants_model(request: dict) -> bool:
    return any(request.get(k) for k in ("model_path", "params", "gpu_name", "peak_tflops"))


def _flops_model(request: dict, shape_tokens: TokensPerStep | None, devices: int, data: dict, measured: bool = False):
    """The FLOPs model's rate: tokens per step x FLOPs per token / (peak x devices x MFU). Beside a measured rate a
    model without a GPU is its size alone (`gpu` None): it still gives the saves and the load, not a rate."""
    from trainsteps.timing.flops import (
        model_rate,
        parse_mfu,
        preference_per_token,
        shape_from_config,
        shape_from_params,
        train_flops_per_token,
    )
    from trainsteps.timing.gpus import custom_gpu, find_gpu
    from trainsteps.timing.model_files import read_model_shape

    if request.get("mfu") is not None:
        mfu = parse_mfu(request["mfu"])  # checked first: a bad MFU is an error whatever else is missing
    if request.get("model_path") and request.get("params"):
        raise InputError("time.error.model_twice", "time.hint.model_twice")
    shape = None
    model_path = request.get("model_path") or (None if request.get("params") else _model_from_config(data))
    named = (data.get("inputs") or {}).get("model_config")  # a stack config's own model (torchtitan's flavor)
    if model_path:
        shape = read_model_shape(model_path)
    elif request.get("params"):
        shape = shape_from_params(_parse_count(request["params"]))
    elif named:
        shape = shape_from_config(named["config"], named["source"])
    gpu = find_gpu(request["gpu_name"]) if request.get("gpu_name") else None
    if request.get("peak_tflops") is not None:
        gpu = custom_gpu(request["peak_tflops"], request.get("dtype") or "bf16", gpu)
    training = request.get("training") or _training_from_config(data) or "full"
    if measured and shape is not None and gpu is None:
        return SimpleNamespace(rate=None, shape=shape, gpu=None, peak=None, mfu=None, per_token=None, notes=[],
                               training=training, preference=None)
    if shape is None or gpu is None:
        raise InputError("time.error.model_incomplete", "time.hint.model_incomplete",
                         missing="--gpu or --peak-tflops" if gpu is None else "--model or --params")
    if shape_tokens is None:
        raise InputError("time.error.tokens_unknown", "time.hint.tokens_unknown")
    dtype = request.get("dtype") or "bf16"
    preference = preference_of(data)
    if request.get("mfu") is None:
        mfu, mfu_notes = _fitted_mfu(request, data, shape, shape_tokens, gpu, devices, training, preference)
        peak = gpu.peak("bf16") if dtype == "fp8" and "fp8" in gpu.tflops else gpu.peak(dtype)  # the fit holds fp8's gain
    else:
        mfu_notes = [("time.assume.mfu_given", {"low": mfu.low, "expected": mfu.expected, "high": mfu.high})]
        peak = gpu.peak(dtype)
    per_token = train_flops_per_token(shape, shape_tokens.attended, training)
    one_row = per_token.expected
    pairs = None
    if preference is not None:
        pairs = preference_per_token(shape, shape_tokens.attended, preference.trainer, training, preference.precompute)
        per_token = pairs.train
    kind = "time.assume.flops" if shape.layers and shape_tokens.attended else \
        "time.assume.flops_no_length" if shape.layers else "time.assume.flops_no_attention"
    notes = [(kind,
              {"training": training, "flops": f"{per_token.expected:.4g}", "source": shape.source,
               "params": f"{shape.matmul_params:.4g}"}),
             ("time.assume.gpu", {"gpu": gpu.title, "tflops": f"{peak / 1e12:g}", "dtype": dtype,
                                  "devices": devices, "source": gpu.source}),
             *mfu_notes, *shape.notes]
    if pairs is not None:
        notes.insert(1, _preference_note(preference, pairs, per_token.expected / one_row))
    if training == "lora" and _eight_bit_base(data) and not request.get("training"):
        notes.append(("time.note.int8_base", {}))
    rate = model_rate(shape_tokens.tokens, per_token, peak, devices, mfu,
                      f"{shape.source}, {devices} x {gpu.name} {dtype}, MFU {mfu.low:.2g}-{mfu.high:.2g}")
    return SimpleNamespace(rate=rate, shape=shape, gpu=gpu, peak=peak, mfu=mfu, per_token=per_token, notes=notes,
                           training=training, preference=pairs)


STACKS_NAMED = {"megatron": "megatron", "nemo": "megatron", "megatron-bridge": "megatron", "fsdp": "fsdp",
                "torchtitan": "fsdp", "hf": "hf", "trainer": "hf", "deepspeed": "hf", "peft": "hf", "unsloth": "hf"}
"""`--stack` values -> the stacks the efficiency fit tells apart."""


def _fitted_mfu(request: dict, data: dict, shape, shape_tokens, gpu, devices: int, training: str, preference=None):
    """The MFU interval of timing.efficiency for this setup, and the notes that say what it rests on and which fact
    would narrow it."""
    from trainsteps.timing.efficiency import SetupFacts, estimate_mfu, hardware_level, stack_of

    config = raw_config(data) if data.get("config") else {}
    stack = STACKS_NAMED.get(str(request.get("stack") or "").lower()) or stack_of(data.get("framework"), config)
    ckpt = config.get("gradient_checkpointing")
    checkpointing = request.get("activation_checkpointing") or \
        (None if ckpt is None else ("full" if ckpt in (True, "true", "True", 1) else "none"))
    inputs = data.get("inputs") or {}
    micro = inputs.get("per_device_train_batch_size") or inputs.get("micro_batch_size") or 1
    if preference is not None:  # a micro-batch of pairs puts chosen and rejected through the policy together
        from trainsteps.timing.flops import PREFERENCE_TRAINERS

        micro *= PREFERENCE_TRAINERS[preference.trainer][0]
    facts = SetupFacts(method=training, stack=stack, checkpointing=checkpointing, dtype=request.get("dtype") or "bf16",
                       tokens_per_micro_batch=(shape_tokens.attended or 0) * micro or None,
                       active_params=shape.matmul_params, moe=shape.experts_active < 0.9, gpu=gpu.name, gpus=devices,
                       pretraining=_pretraining(data.get("framework"), training),
                       packed=_packed(config, shape_tokens, data.get("framework")))
    est = estimate_mfu(facts)
    m = est.mfu
    notes = [("time.assume.mfu_fitted", {"low": f"{m.low:.2f}", "expected": f"{m.expected:.2f}", "high": f"{m.high:.2f}",
                                         "stack": stack or _unknown_stack(request), "similar": est.similar})]
    level = hardware_level(gpu.name)
    if level:
        notes.append((f"time.note.level_{level[0]}", {"factor": f"{level[1]:.2f}"}))
    if "stack" in est.unknown:
        notes.append(("time.note.say_stack", {"spread": f"{est.stack_spread:.1f}"}))
    if "checkpointing" in est.unknown and "stack" not in est.unknown:
        notes.append(("time.note.say_checkpointing", {}))
    return m, notes


PACKING_KEYS = ("packing", "sample_packing", "neat_packing")
"""Config switches that pack rows into full sequences: TRL's and LLaMA-Factory's `packing`, Axolotl's `sample_packing`,
LLaMA-Factory's `neat_packing`."""


def _packed(config: dict, shape_tokens, framework: str | None) -> bool | None:
    """Whether the rows are packed, where the plan says so: counted rows packed or padded, a token-window framework's
    stream (Megatron, GPT-NeoX), a config's packing switch; None where nothing says (the interval stays the broader one)."""
    how = shape_tokens.how[0] if shape_tokens else None
    if how in ("time.tokens.packed", "time.tokens.config_packed") or framework in TOKEN_WINDOW_FRAMEWORKS:
        return True
    if how in ("time.tokens.padded", "time.tokens.plan_padded"):
        return False
    return _packing_switch(config)


def _packing_switch(config: dict) -> bool | None:
    """Whether a config's packing switch (PACKING_KEYS) is on; None where the config has none."""
    named = [config[key] for key in PACKING_KEYS if key in config]
    return any(value in (True, "true", "True", 1) for value in named) if named else None


TOKEN_WINDOW_FRAMEWORKS = ("megatron", "neox", "torchtitan")
"""Pretraining frameworks that cut a token stream into full windows (documents concatenated: packed rows)."""


def _pretraining(framework: str | None, training: str) -> bool | None:
    """Pretraining where the framework is a token-window pretraining one (Megatron, GPT-NeoX, torchtitan); fine-tuning
    where only adapters train; None otherwise (a full run of a Trainer-family stack is either)."""
    if framework in TOKEN_WINDOW_FRAMEWORKS:
        return True
    return False if training in ("lora", "qlora") else None


def raw_config(data: dict) -> dict:
    """The keys of the YAML/JSON config files a plan was read from, merged: read by the guarded reader, whose cache
    (by content) hands back the parse the importer already made."""
    from pathlib import Path

    from trainsteps.configs.files import read_config

    merged: dict = {}
    for entry in (data.get("config") or {}).get("files") or []:
        path = Path(str(entry).rsplit(" (", 1)[0])
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        try:
            merged.update(read_config(path).data)
        except InputError:  # the importer already reported what it could not read
            continue
    return merged


def _preference_note(preference, pairs, times: float) -> tuple[str, dict]:
    """The Time section's line saying which passes a preference example was costed with."""
    from trainsteps.timing.flops import PREFERENCE_TRAINERS

    trained, kl, reference = PREFERENCE_TRAINERS[preference.trainer]
    kind = "time.assume.preference" + ("_kto" if kl else "" if reference else "_free") + \
        ("_precomputed" if preference.precompute and reference else "")
    return kind, {"trainer": preference.trainer, "origin": preference.origin, "trained": trained, "kl": kl,
                  "reference": reference, "flops": f"{pairs.train.expected:.4g}", "times": f"{times:.2f}"}


def _unknown_stack(request: dict) -> str:
    """The stack's place in the MFU line when neither the user nor the framework says it (the next note asks for it)."""
    from trainsteps.i18n import message

    return message("time.stack_unknown", request.get("lang") or "en")


def preference_of(data: dict) -> SimpleNamespace | None:
    """The preference trainer a config runs (trainer: a key of timing.flops.PREFERENCE_TRAINERS, precompute: the
    reference log-probs computed once before training, origin: the setting that says so), or None. LLaMA-Factory:
    `stage: dpo` (its `pref_loss: orpo|simpo` has no reference model), `kto`, `rm`; Axolotl: `rl: dpo|ipo|kto|orpo|
    simpo`; ms-swift: `rlhf_type: dpo|kto|orpo|simpo|cpo|rm`; TRL: the script's DPOConfig / KTOConfig / ORPOConfig /
    CPOConfig / RewardConfig call, or a YAML with KTO or DPO keys."""
    config = data.get("config") or {}
    settings = {key: (entry or {}).get("value") for key, entry in (config.get("settings") or {}).items()}
    origins = {key: (entry or {}).get("from") for key, entry in (config.get("settings") or {}).items()}
    if config.get("framework") == "llamafactory":
        return _llamafactory_preference(settings.get("lf.stage"), raw_config(data))
    if config.get("framework") in WRAPPER_PREFERENCE:
        return _wrapper_preference(config["framework"], settings, origins)
    if config.get("framework") != "trl":
        return None
    precompute = bool(settings.get("trl.precompute_ref"))
    trainer = settings.get("trl.trainer") or ("kto" if settings.get("trl.kto") else None) or \
        ("dpo" if settings.get("trl.dpo") or precompute else None)
    if trainer is None:
        return None
    raw = raw_config(data)
    said_by = next(key for key in ("trl.trainer", "trl.kto", "trl.dpo", "trl.precompute_ref") if settings.get(key))
    where = ((config.get("settings") or {}).get(said_by) or {}).get("from")
    origin = (f"TRL {trainer.upper()}Config" if said_by == "trl.trainer" else f"TRL {trainer.upper()}") + \
        (f" ({where})" if where else "")
    if trainer == "dpo" and settings.get("trl.reference_free"):
        return SimpleNamespace(trainer="dpo_reference_free", precompute=False, origin=origin + ", reference_free")
    if trainer == "cpo" and raw.get("loss_type") == "simpo":
        trainer = "simpo"
    return SimpleNamespace(trainer=trainer, precompute=precompute and trainer in ("dpo", "kto"), origin=origin)


WRAPPER_PREFERENCE = {
    "axolotl": ("axolotl.rl", "Axolotl rl", {"dpo": "dpo", "ipo": "dpo", "kto": "kto", "orpo": "orpo", "simpo": "simpo"},
                "axolotl.precompute_ref_log_probs"),
    "swift": ("swift.rlhf_type", "ms-swift rlhf_type",
              {"dpo": "dpo", "kto": "kto", "orpo": "orpo", "simpo": "simpo", "cpo": "cpo", "rm": "reward"}, None),
}
"""A wrapper's preference key -> the trainer it runs (timing.flops.PREFERENCE_TRAINERS). Axolotl 0.19
(core/builders/rl.py): dpo and ipo run DPOTrainer, kto KTOTrainer, orpo ORPOTrainer, simpo CPOTrainer with the simpo
loss; only its DPO passes `precompute_ref_log_probs` on. ms-swift 4 (arguments/rlhf_args.py): simpo is CPO with the
simpo loss; dpo and kto score with a reference (a copy of the model under full training, the base model with the
adapter off under LoRA). Online kinds (grpo, ppo, gkd) are RL plans, not preference costing."""


def _wrapper_preference(framework: str, settings: dict, origins: dict) -> SimpleNamespace | None:
    key, label, trainers, precompute_key = WRAPPER_PREFERENCE[framework]
    kind = str(settings.get(key) or "").lower()
    if kind not in trainers:
        return None
    trainer = trainers[kind]
    where = origins.get(key)
    precompute = bool(precompute_key and settings.get(precompute_key)) and trainer == "dpo"
    origin = f"{label}: {kind}" + (f" ({where})" if where else "") + (", precompute_ref_log_probs" if precompute else "")
    return SimpleNamespace(trainer=trainer, precompute=precompute, origin=origin)


def _llamafactory_preference(stage, raw: dict) -> SimpleNamespace | None:
    stage = str(stage or raw.get("stage") or "sft")
    if stage == "dpo":
        loss = str(raw.get("pref_loss") or "sigmoid")
        trainer = loss if loss in ("orpo", "simpo") else "dpo"  # LLaMA-Factory: use_ref_model unless orpo / simpo
        return SimpleNamespace(trainer=trainer, precompute=False, origin=f"LLaMA-Factory stage: dpo, pref_loss: {loss}")
    if stage in ("kto", "rm"):
        return SimpleNamespace(trainer="kto" if stage == "kto" else "reward", precompute=False,
                               origin=f"LLaMA-Factory stage: {stage}")
    return None


def _training_from_config(data: dict) -> str | None:
    """LoRA / QLoRA / frozen from the config: LLaMA-Factory finetuning_type + quantization_bit, Axolotl adapter,
    ms-swift train_type, TRL use_peft."""
    config = raw_config(data)
    kind = str(config.get("finetuning_type") or config.get("adapter") or config.get("train_type") or "").lower()
    if not kind and config.get("use_peft"):
        kind = "lora"
    quantized = config.get("quantization_bit") in (4, "4") or bool(config.get("load_in_4bit"))
    if "lora" in kind:
        return "qlora" if quantized or "qlora" in kind else "lora"
    if "freeze" in kind:
        return "frozen"
    return "full" if kind == "full" else None


def _eight_bit_base(data: dict) -> bool:
    """LoRA over a bitsandbytes 8-bit base (Axolotl / TRL `load_in_8bit`, LLaMA-Factory `quantization_bit: 8`)."""
    config = raw_config(data) if data.get("config") else {}
    return bool(config.get("load_in_8bit")) or config.get("quantization_bit") in (8, "8")


def _model_from_config(data: dict) -> str | None:
    """A local model folder named in the config (model_name_or_path, base_model, model) that holds config.json."""
    from pathlib import Path

    config = raw_config(data)
    for key in ("model_name_or_path", "base_model", "model", "model_id_or_path"):
        value = config.get(key)
        if isinstance(value, str) and (Path(value) / "config.json").is_file():
            return value
    return None


HELD_OUT_SHARES = (("val_size", "time.assume.val_size"), ("val_set_size", "time.assume.val_set_size"))
"""Config keys that hold part of the data out for evaluation: LLaMA-Factory's val_size, Axolotl's val_set_size (both a
share of the whole data below 1, else a count of rows)."""


def _eval_rows_from_config(data: dict) -> tuple[int | None, str]:
    """The config's evaluation set and the note saying where it came from: the rows of its `eval_dataset` (read with
    the config), or a held-out share (of the whole data, so of the training rows / (1 - share)) or count."""
    named = (data.get("config") or {}).get("eval_examples")
    if named:
        return named, "time.assume.eval_dataset"
    config = raw_config(data)
    key, origin = next(((key, origin) for key, origin in HELD_OUT_SHARES if key in config), HELD_OUT_SHARES[0])
    value = config.get(key)
    rows = (data.get("inputs") or {}).get("num_examples")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None, origin
    if value < 1:
        return (round(rows * value / (1 - value)) if rows else None), origin
    return int(value), origin


def _parse_count(text: str) -> float:
    raw = str(text).strip().upper().replace(",", "").replace("_", "")
    scale = {"K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}.get(raw[-1:], 1)
    try:
        value = float(raw[:-1] if scale != 1 else raw) * scale
    except ValueError:
        raise InputError("time.error.params", "time.hint.params", value=text) from None
    if not math.isfinite(value) or value <= 0:
        raise InputError("time.error.params", "time.hint.params", value=text)
    return value


def _with_implied_mfu(rate, model, counts, devices: int, notes: list):
    """A measured rate with a model known: the MFU the rate implies, and whether that is a normal speed."""
    from trainsteps.timing import Rate
    from trainsteps.timing.flops import implied_mfu

    if not counts.tokens_per_step:
        return rate
    mfu = implied_mfu(rate.step_seconds, counts.tokens_per_step, model.per_token.expected, model.peak, devices)
    verdict = "time.note.mfu_low" if mfu.expected < model.mfu.low else "time.note.mfu_high" if mfu.expected > model.mfu.high \
        else "time.note.mfu_normal"
    notes.append((verdict, {"mfu": f"{mfu.expected:.3f}", "low": f"{model.mfu.low:.2f}", "high": f"{model.mfu.high:.2f}"}))
    return Rate(rate.step_seconds, rate.origin, rate.detail, counts.tokens_per_step, mfu, rate.assumptions)


def _eval_rows(data, request, notes) -> int | None:
    """Rows of one evaluation: `--eval-examples`, else the config's evaluation set (read once), else unknown."""
    rows = request.get("eval_examples")
    if rows is not None:
        if rows <= 0:
            raise InputError("time.error.eval_examples", "time.hint.eval_examples", value=rows)
        return rows
    rows, origin = _eval_rows_from_config(data)
    if rows:
        notes.append((origin, {"rows": f"{rows:,}"}))
    return rows or None


def _modelled_eval(data, request, counted, model, shape_tokens, notes):
    """Seconds per evaluation from forward-only FLOPs over the evaluation set."""
    from trainsteps.timing import Interval
    from trainsteps.timing.flops import eval_flops_per_token

    inputs = data.get("inputs") or {}
    if inputs.get("eval_iters") and shape_tokens and shape_tokens.attended:  # Megatron / NeoX: iterations x batch x seq
        batch = inputs.get("eval_global_batch_size") or inputs.get("global_batch_size") or inputs.get("train_batch_size") or 0
        tokens = inputs["eval_iters"] * batch * shape_tokens.attended
    else:
        rows = _eval_rows(data, request, notes)
        row = shape_tokens.attended if shape_tokens and shape_tokens.attended else None
        if rows is None or row is None:
            return None
        tokens = rows * row
    flops = tokens * (model.preference.evaluate if model.preference is not None else
                      eval_flops_per_token(model.shape, shape_tokens.attended if shape_tokens else None))
    capacity = model.peak * _devices(inputs, request)
    notes.append(("time.assume.eval_flops", {"tokens": f"{tokens:,.0f}"}))
    return Interval(flops / (capacity * model.mfu.high), flops / (capacity * model.mfu.expected),
                    flops / (capacity * model.mfu.low))


def rate_from_log(path: str, data: dict | None, notes: list):
    """The measured rate in a log file (or a trainer_state.json / trainer_log.jsonl)."""
    from trainsteps.timing.log_rates import RateReader

    total = ((data or {}).get("run") or {}).get("max_steps")
    reader = RateReader(total_hint=total)
    for line in _log_lines(path):
        reader.feed(line)
    timing = reader.result()
    if timing.rate is None:
        raise InputError("time.error.no_timing", "time.hint.no_timing", path=path)
    if timing.per == "batch":
        ga = ((data or {}).get("inputs") or {}).get("accumulate_grad_batches") or \
            ((data or {}).get("inputs") or {}).get("gradient_accumulation_steps") or 1
        from trainsteps.timing import Rate

        rate = timing.rate
        timing.rate = Rate(rate.step_seconds.scaled(ga), rate.origin, rate.detail + f" x {ga} batches per step",
                           rate.tokens_per_step, rate.mfu, rate.assumptions)
        notes.append(("time.note.batches", {"ga": ga}))
    return timing.rate


def _log_lines(path: str):
    """Lines of a log; a trainer_state.json's log_history entries become one line each."""
    import json
    from pathlib import Path

    from trainsteps.logs.text import iter_lines
    from trainsteps.logs.trainer_state import MAX_BYTES, looks_like_state

    p = Path(path)
    if p.is_dir():
        candidates = [p / "trainer_log.jsonl", p / "trainer_state.json"]
        found = [c for c in candidates if c.is_file()]
        if not found:
            raise InputError("time.error.no_timing", "time.hint.no_timing", path=path)
        p = found[0]
    with open(p, "rb") as handle:
        head = handle.read(4096)
    if looks_like_state(head) and p.stat().st_size <= MAX_BYTES:
        try:
            state = json.loads(p.read_bytes())
        except ValueError as exc:
            raise InputError("time.error.no_timing", "time.hint.no_timing", path=path) from exc
        for entry in state.get("log_history") or []:
            if isinstance(entry, dict):
                yield json.dumps(entry)
        return
    with open(p, "rb") as handle:
        yield from iter_lines(handle)



def pseudo_plan(steps: int, rows_per_step: int, seq_length: int | None, world: int, micro: int) -> dict:
    """What the time model reads from a plan, for `solve` (which plans candidates, not one run)."""
    run = {"optimizer_steps": steps, "max_steps": steps, "eval_steps": [], "save_steps": [],
           "samples_seen": steps * rows_per_step, "tokens_seen": None, "warmup_steps": 0}
    return {"framework": "hf", "run": run, "inputs": {"world_size": world, "per_device_train_batch_size": micro}}


def solve_budget(request: dict, opts: dict, world: int, step_limit: int | None):
    """`solve --time-budget 12h`: the max_steps that fit, fitted at the slow end of the rate."""
    from trainsteps.timing import RunCounts, parse_duration
    from trainsteps.timing.budget import fit_budget
    from trainsteps.validate import check_limit

    budget = parse_duration(request["time_budget"], "--time-budget")
    micro, ga = opts.get("per_device_train_batch_size") or 1, opts.get("gradient_accumulation_steps") or 1
    for name, value in (("per_device_train_batch_size", micro), ("gradient_accumulation_steps", ga), ("world_size", world)):
        check_limit(name, value)  # the plan path's bounds: no plan is built here to check them
    request = {**request, "seq_length": request.get("seq_length") or opts.get("seq_length")}
    data = pseudo_plan(1, micro * ga * world, request["seq_length"], world, micro)
    shape_tokens = tokens_per_step(data, request, None)
    counts = RunCounts(optimizer_steps=1, tokens_per_step=shape_tokens.tokens if shape_tokens else None,
                       samples_per_step=micro * ga * world)
    rate, notes, _ = choose_rate(request, counts, shape_tokens, world, data)
    save = duration_option(request.get("save_time"), "--save-time")
    prepare = duration_option(request.get("prepare_time"), "--prepare-time")
    every = parse_duration(request["save_every"], "--save-every") if request.get("save_every") else None
    fit = fit_budget(budget, rate, margin=request.get("safety_margin") if request.get("safety_margin") is not None else 0.10,
                     save_seconds=save, prepare_seconds=prepare, save_every_seconds=every, step_limit=step_limit,
                     gpus=world)
    fit.estimate.notes.extend(notes)
    return fit


