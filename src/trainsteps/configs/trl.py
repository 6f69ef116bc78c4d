"""TRL SFTConfig / GRPOConfig YAML (`trl sft --config cfg.yaml`, `trl grpo ...`, or a script using TrlParser)."""

from __future__ import annotations

import pathlib

from trainsteps.configs.files import ConfigFile, find_local
from trainsteps.configs.hf_args import read_training_arguments
from trainsteps.configs.outcome import Outcome
from trainsteps.configs.settings import Settings, to_number
from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks import trl
from trainsteps.frameworks.count import Count

NEWEST_VERSION = trl.NEWEST
RULE_KEYS = ("packing", "packing_strategy", "max_length", "max_seq_length", "dataset_num_proc", "dataset_name", "dataset_train_split",
             "num_generations", "num_iterations", "steps_per_generation", "generation_batch_size", "dataset_text_field",
             "completion_only_loss", "assistant_only_loss", "padding_free", "truncation_mode", "shuffle_dataset", "eos_token",
             "pad_to_multiple_of")
KTO_KEYS = ("desirable_weight", "undesirable_weight")
GRPO_KEYS = ("num_generations", "num_iterations", "steps_per_generation", "generation_batch_size", "reward_funcs", "use_vllm")
"""Keys only the online trainers (GRPO, RLOO) have; `beta` is not one: DPO, KTO, ORPO and CPO have it too."""
PREFERENCE_TRAINERS = ("dpo", "kto", "orpo", "cpo")
"""Offline preference trainers: one row per pair (KTO: per completion), no generation."""
DPO_KEYS = ("reference_free", "rpo_alpha", "ref_model_sync_steps", "ref_model_mixup_alpha", "sync_ref_model", "ld_alpha",
            "use_weighting")
"""DPOConfig's own keys: a YAML holding one is a DPO run (`trl dpo --config`), costed per pair by the time model."""
KNOWN = ("model_name_or_path", "torch_dtype", "dtype", "attn_implementation", "use_peft", "lora_r", "lora_alpha", "lora_dropout",
         "lora_target_modules", "load_in_4bit", "load_in_8bit", "trust_remote_code", "dataset_config", "dataset_test_split",
         "completion_only_loss", "assistant_only_loss", "padding_free", "max_prompt_length", "max_completion_length", "temperature",
         "reward_funcs", "beta", "use_vllm", "vllm_mode", "loss_type", "scale_rewards", "chat_template_path", "eos_token", "pad_token",
         "desirable_weight", "undesirable_weight", "precompute_ref_log_probs") + DPO_KEYS


def _beta_as_dpo(cfg: ConfigFile, settings: Settings) -> bool:
    """`beta` belongs to the preference trainers (and GRPO's KL term): a YAML with `beta`, no online key and no trainer
    named by a script or `trl <command>` is TRL's own `trl dpo --config` example. It is costed as DPO (chosen and
    rejected, and the reference forward), and the note names `trl orpo|cpo|kto` for the other trainers."""
    if "beta" not in cfg.data or any(settings.get(key) for key in ("trl.trainer", "trl.kto", "trl.dpo", "trl.grpo", "trl.rloo")):
        return False
    settings.put("trl.dpo", True, cfg.where("beta"))
    return True


def looks_like_trl(data: dict) -> bool:
    return any(k in data for k in ("dataset_name", "packing", "max_seq_length", "packing_strategy") + GRPO_KEYS + KTO_KEYS)


def read(cfg: ConfigFile, settings: Settings) -> None:
    trainer = (cfg.script or {}).get("trainer")
    if trainer in ("grpo", "kto", "rloo"):  # a script's GRPOConfig(...) / KTOConfig(...) / RLOOConfig(...) says which trainer
        settings.put(f"trl.{trainer}", True, f"{cfg.path.name}:{cfg.script['line']}")
        if trainer == "rloo":
            settings.put("trl.grpo", True, f"{cfg.path.name}:{cfg.script['line']}")  # RLOOTrainer samples as GRPOTrainer does
    if trainer in (*PREFERENCE_TRAINERS, "reward"):  # the time model costs these per example (timing.flops)
        settings.put("trl.trainer", trainer, f"{cfg.path.name}:{cfg.script['line']}")
    for key in read_training_arguments(cfg, settings):
        settings.file_key(key, cfg.data[key], cfg.where(key), "trl", RULE_KEYS, KNOWN)
        if key in GRPO_KEYS and trainer not in PREFERENCE_TRAINERS:
            settings.put("trl.grpo", True, cfg.where(key))
        if key in DPO_KEYS and cfg.data[key] not in (None, False):
            settings.put("trl.dpo", True, cfg.where(key))
        if key == "reference_free" and cfg.data[key] is True:
            settings.put("trl.reference_free", True, cfg.where(key))
        if key in KTO_KEYS:
            settings.put("trl.kto", True, cfg.where(key))
        if key == "precompute_ref_log_probs" and cfg.data[key] is True:
            settings.put("trl.precompute_ref", True, cfg.where(key))


def outcome(cfg: ConfigFile, settings: Settings, version: str, lengths_provider=None) -> Outcome:
    beta_as_dpo = _beta_as_dpo(cfg, settings)
    result = _outcome(cfg, settings, version, lengths_provider)
    if beta_as_dpo:
        result.notes.append(("TRL_BETA_AS_DPO", "trl.note.beta_as_dpo", {"where": cfg.where("beta")}))
    trainer = "kto" if settings.get("trl.kto") else settings.get("trl.trainer") or ("dpo" if settings.get("trl.dpo") else None)
    if trainer in ("dpo", "kto") and trl.PROMPT_FILLS_DROP.at(version) and "rows_kept" not in result.derivation:
        result.notes.append(("TRL_PROMPT_DROP_UNCOUNTED", "trl.note.prompt_drop_uncounted", {"trainer": trainer.upper(),
                                                                                              "version": version}))
    return result


def _outcome(cfg: ConfigFile, settings: Settings, version: str, lengths_provider=None) -> Outcome:
    d = Derivation()
    d.given("trl", version, "trl.version")
    g = lambda key, default=None: settings.get(f"trl.{key}", default)  # noqa: E731
    if g("grpo"):
        return _grpo(cfg, settings, d, g)
    if g("kto"):
        return _kto(cfg, settings, d, g, version, lengths_provider)
    trainer = settings.get("trl.trainer") or ("dpo" if g("dpo") else None)
    if trainer == "dpo" and lengths_provider is not None and settings.get("num_examples") is None:
        dropped = _preference_drop(cfg, settings, d, g, version, lengths_provider, "dpo")
        if dropped is not None:
            return dropped
    if lengths_provider is not None and settings.get("num_examples") is None and not g("precompute_ref"):
        return _sft_exact(cfg, settings, version, d, g, lengths_provider)
    rows = _rows(cfg, settings, g)
    if g("precompute_ref") and not g("packing"):  # DPO: a reference pass over the data before step 1 (time only)
        count = rows if isinstance(rows, int) else len(rows[0])
        return Outcome(Count.of(d.given("rows", count, "trl.rows")), d, [("TRL_DPO_PRECOMPUTE", "trl.note.dpo_precompute", {})])
    if not g("packing"):
        return Outcome(Count.of(d.given("rows", rows if isinstance(rows, int) else len(rows[0]), "trl.rows")), d)
    seq = settings.whole("trl.max_length") or settings.whole("trl.max_seq_length") or trl.MAX_LENGTH_DEFAULT
    strategy = settings.text("trl.packing_strategy") or trl.PACKING.at(version)
    if isinstance(rows, int):  # --num-examples: already the rows the Trainer sees
        return Outcome(Count.of(d.given("rows", rows, "trl.rows.given")), d)
    lows, highs = rows
    if strategy == "constant_length":
        raise InputError("trl.error.old_packing", "trl.hint.old_packing", version=version)
    procs = settings.whole("trl.dataset_num_proc")
    lo = trl.packed_rows(lows, seq, strategy, procs)
    hi = trl.packed_rows(highs, seq, strategy, procs)
    mid = trl.packed_rows([(a + b) // 2 for a, b in zip(lows, highs, strict=True)], seq, strategy, procs)
    lo, hi = min(lo, hi, mid), max(lo, hi, mid)
    d.add("rows_packed", f"{lo}..{hi}", f"{strategy} packing per map batch of 1000 rows", f"{len(lows)} rows, max_length {seq}", "trl.pack.estimate",
          strategy=strategy, version=version)
    return Outcome(Count(mid, lo, hi), d)


def _grpo(cfg, settings: Settings, d: Derivation, g) -> Outcome:
    rows = _rows(cfg, settings, g)
    prompts = rows if isinstance(rows, int) else len(rows[0])
    d.given("prompts", prompts, "trl.grpo.prompts")
    bs = settings.whole("per_device_train_batch_size", 8)
    ga = settings.whole("gradient_accumulation_steps", 1)
    world = settings.whole("world_size", 1)
    trainer = "rloo" if g("rloo") else "grpo"
    generations = settings.whole("trl.num_generations", trl.NUM_GENERATIONS_DEFAULTS[trainer])
    notes = [("TRL_GRPO_GENERATIONS", "trl.note.grpo", {"generations": generations})]
    if settings.get("unsloth.release"):
        bs = _unsloth_grpo_batch(settings, d, notes, bs, ga, world, generations)
    try:
        spg, _ = trl.generation_layout(trainer, bs, world, ga, settings.whole("trl.steps_per_generation"),
                                       settings.whole("trl.generation_batch_size"), generations)
    except trl.RefusedConfig as exc:
        raise InputError("trl.error.refused", "trl.hint.refused", trainer=trainer.upper(), reason=str(exc)) from None
    iterations = settings.whole("trl.num_iterations", 1)
    generation_batch, loader = trl.grpo_steps_per_epoch(prompts, generations, bs, world, spg, iterations)
    if loader == 0:  # RepeatSampler keeps whole chunks of generation_batch / num_generations prompts: none here
        raise InputError("trl.error.grpo_no_batch", "trl.hint.grpo_no_batch", prompts=prompts, chunk=generation_batch // generations,
                         batch=generation_batch, generations=generations, trainer=trainer.upper())
    d.add("generation_batch_size", generation_batch, "bs x W x steps_per_generation", f"{bs} x {world} x {spg}", "trl.grpo.generation_batch")
    d.add("batches_per_epoch", loader, "floor(N x G / generation_batch) x iterations x steps_per_generation",
          f"floor({prompts} x {generations} / {generation_batch}) x {iterations} x {spg}", "trl.grpo.loader", generations=generations)
    return Outcome(Count.of(prompts), d, notes, loader_rows=loader * bs * world)


def _unsloth_grpo_batch(settings: Settings, d: Derivation, notes: list, bs: int, ga: int, world: int, generations: int) -> int:
    """Unsloth's GRPOConfig: per_device_train_batch_size becomes num_generations when GA x world x batch is not a
    multiple of it (and neither steps_per_generation nor generation_batch_size is set)."""
    from trainsteps.configs.settings import Setting
    from trainsteps.frameworks import unsloth

    release = settings.get("unsloth.release")
    new = unsloth.grpo_batch(bs, ga, world, generations, settings.get("trl.steps_per_generation"),
                             settings.get("trl.generation_batch_size"))
    if new == bs:
        return bs
    settings.values["per_device_train_batch_size"] = Setting("per_device_train_batch_size", new, f"Unsloth {release} GRPOConfig")
    d.add("per_device_train_batch_size", new, "num_generations", f"{generations} (({ga} x {world} x {bs}) % {generations} = {ga * world * bs % generations})",
          "unsloth.why.grpo_batch", release=release)
    notes.append(("UNSLOTH_GRPO_BATCH", "unsloth.note.grpo_batch", {"release": release, "product": ga * world * bs,
                                                                    "generations": generations, "batch": bs}))
    return new


def _kto(cfg, settings: Settings, d: Derivation, g, version: str, provider=None) -> Outcome:
    """KTOTrainer unpairs a chosen/rejected dataset (`maybe_unpair_preference_dataset`): one row per completion."""
    from trainsteps.frameworks.trl_rl import kto_rows

    if provider is not None and settings.get("num_examples") is None:
        dropped = _preference_drop(cfg, settings, d, g, version, provider, "kto")
        if dropped is not None:
            return dropped
    rows = _rows(cfg, settings, g, keep_rows=True)
    if isinstance(rows, int):  # --num-examples: the rows the Trainer sees (already unpaired)
        return Outcome(Count.of(d.given("rows", rows, "trl.rows.given")), d, [("TRL_KTO_ROWS_GIVEN", "trl.note.kto_given", {})])
    paired = rows and all(isinstance(r, dict) and "chosen" in r and "rejected" in r for r in rows)
    if not paired:
        return Outcome(Count.of(d.given("rows", len(rows), "trl.rows")), d)
    unpaired = d.add("kto_rows", kto_rows(len(rows)), "2 x pairs", f"2 x {len(rows)}", "trl.why.kto_unpair")
    return Outcome(Count.of(unpaired), d, [("TRL_KTO_UNPAIRED", "trl.note.kto_unpaired", {"pairs": f"{len(rows):,}", "rows": f"{unpaired:,}"})])


def _preference_drop(cfg, settings: Settings, d: Derivation, g, version: str, provider, trainer: str) -> Outcome | None:
    """DPO/KTO pairs counted with the tokenizer: the rows the trainer keeps once it drops those whose prompt alone
    fills max_length (TRL >= 1.9.0; frameworks.trl.preference_rows_kept). None when the data is not prompt/chosen/
    rejected pairs."""
    rows = _rows(cfg, settings, g, keep_rows=True)
    if not rows or not all(isinstance(r, dict) and {"prompt", "chosen", "rejected"} <= set(r) for r in rows):
        return None
    options = {"eos_token": g("eos_token"), "completion_only_loss": True}
    sides = [provider([{"prompt": r["prompt"], "completion": r[side]} for r in rows], {**options, "side": side},
                      _files(cfg, settings))[0] for side in ("chosen", "rejected")]
    prompts = [(chosen[1], rejected[1]) for chosen, rejected in zip(*sides, strict=True)]
    max_length = settings.whole("trl.max_length") if "max_length" in (cfg.data or {}) else trl.PREFERENCE_MAX_LENGTH_DEFAULT
    keep_end = settings.text("trl.truncation_mode", "keep_start") == "keep_end"
    d.given("pairs", len(rows), "trl.rows")
    kept = d.add("rows_kept", trl.preference_rows_kept(prompts, trainer, max_length, keep_end, version),
                 "rows whose prompt has fewer than max_length tokens" if trl.PROMPT_FILLS_DROP.at(version) else "every row",
                 f"max_length {max_length}, {len(rows)} pairs", "trl.why.prompt_drop", trainer=trainer.upper(), version=version)
    whole = len(rows) * (2 if trainer == "kto" else 1)
    notes = [("TRL_PROMPT_FILLS_MAX_LENGTH", "trl.note.prompt_drop", {"trainer": trainer.upper(), "dropped": f"{whole - kept:,}",
                                                                      "rows": f"{whole:,}", "max_length": max_length})] \
        if kept < whole else []
    if kept == 0:
        raise InputError("trl.error.prompt_drop_all", "trl.hint.prompt_drop_all", trainer=trainer.upper(), max_length=max_length)
    return Outcome(Count.of(kept), d, notes)


def _files(cfg: ConfigFile, settings: Settings) -> list[str]:
    name = settings.text("trl.dataset_name")
    path = find_local(name, (pathlib.Path.cwd(), cfg.path.parent), directory_too=True)
    if path is None:
        return []
    return [str(p) for p in sorted(p for p in path.rglob("*") if p.is_file())] if path.is_dir() else [str(path)]


def _rows(cfg: ConfigFile, settings: Settings, g, keep_rows: bool = False):
    """An int from --num-examples, or (low, high) token estimates per row of a local dataset file."""
    from trainsteps.configs import lf_data

    if settings.get("num_examples") is not None:
        return settings.whole("num_examples")
    name = settings.text("trl.dataset_name")
    path = find_local(name, (pathlib.Path.cwd(), cfg.path.parent), directory_too=True)
    if path is None:
        raise InputError("trl.error.dataset_not_local", "trl.hint.dataset_not_local", name=name)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    if keep_rows:
        return [row for file in files for row in lf_data.read_rows(file)]
    lows, highs = [], []
    for file in files:
        for row in lf_data.read_rows(file):
            lo, hi = lf_data.token_range(lf_data.row_texts(row))
            lows.append(lo)
            highs.append(hi)
    return lows, highs


def _sft_exact(cfg: ConfigFile, settings: Settings, version: str, d: Derivation, g, provider) -> Outcome:
    """SFT rows counted with the tokenizer, through SFTTrainer's own dataset preparation (`trl.sft_rows`)."""
    from trainsteps import tokens

    rows = _rows(cfg, settings, g, keep_rows=True)
    packing = _flag(g("packing"))
    strategy = settings.text("trl.packing_strategy") or trl.PACKING.at(version)
    strategy = {"bfd-requeue": "bfd_split"}.get(strategy, strategy)  # SFTConfig renames it (1.16)
    if packing and strategy == "constant_length":
        raise InputError("trl.error.old_packing", "trl.hint.old_packing", version=version)
    max_length = settings.whole("trl.max_length") or settings.whole("trl.max_seq_length")
    if max_length is None and "max_length" not in (cfg.data or {}):
        max_length = trl.MAX_LENGTH_DEFAULT
    keep_end = settings.text("trl.truncation_mode", "keep_start") == "keep_end"
    notes: list[tuple[str, str, dict]] = []
    lengths, kind = provider(rows, {"dataset_text_field": g("dataset_text_field"), "eos_token": g("eos_token"),
                                    "completion_only_loss": None if g("completion_only_loss") is None else _flag(g("completion_only_loss"))},
                             _files(cfg, settings))
    if packing and _flag(g("shuffle_dataset")):  # Dataset.shuffle(seed) before pack_dataset
        seed = (cfg.data or {}).get("seed")  # a TrainingArguments key (read as unused there): default 42
        lengths = provider.shuffled(lengths, 42 if seed is None else to_number(seed, int, "seed"))
    flat = trl.padding_free(packing, strategy, _flag(g("padding_free")))
    result = trl.sft_rows(lengths, max_length, packing, strategy, settings.whole("trl.dataset_num_proc"), keep_end, flat)
    if rows and not result["rows"]:
        raise _no_rows_left(rows, lengths, max_length)
    d.given("rows", len(rows), "trl.rows")
    if kind == "prompt_completion" and not any(m for _, m in lengths):
        kind = "prompt_completion_all"
    d.add("tokens_raw", sum(n for n, _ in lengths), "sum of tokens per row", f"{len(lengths):,} rows", f"trl.tok.{kind}",
          tokenizer=provider.tokenizer_path)
    if packing:
        count = d.add("rows_packed", result["rows"], f"{strategy} packing per map batch of 1000 rows",
                      f"{len(lengths):,} rows, max_length {max_length}", "trl.tok.packed", strategy=strategy)
    else:
        count = d.add("rows_kept", result["rows"], "rows - rows left without a supervised token",
                      f"{len(lengths):,} - {result['dropped']:,}", "trl.tok.truncated", max_length=max_length)
    if version != trl.TOKENS_RECORDED:
        notes.append(("TRL_TOKENS_RELEASE", "trl.note.tokens_release", {"version": version, "recorded": trl.TOKENS_RECORDED}))
    if _flag(g("assistant_only_loss")):
        notes.append(("TRL_ASSISTANT_ONLY", "trl.note.assistant_only", {}))
        return Outcome(Count.of(count), d, notes)
    multiple = g("pad_to_multiple_of")
    multiple = multiple if isinstance(multiple, int) and multiple > 0 else 1  # "auto": no padding off Neuron
    source = f"TRL {trl.TOKENS_RECORDED} SFT preparation"
    if flat:  # each batch flattened into one sequence: no padding
        profile = tokens.packed(result["rows"], result["tokens"], result["supervised"], fixed_length=None, source=source)
    else:
        profile = tokens.from_lengths(result["lengths"], [result["supervised"]], pad_to_multiple_of=multiple, source=source)
    return Outcome(Count.of(count), d, notes, token_profile=profile)


def _no_rows_left(rows: list, lengths: list, max_length) -> InputError:
    """Why nothing is left to train on: an empty render (roles the chat template does not know) or every row dropped."""
    from trainsteps.data.trl_lengths import message_roles

    if any(n for n, _ in lengths):
        return InputError("trl.error.no_rows_dropped", "trl.hint.no_rows_left", rows=len(rows), max_length=max_length)
    return InputError("trl.error.no_rows_render", "trl.hint.no_rows_left", rows=len(rows),
                      roles=", ".join(message_roles(rows)) or "-")


def _flag(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)
