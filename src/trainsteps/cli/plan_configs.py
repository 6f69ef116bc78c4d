"""`trainsteps plan CONFIG...`: read the user's files, let flags they typed override them, plan, report."""

from __future__ import annotations

import click
from click.core import ParameterSource

from trainsteps.cli.output import emit

# CLI option name -> RunSpec field, where they differ
_RENAMED = {"transformers_version": "transformers"}


def typed_flags(ctx: click.Context, opts: dict) -> tuple[dict, dict]:
    """RunSpec values of the options the user actually typed (not click defaults), and the option each came from."""
    typed = {name for name in opts if ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)}
    flags, names = {}, {}
    for name in typed:
        value = opts[name]
        if name == "gpus":
            flags["world_size"] = value * (opts.get("nodes") or 1)
            names["world_size"] = "--gpus" + (" --nodes" if opts.get("nodes") else "")
        elif name == "nodes":
            continue
        elif name == "no_dispatch_batches":
            flags["dispatch_batches"] = False if value else None
            names["dispatch_batches"] = "--no-dispatch-batches"
        elif name == "no_even_batches":
            flags["even_batches"] = not value
            names["even_batches"] = "--no-even-batches"
        else:
            flags[_RENAMED.get(name, name)] = value
            names[_RENAMED.get(name, name)] = "--" + name.replace("_version", "").replace("_", "-")
    return flags, names


def plan_from_configs(ctx, fmt, lang, explain, configs, launch, framework_version, opts) -> None:
    from trainsteps import plan
    from trainsteps.configs import TOKENIZED, blamed_on, import_run
    from trainsteps.configs.report import imported_to_dict, range_schedules, render_imported, state_check
    from trainsteps.report import render_schedule

    flags, names = typed_flags(ctx, opts)
    imported = import_run(configs, launch=launch, flags=flags, flag_names=names, framework_version=framework_version,
                          lengths_provider=_lengths_provider(ctx, configs), unsloth=ctx.meta.get("trainsteps.unsloth"))
    if ctx.meta.get("trainsteps.config_data", {}).get("tokenizer") and imported.framework not in TOKENIZED:
        imported.notes.append(("TOKENIZER_NOT_USED", "configs.note.tokenizer_not_used", {"framework": imported.framework}))
    if imported.token_profile is not None:
        ctx.meta["trainsteps.token_profile"] = imported.token_profile
        ctx.meta["trainsteps.packed"] = _packs(imported)
    with blamed_on(imported.settings):
        schedule = plan(imported.spec)
    from trainsteps.configs.adjust import adjust_schedule

    schedule = adjust_schedule(imported, schedule)
    ranges = range_schedules(imported, plan, adjust_schedule)
    check = state_check(imported, schedule)
    from trainsteps.cli.plan import answer_first, attach_known_tokens, with_tokens_note
    from trainsteps.configs.report import unknown_key_warnings

    attach_known_tokens(schedule, imported.spec, lang)
    data = with_tokens_note(schedule.to_dict(lang))
    data["config"] = imported_to_dict(imported, lang, ranges, check)
    warnings = unknown_key_warnings(imported, lang)
    body = render_imported(imported, lang, ranges, check, explain) + "\n\n" + render_schedule(schedule, lang, explain)
    from trainsteps.configs.unknown_keys import REFUSES, find
    from trainsteps.i18n import message

    stops = [u.key for u in find(imported)] if imported.framework in REFUSES else []
    human = answer_first(schedule, lang, ("\n".join(warnings) + "\n\n" if warnings else "") + body,
                         wrapper=_wrapper_label(imported),
                         extra=message("unknown.answer", lang, keys=", ".join(stops)) if stops else None)
    emit(fmt, data, human)


def _wrapper_label(imported) -> str | None:
    names = {"llamafactory": "LLaMA-Factory", "trl": "TRL", "swift": "ms-swift", "axolotl": "Axolotl"}
    if imported.framework not in names:
        return None
    return f"{names[imported.framework]} {imported.framework_version}" if imported.framework_version else names[imported.framework]


def _lengths_provider(ctx, configs):
    """Exact token lengths through the config's own template when a tokenizer is known: `--tokenizer`, or a local
    `model_name_or_path` folder holding a tokenizer.json; otherwise None (lengths are estimated from characters)."""
    given = ctx.meta.get("trainsteps.config_data") or {}
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
