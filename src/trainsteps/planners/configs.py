"""`trainsteps plan CONFIG...`: read the user's files, let the settings they gave override them, plan, report."""

from __future__ import annotations

from trainsteps.planners.hf import _RENAMED, answer_first, attach_known_tokens, spec_fields, with_tokens_note
from trainsteps.planners.table import Answer, asks_time, option_name

_NOT_SPEC = frozenset({"configs", "launch", "framework_version", "unsloth_release", "fmt", "lang", "explain"})
"""Given settings that are not RunSpec values (the request's shape, how to answer, the data options)."""


def given_flags(request, counted) -> tuple[dict, dict]:
    """RunSpec values of the settings the user gave (not defaults), and the option each came from."""
    from trainsteps.planners.table import DATA, TIME

    settings = request.settings
    given = sorted(request.given - _NOT_SPEC - DATA - TIME - {"gpus", "world_size", "nodes"})
    flags = spec_fields(settings, given)
    names = {(_RENAMED[name][0] if name in _RENAMED else name): option_name(name) for name in given}
    if request.given & {"gpus", "world_size", "nodes"}:
        from trainsteps.world import world_size

        flags["world_size"] = world_size(settings.get("world_size"), settings.get("gpus"), settings.get("nodes"))
        names["world_size"] = "--world-size" if "world_size" in request.given else \
            "--gpus" + (" --nodes" if settings.get("nodes") else "")
    if counted is not None and counted.num_examples is not None:
        flags["num_examples"], names["num_examples"] = counted.num_examples, "--data"
    return flags, names


def plan_configs(request, counted) -> Answer:
    from trainsteps.configs import TOKENIZED, blamed_on, import_run
    from trainsteps.configs.adjust import adjust_schedule
    from trainsteps.configs.report import imported_to_dict, range_schedules, render_imported, state_check, unknown_key_warnings
    from trainsteps.configs.unknown_keys import REFUSES, find
    from trainsteps.frameworks.hf import plan
    from trainsteps.i18n import message
    from trainsteps.planners.rl import refuse_budget_without_time
    from trainsteps.report import render_schedule

    refuse_budget_without_time(request)
    lang, explain = request.lang, request.explain
    flags, names = given_flags(request, counted)
    imported = import_run(list(request.configs), launch=request.launch, flags=flags, flag_names=names,
                          framework_version=request.settings.get("framework_version"),
                          lengths_provider=_lengths_provider(counted, request.configs),
                          unsloth=request.settings.get("unsloth_release"))
    if counted is not None and counted.tokenizer and imported.framework not in TOKENIZED:
        imported.notes.append(("TOKENIZER_NOT_USED", "configs.note.tokenizer_not_used", {"framework": imported.framework}))
    if imported.token_profile is not None:
        from trainsteps.planners.data import CountedData

        counted = CountedData(token_profile=imported.token_profile, packed=_packs(imported))
    with blamed_on(imported.settings):
        schedule = plan(imported.spec)
    schedule = adjust_schedule(imported, schedule)
    ranges = range_schedules(imported, plan, adjust_schedule)
    check = state_check(imported, schedule)
    attach_known_tokens(schedule, imported.spec, counted, lang)
    data = with_tokens_note(schedule.to_dict(lang), counted)
    data["config"] = imported_to_dict(imported, lang, ranges, check)
    warnings = unknown_key_warnings(imported, lang)
    body = render_imported(imported, lang, ranges, check, explain) + "\n\n" + render_schedule(schedule, lang, explain)
    stops = [u.key for u in find(imported)] if imported.framework in REFUSES else []
    human = answer_first(schedule, lang, ("\n".join(warnings) + "\n\n" if warnings else "") + body, counted,
                         wrapper=_wrapper_label(imported),
                         extra=message("unknown.answer", lang, keys=", ".join(stops)) if stops else None,
                         packed=imported.framework == "axolotl" and bool(imported.settings.get("axolotl.sample_packing")))
    return Answer(data, human, notes=[counted.note] if counted is not None and counted.note else [],
                  rollout=_trl_rollout(imported, data) if asks_time(request.settings) else None)


def _trl_rollout(imported, data: dict):
    """A TRL GRPO/RLOO run's optimizer step as the RL step model reads it: each optimizer step trains on
    batch x processes x accumulation completions, generated num_iterations times less often; the generation defaults
    of the release (frameworks.trl) where the config leaves them out."""
    if imported.framework != "trl" or not imported.settings.get("trl.grpo"):
        return None
    from trainsteps.frameworks import trl
    from trainsteps.timing.request import raw_config
    from trainsteps.timing.rl import RolloutShape, own_generate_batch

    raw, inputs, version = raw_config(data), data.get("inputs") or {}, imported.framework_version or trl.NEWEST
    trainer = "rloo" if imported.settings.get("trl.rloo") else "grpo"
    generations = imported.settings.whole("trl.num_generations", trl.NUM_GENERATIONS_DEFAULTS[trainer])
    iterations = imported.settings.whole("trl.num_iterations", 1)
    world = inputs.get("world_size") or 1
    completions = (inputs.get("per_device_train_batch_size") or 1) * world * (inputs.get("gradient_accumulation_steps") or 1)
    beta = raw.get("beta", trl.BETA_DEFAULTS[trainer].at(version))
    vllm = bool(raw.get("use_vllm"))
    colocated = not vllm or raw.get("vllm_mode", trl.VLLM_MODE_DEFAULT.at(version)) == "colocate"
    prompts = max(completions // (generations * iterations), 1)
    return RolloutShape(framework=f"trl-{trainer}", training_steps=data["run"]["optimizer_steps"],
                        prompts_per_step=prompts, samples_per_prompt=generations,
                        max_prompt_length=raw.get("max_prompt_length", trl.MAX_PROMPT_DEFAULT.at(version)),
                        max_response_length=raw.get("max_completion_length", trl.MAX_COMPLETION_DEFAULT.at(version)),
                        gpus=world, rollout_gpus=None if colocated else 1, rollout_tp=1, ppo_epochs=iterations,
                        reference=bool(beta), weight_sync=vllm, rollout_engine=vllm, old_log_prob=iterations > 1,
                        max_num_seqs=256 if vllm else own_generate_batch(prompts * generations, world),
                        training=("qlora" if raw.get("load_in_4bit") else "lora") if raw.get("use_peft") else None)


def _wrapper_label(imported) -> str | None:
    names = {"llamafactory": "LLaMA-Factory", "trl": "TRL", "swift": "ms-swift", "axolotl": "Axolotl"}
    if imported.framework not in names:
        return None
    return f"{names[imported.framework]} {imported.framework_version}" if imported.framework_version else names[imported.framework]


def _lengths_provider(counted, configs):
    """Exact token lengths through the config's own template when a tokenizer is known: `--tokenizer`, or a local
    `model_name_or_path` folder holding a tokenizer.json; otherwise None (lengths are estimated from characters)."""
    given = (counted.tokenizer if counted is not None else None) or {}
    path = given.get("tokenizer") or _local_model_tokenizer(configs)
    if not path:
        return None
    def provider(framework: str):
        if framework == "trl":
            from trainsteps.data.trl_lengths import TrlLengths

            return TrlLengths(path, given.get("threads"), bool(given.get("no_cache")))
        if framework == "swift":
            from trainsteps.data.swift_lengths import SwiftLengths

            return SwiftLengths(path, given.get("threads"), bool(given.get("no_cache")))
        if framework == "axolotl":
            from trainsteps.data.axolotl_lengths import AxolotlLengths

            return AxolotlLengths(path, given.get("threads"), bool(given.get("no_cache")))
        from trainsteps.data.lf_lengths import LlamaFactoryLengths

        return LlamaFactoryLengths(path, given.get("threads"), bool(given.get("no_cache")))

    return provider


def _local_model_tokenizer(configs) -> str | None:
    import os

    from trainsteps.configs.files import read_config
    from trainsteps.errors import TrainstepsError

    for path in configs:
        try:
            data = read_config(path).data
        except TrainstepsError:
            continue
        model = (data.get("model_name_or_path") or data.get("base_model")) if isinstance(data, dict) else None
        if isinstance(model, str) and os.path.isfile(os.path.join(model, "tokenizer.json")):
            return model
    return None


def _packs(imported) -> bool:
    get = imported.settings.get
    stage = get("lf.stage", "sft")
    return (stage == "pt" and get("lf.packing") is not False) or bool(get("lf.packing") or get("lf.neat_packing"))
