"""`plan --data PATH`: the data counted as `trainsteps count` counts it, giving the plan its rows (or packed rows)
and its tokens; and `plan CONFIG --tokenizer T`, where the config's own data is encoded with its framework's template.
"""

from __future__ import annotations

import os

from trainsteps.errors import InputError
from trainsteps.record import record

COUNT_KEYS = ("data_paths", "tokenizer_path", "data_format", "text_field", "template", "dataset_name", "no_special_tokens",
              "add_eos", "cutoff_len", "packing_names", "num_proc", "threads", "no_cache", "engine_tokenizer", "max_line_bytes")


@record
class CountedData:
    """What the data options give a plan."""

    num_examples: int | None = None
    """Rows counted (or packed rows under `--packing NAME`); None when nothing was counted."""
    token_profile: object = None
    """Rows by token length (a `tokens.TokenProfile`), when the tokens are known."""
    packed: bool = False
    """Rows are packed sequences."""
    tokens_unknown: str | None = None
    """Why the tokens could not be counted (said under the answer)."""
    report: dict | None = None
    """The count's report (the time model reads lengths from it)."""
    origin: dict | None = None
    """JSON: where num_examples came from."""
    note: str | None = None
    """One line for stderr: what was counted."""
    tokenizer: dict | None = None
    """`plan CONFIG --tokenizer T`: the tokenizer to encode the config's own data with (path, threads, no_cache)."""


def counted_data(request) -> CountedData | None:
    """Count `--data`, or note the tokenizer for a config's own data; None when no data option was given."""
    settings = request.settings
    paths = settings.get("data_paths") or ()
    has_configs = bool(request.configs or request.launch)
    if not paths and (settings.get("packing_names") or (settings.get("tokenizer_path") and not has_configs)):
        raise InputError("count.error.data_options_alone", "count.hint.data_options_alone")
    if not paths:
        if has_configs and settings.get("tokenizer_path"):
            return CountedData(tokenizer={"tokenizer": settings["tokenizer_path"], "no_cache": bool(settings.get("no_cache")),
                                          "threads": settings.get("threads")})
        return None
    return _count(request)


def _count(request) -> CountedData:
    from trainsteps.data import profile
    from trainsteps.data.counting import count_and_report
    from trainsteps.i18n import message
    from trainsteps.world import world_or_one

    settings, lang = request.settings, request.lang
    if settings.get("num_examples") is not None:
        raise InputError("count.error.plan_data_twice", "count.hint.plan_data_twice")
    if request.gave("dataset_split") and not any(os.path.isdir(path) for path in settings["data_paths"]):
        raise InputError("count.error.split_of_file", "count.hint.split_of_file", split=settings["dataset_split"])
    packing = settings.get("packing_names") or ()
    if len(packing) > 1:
        raise InputError("count.error.plan_one_packing", "count.hint.plan_one_packing")
    if any(name.split("@")[0] == "axolotl" for name in packing):
        # Axolotl's steps come from its multipack sampler, which the Trainer plan behind --data does not model
        raise InputError("count.error.plan_axolotl_packing", "count.hint.plan_axolotl_packing")
    options = {key: settings.get(key) for key in COUNT_KEYS}
    options["split"] = settings.get("dataset_split") or "train"  # plan's --split is Megatron's train/valid/test split
    options["micro_batch_size"] = settings.get("per_device_train_batch_size") or 1
    options["axolotl_world_size"] = world_or_one(settings.get("world_size"), settings.get("gpus"), settings.get("nodes"))
    options["keep_order"] = bool(settings.get("cutoff_len"))  # the cutoff's effect on supervised tokens needs rows in order
    report, counted = count_and_report(list(settings["data_paths"]), options, rows_only=True)
    tokenizer = settings.get("tokenizer_path")
    source = message("tokens.source.counted", lang, tokenizer=tokenizer or "-", cached=message(
        "tokens.source.cached" if counted.from_cache else "tokens.source.fresh", lang, seconds=f"{counted.seconds:.2f}"))
    if report.get("packing"):
        packed = report["packing"][0]
        value, what, name = packed["sequences"], "count.plan.packed", packed["framework"]
        token_profile = profile.packed(counted, packed, options["cutoff_len"], source)
    else:
        value, what, name = report["examples"], "count.plan.examples", ""
        token_profile = profile.unpacked(counted, options.get("cutoff_len"), source=source) if tokenizer or counted.lengths.tokens.sum() else None
    said = message(what, lang, value=f"{value:,}", framework=name)
    origin = None
    if request.fmt != "human":  # the JSON says where num_examples came from
        origin = {"data": list(settings["data_paths"]), "num_examples": value, "counted": "packed_sequences" if name else "examples",
                  "packing": name or None, "explanation": said,
                  "tokens": report["tokens"] if token_profile is not None else None,
                  "supervised_tokens": report["supervised_tokens"] if token_profile is not None else None,
                  "from_cache": counted.from_cache}
    return CountedData(num_examples=value, token_profile=token_profile, packed=bool(name),
                       tokens_unknown=None if token_profile is not None else message("tokens.need_tokenizer", lang),
                       report={**report, "cutoff_len": options.get("cutoff_len")}, origin=origin,
                       note=said if request.fmt == "human" else None)
