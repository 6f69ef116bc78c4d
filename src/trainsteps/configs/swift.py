"""ms-swift arguments: a YAML/JSON of `swift sft` arguments, or the `swift sft --key value ...` line itself (--launch)."""

from __future__ import annotations

import pathlib
import shlex

from trainsteps.configs.files import ConfigFile, find_local
from trainsteps.configs.hf_args import read_training_arguments
from trainsteps.configs.launch import join_continued_lines
from trainsteps.configs.outcome import Outcome
from trainsteps.configs.settings import Settings, to_number
from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks import swift
from trainsteps.frameworks.count import Count

NEWEST_VERSION = swift.NEWEST
RULE_KEYS = ("dataset", "split_dataset_ratio", "max_epochs", "packing", "max_length", "truncation_strategy", "streaming", "val_dataset",
             "lazy_tokenize", "dataset_num_proc", "template", "system", "rlhf_type")
"""Keys the plan reads (`rlhf_type` for the time model's preference costing)."""
KNOWN = ("model", "model_type", "train_type", "tuner_type", "torch_dtype", "lora_rank", "lora_alpha", "target_modules", "system", "template",
         "use_chat_template", "freeze_vit", "attn_impl", "padding_free", "deepspeed_config", "load_from_cache_file", "model_author", "model_name")
DEFAULTS = {"per_device_train_batch_size": swift.DEFAULT_BATCH}


def looks_like_swift(data: dict) -> bool:
    return "train_type" in data or ("model" in data and "dataset" in data) or "split_dataset_ratio" in data or "max_epochs" in data


def from_command_line(line: str) -> dict | None:
    """`swift sft --model M --dataset a.jsonl#500 b --per_device_train_batch_size 2` -> {key: value}; None if not swift."""
    words = shlex.split(join_continued_lines(line))
    if "swift" not in [pathlib.Path(w).name for w in words]:
        return None
    data: dict = {}
    key = None
    for word in words[words.index(next(w for w in words if pathlib.Path(w).name == "swift")) + 2:]:
        if word.startswith("--"):
            key = word[2:].split("=", 1)[0]
            data[key] = word.split("=", 1)[1] if "=" in word else True
        elif key is not None:
            data[key] = [*data[key], word] if isinstance(data[key], list) else (word if data[key] is True else [data[key], word])
    return {k: _scalar(v) for k, v in data.items()}


def _scalar(value):
    if isinstance(value, list) or value is True:
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


def read(cfg: ConfigFile, settings: Settings) -> None:
    for key in read_training_arguments(cfg, settings):
        settings.file_key(key, cfg.data[key], cfg.where(key), "swift", RULE_KEYS, KNOWN)


def outcome(cfg: ConfigFile, settings: Settings, version: str, lengths_provider=None) -> Outcome:
    d = Derivation()
    d.given("swift", version, "swift.version")
    g = lambda key, default=None: settings.get(f"swift.{key}", default)  # noqa: E731
    world = settings.whole("world_size", 1)
    bs = settings.whole("per_device_train_batch_size", swift.DEFAULT_BATCH)
    if "gradient_accumulation_steps" not in settings:
        settings.put("gradient_accumulation_steps", swift.default_gradient_accumulation(d, bs, world), "ms-swift default")
    notes = []
    if g("streaming"):
        if (settings.whole("max_steps", -1, minimum=None) or -1) <= 0:
            raise InputError("swift.error.stream_max_steps", "swift.hint.stream_max_steps")
        return Outcome(None, d)
    if settings.get("num_examples") is not None:
        n = Count.of(d.given("rows", settings.whole("num_examples"), "swift.rows.given"))
    else:
        n = _dataset_rows(cfg, d, g, version, settings)
    profile = None
    if lengths_provider is not None and settings.get("num_examples") is None:
        exact = _exact_rows(cfg, d, g, version, settings, lengths_provider, notes)
        if exact is not None:
            n, profile = exact
    if g("packing"):
        notes.append(("SWIFT_PACKING", "swift.note.packing", {}))
    if g("truncation_strategy", "delete") == "delete" and not g("packing") and profile is None:
        notes.append(("SWIFT_DELETE_LONG", "swift.note.delete", {"max_length": g("max_length", "max_model_len")}))
    if g("max_epochs") is not None:
        max_epochs = settings.whole("swift.max_epochs")  # refuses `--max_epochs 1 2` and 0 by the setting's name
        notes.append(("SWIFT_MAX_EPOCHS", "swift.note.max_epochs", {"max_epochs": max_epochs}))
    loader = swift.loader_rows(d, n.value, world) if swift.OWN_SAMPLER.at(version) else None
    return Outcome(n, d, notes, loader_rows=loader if loader != n.value else None, token_profile=profile)


def _exact_rows(cfg: ConfigFile, d: Derivation, g, version: str, settings: Settings, provider, notes: list):
    """Rows and tokens through ms-swift's own template encoding (data.swift_lengths), when nothing random or unmodelled
    stands between the files and the Trainer: no `#N` draw, no split, no packing, `truncation_strategy: delete`, a
    ChatML-family `template`. None (with a note saying why) otherwise."""
    from trainsteps.configs import lf_data
    from trainsteps.data.swift_lengths import TEMPLATES

    datasets = settings.get("swift.dataset")
    datasets = [datasets] if isinstance(datasets, str) else settings.names("swift.dataset")
    ratio = settings.real("swift.split_dataset_ratio")
    ratio = swift.SPLIT_RATIO_DEFAULT.at(version) if ratio is None else ratio
    template = settings.text("swift.template")
    reason = ("#N" if any("#" in str(x) for x in datasets) else "split_dataset_ratio" if ratio and not g("val_dataset")
              else "packing" if g("packing") else "truncation_strategy" if g("truncation_strategy", "delete") != "delete"
              else "template" if template not in TEMPLATES else None)
    if reason is not None:
        notes.append(("SWIFT_TOKENS_UNKNOWN", "swift.note.tokens_unknown", {"reason": reason, "templates": ", ".join(TEMPLATES)}))
        return None
    from trainsteps import tokens

    max_length = settings.whole("swift.max_length")
    pairs = []
    for name in datasets:
        path = find_local(name, (pathlib.Path.cwd(), cfg.path.parent))
        pairs += provider(lf_data.read_rows(path), template, settings.text("swift.system"), [str(path)])
    d.add("tokens_raw", sum(a for a, _ in pairs), "sum of tokens per row", f"{len(pairs):,} rows", "swift.tok.encode",
          template=template, release=version, tokenizer=provider.tokenizer_path)
    kept = [(a, b) for a, b in pairs if max_length is None or a <= max_length]
    count = d.add("rows_kept", len(kept), "rows with tokens <= max_length", f"{len(pairs):,} - {len(pairs) - len(kept):,}",
                  "swift.tok.deleted", max_length=max_length if max_length is not None else "-")
    profile = tokens.from_lengths([a for a, _ in kept], [b for _, b in kept], source=f"ms-swift {RECORDED} template encoding")
    return Count.of(count), profile


RECORDED = "4.6.0"
"""The ms-swift release whose template encoding is replayed (tools/record_swift_tokens.py runs it)."""


def _dataset_rows(cfg: ConfigFile, d: Derivation, g, version: str, settings: Settings) -> Count:
    from trainsteps.configs import lf_data

    datasets = settings.get("swift.dataset")
    datasets = [datasets] if isinstance(datasets, str) else settings.names("swift.dataset")
    ratio = settings.real("swift.split_dataset_ratio")
    ratio = swift.SPLIT_RATIO_DEFAULT.at(version) if ratio is None else ratio
    if g("val_dataset"):
        ratio = 0.0
    total = 0
    for spec in datasets:
        name, _, sample = str(spec).partition("#")
        path = find_local(name, (pathlib.Path.cwd(), cfg.path.parent))
        if path is None:
            raise InputError("swift.error.dataset_not_local", "swift.hint.dataset_not_local", name=name)
        rows = len(lf_data.read_rows(path))
        d.given(f"rows[{name}]", rows, "swift.rows", name=name)
        sample = to_number(sample, int, "dataset") if sample else None
        if sample is not None:
            swift.sample_rows(d, name, rows, sample)
        total += swift.split_rows(d, name, rows, sample, ratio)
    if len(datasets) > 1:
        d.add("rows_merged", total, "sum(rows)", "", "swift.concat")
    return Count.of(total)
