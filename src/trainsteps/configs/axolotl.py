"""Axolotl YAML (`axolotl train cfg.yml`) -> settings, rows and Axolotl's own max_steps."""

from __future__ import annotations

import pathlib

from trainsteps.configs.files import ConfigFile, find_local
from trainsteps.configs.outcome import Outcome
from trainsteps.configs.settings import Settings
from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks import axolotl as ax
from trainsteps.frameworks.count import Count

NEWEST_VERSION = ax.NEWEST
_SPEC_KEYS = {"micro_batch_size": "per_device_train_batch_size", "gradient_accumulation_steps": "gradient_accumulation_steps",
              "num_epochs": "num_train_epochs", "max_steps": "max_steps", "dataloader_drop_last": "dataloader_drop_last",
              "logging_steps": "logging_steps", "eval_steps": "eval_steps", "save_steps": "save_steps", "eval_strategy": "eval_strategy",
              "save_strategy": "save_strategy"}
_RULE_KEYS = ("batch_size", "sample_packing", "sample_packing_eff_est", "sequence_len", "val_set_size", "evals_per_epoch",
              "saves_per_epoch", "warmup_steps", "warmup_ratio", "datasets", "flash_attention", "attn_implementation",
              "multipack_real_batches", "streaming", "pretraining_dataset", "total_num_tokens", "tensor_parallel_size", "context_parallel_size",
              "train_on_inputs", "chat_template", "chat_template_jinja", "excess_length_strategy", "pad_to_sequence_len",
              "rl", "precompute_ref_log_probs")
"""Keys the plan reads (`rl` and `precompute_ref_log_probs` for the time model's preference costing)."""
_KNOWN = ("base_model", "model_type", "tokenizer_type", "load_in_8bit", "load_in_4bit", "adapter", "lora_r", "lora_alpha", "lora_dropout",
          "lora_target_modules", "lora_target_linear", "output_dir", "learning_rate", "optimizer", "lr_scheduler", "bf16", "fp16", "tf32",
          "gradient_checkpointing", "dataset_prepared_path", "wandb_project", "wandb_entity", "wandb_name", "wandb_watch", "wandb_log_model",
          "special_tokens", "train_on_inputs", "group_by_length", "weight_decay", "deepspeed", "fsdp", "fsdp_config",
          "chat_template", "hub_model_id", "strict", "xformers_attention", "sdp_attention", "resume_from_checkpoint", "local_rank",
          "early_stopping_patience", "seed", "shuffle_merged_datasets", "sample_packing_eval", "eval_sample_packing", "lora_model_dir",
          "max_grad_norm", "base_model_config", "trust_remote_code", "plugins", "liger_rope", "liger_rms_norm", "tokenizer_config")


def looks_like_axolotl(data: dict) -> bool:
    return ("base_model" in data or "micro_batch_size" in data) and ("datasets" in data or "num_epochs" in data or "sequence_len" in data)


def read(cfg: ConfigFile, settings: Settings) -> None:
    for key, value in cfg.data.items():
        if key in _SPEC_KEYS:
            settings.put(_SPEC_KEYS[key], value, cfg.where(key))
        else:
            settings.file_key(key, value, cfg.where(key), "axolotl", _RULE_KEYS, _KNOWN)


def outcome(cfg: ConfigFile, settings: Settings, version: str, lengths_provider=None) -> Outcome:
    d = Derivation()
    d.given("axolotl", version, "axolotl.version")
    g = lambda key, default=None: settings.get(f"axolotl.{key}", default)  # noqa: E731
    notes = []
    mbs = settings.whole("per_device_train_batch_size", ax.DEFAULTS["micro_batch_size"])
    settings.put("per_device_train_batch_size", mbs, "default (Axolotl micro_batch_size)")
    world = settings.whole("world_size", 1)
    ga = settings.get("gradient_accumulation_steps")
    if ga is None:
        ga = settings.whole("axolotl.batch_size", mbs) // mbs  # normalize_config: GA from batch_size
        settings.put("gradient_accumulation_steps", ga, settings.origin("axolotl.batch_size") or "default (Axolotl)")
    ga = settings.whole("gradient_accumulation_steps", 1)
    epochs = settings.real("num_train_epochs", ax.DEFAULTS["num_epochs"])
    settings.put("num_train_epochs", epochs, "default (Axolotl num_epochs)")
    if g("streaming") or g("pretraining_dataset"):
        if (settings.whole("max_steps", -1, minimum=None) or -1) <= 0:
            raise InputError("axolotl.error.stream_max_steps", "axolotl.hint.stream_max_steps")
        return Outcome(None, d, notes)
    seq = settings.whole("axolotl.sequence_len", ax.DEFAULTS["sequence_len"])
    packing = bool(g("sample_packing", False))
    exact = None
    if settings.get("num_examples") is not None:  # rows after Axolotl's filters, as a previous run printed them
        if packing and not (g("sample_packing_eff_est") and g("total_num_tokens")):
            raise InputError("axolotl.error.packing_needs_rows", "axolotl.hint.packing_needs_rows")
        rows, lows, highs = [], [], []
        n = Count.of(d.given("rows_train", settings.whole("num_examples"), "axolotl.rows.given"))
    else:
        rows, lows, highs = _rows(cfg, g("datasets") or [])
        exact = _exact_lengths(d, settings, g, rows, lengths_provider, notes, seq, cfg) if lengths_provider is not None else None
        if exact is not None:
            rows, lows, highs, supervised = exact
        kept = _drop_long(d, rows, lows, highs, seq)
        n = kept.scaled(lambda r: ax.rows_after_val(Derivation(), r, (settings.real("axolotl.val_set_size", 0) or 0)))
        if kept.exact:
            n = Count.of(ax.rows_after_val(d, kept.value, (settings.real("axolotl.val_set_size", 0) or 0)))
    batch = ax.batch_size(d, mbs, ga, world, settings.whole("axolotl.tensor_parallel_size", 1),
                          settings.whole("axolotl.context_parallel_size", 1))
    flash = bool(g("flash_attention")) or str(g("attn_implementation", "")).startswith("flash_attention")
    bins = None
    if packing and not g("sample_packing_eff_est"):
        cap = mbs * seq if flash and not g("multipack_real_batches") else seq
        bins = ax.bins_estimate(lows or [seq] * len(rows), highs or [seq] * len(rows), cap) if rows else Count(1, 1, 1)
        notes.append(("AXOLOTL_PACKING_RANDOM", "axolotl.note.packing_random", {}))
    tokens = None
    if g("sample_packing_eff_est"):
        tokens = Count.of(settings.whole("axolotl.total_num_tokens")) if g("total_num_tokens") else Count((sum(lows) + sum(highs)) // 2, sum(lows), sum(highs))
    total = ax.total_num_steps(d, n.value, epochs, batch, sample_packing=packing, eff_est=settings.real("axolotl.sample_packing_eff_est"), total_tokens=tokens,
                               sequence_len=seq, micro_batch_size=mbs, bins=bins, flash_packing=flash,
                               drop_last=bool(settings.get("dataloader_drop_last", False)))
    given_max = settings.whole("max_steps", -1, minimum=None) or -1
    max_steps = None
    if ax.MAX_STEPS_TO_TRAINER.at(version) and given_max <= 0:
        max_steps = d.add("max_steps", total.value, "total_num_steps", "", "axolotl.max_steps")
        _defaults_from_total(d, settings, total.value, epochs, g)
    steps_range = None if total.exact else (total.low, total.high)
    if packing and bins is None and tokens is not None:  # eff_est given: the Trainer's sampler still packs the rows
        bins = _bins_from_tokens(d, tokens, settings.real("axolotl.sample_packing_eff_est"), seq,
                                 mbs if flash and not g("multipack_real_batches") else 1)
    loader_rows = None
    if bins is not None:  # the Trainer's loader is Axolotl's multipack sampler: one item per bin (or per mbs bins)
        per_rank = (bins.value if flash else bins.value // mbs) // world
        loader_rows = d.add("batches_per_epoch", max(per_rank, 1), "floor(sampler batches / W)", f"floor({bins.value} / {world})",
                            "axolotl.loader") * mbs * world
    profile = None
    if exact is not None and (settings.real("axolotl.val_set_size", 0) or 0) > 0:
        notes.append(("AXOLOTL_TOKENS_VAL_SPLIT", "axolotl.note.tokens_val_split", {}))  # a seeded random subset trains
    elif exact is not None:
        pad = g("pad_to_sequence_len")
        padded_to = None if (pad is False or (pad is None and not packing) or (packing and flash and not g("multipack_real_batches"))) \
            else -(-seq // 64) * 64
        profile = _token_profile(lows, supervised, seq, bins, loader_rows, n, padded_to)
    return Outcome(n, d, notes, max_steps, steps_range, loader_rows, token_profile=profile)


def _bins_from_tokens(d: Derivation, tokens: Count, eff_est: float, seq: int, per_bin: int) -> Count:
    """The multipack sampler's bins when the YAML gives `sample_packing_eff_est` and `total_num_tokens`: Axolotl takes
    its step count from them, but the Trainer's loader is the sampler that packs the rows for real, so HF's `Num update
    steps per epoch` and the epochs come from its bins (about tokens / (sequence_len x eff_est); `per_bin` packs of
    sequence_len make one bin under flash attention's micro-batch packing). An estimate: the packing is random."""
    bins = tokens.scaled(lambda t: max(1, int(t / (seq * eff_est)) // per_bin))
    d.add("axolotl.sampler_bins", _shown(bins), "tokens / (sequence_len x eff_est) // packs per bin",
          f"{_shown(tokens)} / ({seq} x {eff_est}) // {per_bin}", "axolotl.loader.eff_est")
    return bins


def _shown(count: Count):
    return count.value if count.exact else f"{count.value:,} ({count.low:,}-{count.high:,})"


def _exact_lengths(d: Derivation, settings: Settings, g, rows: list, provider, notes: list, seq: int, cfg: ConfigFile):
    """Rows, exact token lengths and supervised tokens through Axolotl's chat_template strategy; rows with no
    supervised token are dropped (Axolotl's drop_no_trainable_tokens). None when a dataset entry is not
    `type: chat_template` or names a template that is not the tokenizer's (the lengths stay estimated)."""
    entries = [e for e in (g("datasets") or []) if isinstance(e, dict)]
    choice = g("chat_template") or "tokenizer_default"
    jinja = g("chat_template_jinja")
    if any(str(e.get("type", "")).split(".")[0] != "chat_template" for e in entries) or len(entries) != 1:
        notes.append(("AXOLOTL_TOKENS_TYPE", "axolotl.note.tokens_type", {}))
        return None
    if not (choice == "tokenizer_default" or str(choice).startswith("tokenizer_default_fallback_") or (choice == "jinja" and jinja)):
        notes.append(("AXOLOTL_TOKENS_TEMPLATE", "axolotl.note.tokens_template", {"name": choice}))
        return None
    if str(g("excess_length_strategy") or "drop").lower() != "drop":
        notes.append(("AXOLOTL_TOKENS_EXCESS", "axolotl.note.tokens_excess", {"strategy": g("excess_length_strategy")}))
        return None
    entry = entries[0]
    pairs = provider(rows, entry, {"train_on_inputs": bool(g("train_on_inputs")), "chat_template_jinja": jinja if choice == "jinja" else None},
                     _entry_files(cfg, entry))
    keep = [i for i, (n, s) in enumerate(pairs) if s > 0 or n > seq]  # over-long rows are counted by the length filter
    d.add("tokens_raw", sum(n for n, _ in pairs), "sum of tokens per row", f"{len(pairs):,} rows", "axolotl.tok.chat_template",
          tokenizer=provider.tokenizer_path, roles=", ".join(entry.get("roles_to_train") or ["assistant"]),
          eos=entry.get("train_on_eos") or "turn", inputs=bool(g("train_on_inputs")))
    if len(keep) != len(pairs):
        d.add("rows_trainable", len(keep), "rows - rows without a trainable token", f"{len(pairs):,} - {len(pairs) - len(keep):,}",
              "axolotl.tok.no_trainable")
    rows = [rows[i] for i in keep]
    lengths = [pairs[i][0] for i in keep]
    return rows, lengths, list(lengths), [pairs[i][1] for i in keep]


def _token_profile(lengths: list[int], supervised: list[int], seq: int, bins, loader_rows, n, padded_to: int | None):
    """Tokens of the kept rows: unpacked batches are padded to the longest row rounded up to a multiple of 64 (Axolotl's
    collator, read from its source); packed bins hold the same tokens per epoch spread over the loader's rows.
    `padded_to`: every loader row padded to `sequence_len` rounded up to 64 (`pad_to_sequence_len`, which Axolotl turns
    on with `sample_packing` unless it is false; recorded for bins of `sequence_len`, `multipack_real_batches`)."""
    from trainsteps import tokens

    kept = [(a, b) for a, b in zip(lengths, supervised, strict=True) if a <= seq]
    if bins is None:
        return tokens.from_lengths([a for a, _ in kept], [b for _, b in kept], pad_to_multiple_of=64, fixed_length=padded_to,
                                   source="Axolotl 0.19 chat_template")
    rows = loader_rows or n.value
    return tokens.packed(rows, sum(a for a, _ in kept), sum(b for _, b in kept), fixed_length=padded_to, source="Axolotl 0.19 chat_template")


def _defaults_from_total(d, settings: Settings, total: int, epochs: float, g) -> None:
    warm = ax.warmup_steps(d, total, settings.real("axolotl.warmup_steps"), settings.real("axolotl.warmup_ratio"))
    settings.put("warmup_steps", float(warm), "Axolotl warmup rule")
    if "logging_steps" not in settings:
        settings.put("logging_steps", ax.logging_steps(total), "Axolotl logging rule")
    if g("saves_per_epoch") and "save_steps" not in settings:
        fraction = ax.per_epoch_fraction(settings.real("axolotl.saves_per_epoch"), epochs)
        if fraction is not None:
            settings.put("save_steps", fraction, settings.origin("axolotl.saves_per_epoch"))
    if g("evals_per_epoch") and g("val_set_size") and "eval_steps" not in settings:
        fraction = ax.per_epoch_fraction(settings.real("axolotl.evals_per_epoch"), epochs)
        if fraction is not None:
            settings.put("eval_steps", fraction, settings.origin("axolotl.evals_per_epoch"))
            settings.put("eval_strategy", "steps", settings.origin("axolotl.evals_per_epoch"))


def _entry_files(cfg: ConfigFile, entry: dict) -> list[str]:
    path = entry.get("path")
    local = next((base / path for base in (pathlib.Path.cwd(), cfg.path.parent) if path and (base / path).exists()), None)
    if local is None:
        return []
    return [str(p) for p in sorted(p for p in local.rglob("*") if p.is_file())] if local.is_dir() else [str(local)]


def _rows(cfg: ConfigFile, datasets: list) -> tuple[list, list[int] | None, list[int] | None]:
    from trainsteps.configs import lf_data

    rows, lows, highs = [], [], []
    if not isinstance(datasets, list):
        raise InputError("axolotl.error.datasets_not_list", "axolotl.hint.datasets_not_list", value=datasets)
    for entry in datasets:
        path = entry.get("path") if isinstance(entry, dict) else None
        local = find_local(path, (pathlib.Path.cwd(), cfg.path.parent), directory_too=True)
        if local is None:
            raise InputError("axolotl.error.dataset_not_local", "axolotl.hint.dataset_not_local", path=path)
        files = sorted(p for p in local.rglob("*") if p.is_file()) if local.is_dir() else [local]
        for file in files:
            for row in lf_data.read_rows(file):
                rows.append(row)
                lo, hi = lf_data.token_range(lf_data.row_texts(row))
                lows.append(lo)
                highs.append(hi)
    return rows, lows, highs


def _drop_long(d: Derivation, rows: list, lows: list[int], highs: list[int], seq: int) -> Count:
    """`excess_length_strategy: drop` (default) removes rows longer than sequence_len (or shorter than 2 tokens)."""
    n = len(rows)
    most = n - sum(1 for x in lows if x > seq or x < 2)
    least = n - sum(1 for x in highs if x > seq or x < 2)
    d.given("rows", n, "axolotl.rows")
    if most == least:
        if most != n:
            d.add("rows_kept", most, "rows with 2 <= tokens <= sequence_len", f"{n:,} - {n - most:,}, sequence_len = {seq}", "axolotl.drop_long")
        return Count.of(most)
    d.add("rows_kept", f"{least}..{most}", "rows with 2 <= tokens <= sequence_len", f"sequence_len = {seq}", "axolotl.drop_long.estimate")
    return Count((least + most) // 2, least, most)
