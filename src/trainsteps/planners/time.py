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
            "world_flag": settings.get("world_size"), **{name: settings.get(name) for name in (
                "response_length", "prompt_length", "time_budget", "safety_margin")}}


def attach_time(answer: Answer, request, counted) -> Answer:
    """Add `time` to the answer's JSON, a "Time" section to its text and the expected wall time to its first line."""
    data = answer.data
    if not isinstance(data.get("run"), dict):
        return answer
    from trainsteps.timing.report import render_time
    from trainsteps.timing.request import estimate_for_plan

    asked = time_request(request)
    view = data if answer.time_steps == "optimizer_steps" else _steps_view(data, answer.time_steps, answer.rollout)
    _refuse_times_of_no_events(request, view["run"])
    for name in ("response_length", "prompt_length"):
        if request.gave(name) and answer.rollout is None:  # a config that is not an RL trainer's (TRL GRPO/RLOO) has no rollout
            from trainsteps.planners.table import option_name

            raise InputError("rl.error.not_rl", "rl.hint.not_rl", option=option_name(name))
    if answer.rollout is not None:
        result = rl_estimate(view, asked, answer.rollout)
    else:
        result = estimate_for_plan(view, asked, counted.report if counted is not None else None)
    lang = request.lang
    human = _answer_with_time(answer.human, result, lang) + "\n\n" + render_time(result, lang, request.explain)
    data = {**data, "time": result.to_dict(lang)}
    if asked.get("time_budget"):
        if answer.rollout is None:  # a Trainer run's budget is solve's: the max_steps of its own settings
            raise InputError("time.error.budget_not_rl", "time.hint.budget_not_rl", option="--time-budget")
        budget, text = rl_budget(result, asked, answer.rollout, data)
        data, human = {**data, "time_budget": budget}, human + "\n\n" + text
    return Answer(data, human, notes=answer.notes, time_steps=answer.time_steps, rollout=answer.rollout)


def rl_budget(result, asked: dict, rollout, data: dict) -> tuple[dict, str]:
    """`--time-budget` on an RL plan: the training steps (and prompts, epochs) that fit the wall time at the slow end
    of the step time the Time section used."""
    from trainsteps.i18n import label, message
    from trainsteps.timing import parse_duration
    from trainsteps.timing.budget import fit_budget
    from trainsteps.timing.report import render_budget

    budget = parse_duration(asked["time_budget"], "--time-budget")
    margin = asked.get("safety_margin") if asked.get("safety_margin") is not None else 0.10
    fit = fit_budget(budget, result.rate, margin=margin, step_limit=rollout.training_steps, gpus=rollout.total_gpus,
                     prepare_seconds=result.prepare, save_seconds=_per_save(result, data))
    lang = asked["lang"]
    per_epoch = (data.get("run") or {}).get("steps_per_epoch")
    covered = ", ".join(part for part in (
        message("time.rl.budget_steps", lang, steps=f"{fit.max_steps:,}", planned=f"{rollout.training_steps:,}"),
        message("time.rl.budget_prompts", lang, prompts=f"{fit.max_steps * rollout.prompts_per_step:,}",
                responses=f"{fit.max_steps * rollout.prompts_per_step * rollout.samples_per_prompt:,}"),
        f"{fit.max_steps / per_epoch:,.4g} {label('unit.epochs', lang)}" if per_epoch else None) if part)
    fit.estimate.step_parts = result.step_parts
    text = render_budget(fit, lang, asked.get("explain"), covered, fit.max_steps >= rollout.training_steps,
                         rl_settings=RL_STEP_SETTINGS.get(rollout.framework), rl=True)
    return fit.to_dict(lang), text


RL_STEP_SETTINGS = {"verl": ("trainer.total_training_steps", "trainer.save_freq"), "easyr1": ("trainer.max_steps", "trainer.save_freq"),
                    "slime": ("--num-rollout", "--save-interval"), "roll": ("max_steps", "save_steps"),
                    "trl-async-grpo": ("max_steps", "save_steps"), "trl-grpo": ("max_steps", "save_steps"),
                    "trl-rloo": ("max_steps", "save_steps"), "prime-rl": ("max_steps", "ckpt.interval")}
"""The settings that stop an RL run after N training steps and save every K, by the names each framework takes (as
its planner reads them; frameworks/*.py). The others stop by a count of prompts or episodes: the budget says the
steps in words."""


def _per_save(result, data: dict):
    """Seconds of one checkpoint save, where the Time section had them (--save-time)."""
    saves = len((data.get("run") or {}).get("save_steps") or ())
    return result.save.scaled(1 / saves) if result.save is not None and saves and result.save.high > 0 else None


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


def _steps_view(data: dict, steps: str, rollout=None) -> dict:
    """An RL plan as the time model reads a plan: its step is a training step (generation, scoring, update), whose
    time a measurement gives (the FLOPs model covers only the update). Its GPUs are those the run holds, as the RL
    step model bills them (the planner's rollout shape: OpenRLHF's actor and vLLM GPUs are not in its inputs)."""
    run, inputs = data["run"], data.get("inputs") or {}
    gpus = (rollout.total_gpus if rollout is not None else None) or inputs.get("world_size") or \
        (inputs.get("n_gpus_per_node") or 0) * (inputs.get("nnodes") or 1) or None
    return {"framework": data.get("framework"), "inputs": {"world_size": gpus},
            "run": {"optimizer_steps": run[steps], "eval_steps": Steps.of(run.get("test_steps")).at_least(1),
                    "save_steps": Steps.of(run.get("save_steps")), "warmup_steps": 0}}


MODEL_OPTIONS = ("model_path", "params", "gpu_name", "peak_tflops", "dtype", "mfu", "training", "response_length", "prompt_length")
"""The settings of the RL step model (timing.rl); a measured step time is read without them."""


def rl_estimate(view: dict, asked: dict, rollout):
    """The time of an RL plan: a measured step time (wall = training steps x step time), else the RL step model
    (timing.rl: generation, forwards, updates, weight sync, overlap) on the user's model and GPU. Both given: the
    measurement is the time, and the model's step is set beside it."""
    from trainsteps.timing.request import estimate_for_plan

    without_model = {**asked, **dict.fromkeys(MODEL_OPTIONS)}
    wants_model = any(asked.get(name) for name in ("model_path", "params", "gpu_name", "peak_tflops"))
    measured = any(asked.get(name) for name in ("step_time", "timing_from"))
    if not wants_model:
        return estimate_for_plan(view, without_model)
    for name in ("stack", "activation_checkpointing", "eval_examples"):  # the FLOPs model of one update reads them; the RL step model does not
        if asked.get(name) is not None:
            from trainsteps.planners.table import option_name

            raise InputError("rl.error.flops_option", "rl.hint.flops_option", option=option_name(name))
    step, notes, shape = rl_step(asked, rollout)
    if measured:
        result = estimate_for_plan(view, without_model)
        result.notes.append(("time.rl.model_beside", {"seconds": f"{step.step.expected:,.4g}", "low": f"{step.step.low:,.4g}",
                                                      "high": f"{step.step.high:,.4g}"}))
        result.step_parts = dict(step.parts)
        return result
    return _modelled_rl(view, asked, rollout, step, notes, shape)


def rl_step(asked: dict, rollout):
    """The modelled RL step of a RolloutShape under the time settings, the notes that say what it assumed, and the
    model's shape."""
    from trainsteps.timing.flops import parse_mfu, shape_from_params
    from trainsteps.timing.gpus import custom_gpu, find_gpu
    from trainsteps.timing.model_files import read_model_shape
    from trainsteps.timing.request import _parse_count
    from trainsteps.timing.rl import prompt_mean, response_interval, rl_step_time, setup_from_shape
    from trainsteps.timing.rl_fit import HELD_OUT, LOSO

    mfu = parse_mfu(asked["mfu"]) if asked.get("mfu") is not None else None
    if asked.get("model_path") and asked.get("params"):
        raise InputError("time.error.model_twice", "time.hint.model_twice")
    shape = read_model_shape(asked["model_path"]) if asked.get("model_path") else \
        shape_from_params(_parse_count(asked["params"])) if asked.get("params") else None
    gpu = find_gpu(asked["gpu_name"]) if asked.get("gpu_name") else None
    if asked.get("peak_tflops") is not None:
        gpu = custom_gpu(asked["peak_tflops"], asked.get("dtype") or "bf16", gpu)
    if shape is None or gpu is None:
        raise InputError("time.error.model_incomplete", "time.hint.model_incomplete",
                         missing="--gpu or --peak-tflops" if gpu is None else "--model or --params")
    given = _lengths(asked.get("response_length"), "--response-length")
    _refuse_past_cap(given, rollout.max_response_length, asked.get("response_length"))
    response, response_from = response_interval(given, rollout.max_response_length)
    prompt_given = _lengths(asked.get("prompt_length"), "--prompt-length")
    prompt, prompt_from = prompt_mean(prompt_given.expected if prompt_given else None, rollout.max_prompt_length)
    training = _rl_training(asked, rollout)
    setup = setup_from_shape(rollout, shape, gpu, prompt_tokens=prompt, response_tokens=response,
                             training=training, dtype=asked.get("dtype") or "bf16", training_mfu=mfu)
    step = rl_step_time(setup)
    engines = (rollout.rollout_gpus or rollout.gpus) // rollout.rollout_tp
    kind = response_from + ("_range" if response_from == "given" and not response.is_exact() else "")
    notes = [("time.rl.response." + kind, {"low": f"{response.low:,.0f}", "expected": f"{response.expected:,.0f}",
                                                    "high": f"{response.high:,.0f}", "cap": f"{rollout.max_response_length or 0:,}"}),
             ("time.rl.prompt." + prompt_from, {"prompt": f"{prompt:,.0f}", "cap": f"{rollout.max_prompt_length or 0:,}"}),
             ("time.rl.shape", {"prompts": f"{rollout.prompts_per_step:,}", "n": rollout.samples_per_prompt,
                                "engines": engines, "tp": rollout.rollout_tp, "gpus": rollout.rollout_gpus or rollout.gpus,
                                "trainers": rollout.gpus}),
             ("time.rl.async" if rollout.asynchronous else "time.rl.sync", {}),
             *([("time.rl.training." + ("given" if asked.get("training") else "config"), {"training": training})]
               if training != "full" else []),
             *([_hf_generate_note()] if not rollout.rollout_engine else []),
             *_one_gpu_spread_notes(setup),
             _calibration_note(unseen_score(HELD_OUT, LOSO)),
             *shape.notes]
    return step, notes, shape


def _hf_generate_note() -> tuple[str, dict]:
    """TRL without use_vllm: the trainer's own generate, at the fitted transformers-generate step when there is one."""
    from trainsteps.timing import rl

    if rl.HF_GENERATE_STEP:
        return "time.rl.hf_generate.fitted", {"step": f"{rl.HF_GENERATE_STEP * 1000:.0f}"}
    return "time.rl.hf_generate", {}


def _one_gpu_spread_notes(setup) -> list[tuple[str, dict]]:
    """A one-GPU step's interval is wider than its parts' (timing.rl.step_spread), when a fit chose a spread."""
    from trainsteps.timing.rl import step_spread

    spread = step_spread(setup)
    return [("time.rl.one_gpu_spread", {"spread": f"{spread:g}"})] if spread > 1 else []


def _rl_training(asked: dict, rollout) -> str:
    """What an RL run trains: `--training`, else what its config says (LoRA settings), else full-parameter."""
    return asked.get("training") or rollout.training or "full"


MIN_HELD_OUT_RUNS = 15
"""A held-out score over fewer runs than this is not what the plan states (8 steps holding 8 of 8 say little of the
next run); the leave-one-source-out score over every calibration step is."""


def unseen_score(held_out: dict | None, loso: dict) -> dict:
    """The score the plan states for runs the model was not fitted on: the held-out split's, once scored over
    MIN_HELD_OUT_RUNS runs or more, else leave-one-source-out over the calibration."""
    return held_out if held_out and held_out["runs"] >= MIN_HELD_OUT_RUNS else loso


def _calibration_note(unseen: dict) -> tuple[str, dict]:
    """The model's score on runs it was not fitted on: the untouched held-out split once scored, else leave-one-source-out."""
    return "time.rl.calibration", {"error": f"{unseen['median_error']:.0%}", "held": f"{unseen['interval_holds']:.0%}"}


def _lengths(text, option: str):
    """`1200` or `600-2400` (tokens) -> an Interval; None when not given."""
    from trainsteps.timing import Interval

    if text is None:
        return None
    try:
        values = [float(part) for part in str(text).replace(",", "").split("-")]
    except ValueError:
        values = []
    if not values or len(values) > 2 or any(not 0 < v < 10_000_000 for v in values) or values[0] > values[-1]:
        raise InputError("rl.error.length_value", "rl.hint.length_value", option=option, value=str(text)[:60])
    return Interval(values[0], sum(values) / len(values), values[-1])


def _refuse_past_cap(given, cap: int | None, text) -> None:
    """A mean response longer than the run's response cap cannot happen (generation stops at the cap): refused, so the
    step is not modelled on responses the run never produces."""
    if given is not None and cap and given.high > cap:
        raise InputError("rl.error.response_past_cap", "rl.hint.response_past_cap", value=str(text)[:60], cap=f"{cap:,}")


def _modelled_rl(view: dict, asked: dict, rollout, step, notes: list, shape):
    """The Time section of a modelled RL run: training steps x the modelled step, with the step's parts, and the
    model's load and checkpoint saves from its size where no measured time is given (timing.overheads)."""
    from trainsteps.timing import Rate, RunCounts, estimate
    from trainsteps.timing.request import duration_option

    run = view["run"]
    counts = RunCounts(optimizer_steps=run["optimizer_steps"], eval_count=len(run["eval_steps"]), save_count=len(run["save_steps"]))
    detail = f"{rollout.framework}, {rollout.total_gpus} GPU"
    save, prepare, overhead_notes = _rl_overheads(asked, rollout, shape, counts.save_count)
    rate = Rate(step.step, "model", detail, assumptions=(*notes, *overhead_notes))
    result = estimate(counts, rate, eval_seconds=duration_option(asked.get("eval_time"), "--eval-time"),
                      save_seconds=save, prepare_seconds=prepare, gpus=rollout.total_gpus,
                      price_per_gpu_hour=asked.get("price_per_gpu_hour"), currency=asked.get("currency") or "USD")
    result.step_parts = dict(step.parts)
    result.derivation.steps = step.derivation.steps + result.derivation.steps
    return result


def _rl_overheads(asked: dict, rollout, shape, saves: int):
    """Seconds per save and of the preparation: measured (`--save-time`, `--prepare-time`), else from the model's size:
    a save writes the trained model's weights and AdamW states (the critic's too), the start reads the weights."""
    from trainsteps.timing.overheads import load_gigabytes, load_seconds, modelled_save
    from trainsteps.timing.request import duration_option

    save, prepare = duration_option(asked.get("save_time"), "--save-time"), duration_option(asked.get("prepare_time"), "--prepare-time")
    notes = []
    if save is None and saves:
        save, note = modelled_save(shape, _rl_training(asked, rollout), models=2 if rollout.critic else 1)
        notes.append(note)
    if prepare is None:
        prepare = load_seconds(shape)
        notes.append(("time.assume.load", {"gb": load_gigabytes(shape)}))
    return save, prepare, notes


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
