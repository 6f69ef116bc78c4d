"""LLaMA-Factory training YAML (`llamafactory-cli train cfg.yaml`) -> settings + the number of training rows.

`dataset_dir` is resolved the way LLaMA-Factory does (relative to the directory it is launched from), then,
failing that, next to the YAML and its parent folders, so `trainsteps plan examples/x.yaml` works from the
repository root as well as from elsewhere.
"""

from __future__ import annotations

import pathlib

from trainsteps.configs.files import ConfigFile
from trainsteps.configs.hf_args import read_training_arguments
from trainsteps.configs.known_keys import LLAMAFACTORY
from trainsteps.configs.outcome import Outcome
from trainsteps.configs.settings import Settings, to_number
from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks import llamafactory as lf

DATA_KEYS = ("stage", "dataset", "eval_dataset", "dataset_dir", "cutoff_len", "max_samples", "val_size", "packing", "neat_packing",
             "streaming", "buffer_size", "mix_strategy", "interleave_probs", "preprocessing_num_workers", "preprocessing_batch_size",
             "tokenized_path", "seed", "template", "train_on_prompt", "mask_history", "enable_thinking", "model_name_or_path")
MARKERS = ("stage", "finetuning_type", "template", "dataset", "cutoff_len", "lora_target")


# LLaMA-Factory's own keys that do not change the step count, and the HfArgumentParser stage switches.
_KNOWN_UNUSED = frozenset(LLAMAFACTORY) | {"do_train", "do_eval", "do_predict"}


def looks_like_llamafactory(data: dict) -> bool:
    swift_like = "tuner_type" in data or "train_type" in data or ("model" in data and "model_name_or_path" not in data)
    return sum(k in data for k in MARKERS) >= 2 and "datasets" not in data and not swift_like


def read(cfg: ConfigFile, settings: Settings) -> None:
    rest = read_training_arguments(cfg, settings)
    for key in rest:
        settings.file_key(key, cfg.data[key], cfg.where(key), "lf", DATA_KEYS, _KNOWN_UNUSED)
    if cfg.data.get("streaming"):
        settings.put("streaming", True, cfg.where("streaming"))


def pin_transformers(settings: Settings, version: str) -> None:
    """The transformers release modelled when none is named: the newest one LLaMA-Factory `version` installs (its
    Requires-Dist ceiling). Read once per import, before any flag or count, so no other setting moves it."""
    ceiling = lf.TRANSFORMERS_CEILING.at(version)
    if ceiling and "transformers" not in settings:
        settings.put("transformers", ceiling, f"default: newest transformers LLaMA-Factory {version} installs")


def outcome(cfg: ConfigFile, settings: Settings, version: str, lengths_provider=None) -> Outcome:
    d = Derivation()
    d.given("llamafactory", version, "llamafactory.version")
    notes: list[tuple[str, str, dict]] = []
    g = lambda key, default=None: settings.get(f"lf.{key}", default)  # noqa: E731
    if settings.text("lf.tokenized_path") and _has_tokenized(cfg, g("tokenized_path")):
        notes.append(("LF_TOKENIZED_PATH", "llamafactory.note.tokenized_path", {"path": g("tokenized_path")}))
    stage = settings.text("lf.stage", "sft")
    _check_data_args(g)
    if g("streaming"):
        _check_streaming(settings, g)
        return Outcome(None, d, notes)
    names = settings.names("lf.dataset")
    if not names:
        raise InputError("configs.error.lf_no_dataset", "configs.hint.lf_no_dataset", path=str(cfg.path))
    mix = settings.text("lf.mix_strategy", "concat")
    if mix not in lf.MIX_STRATEGIES.at(version):
        raise InputError("configs.error.lf_mix", "configs.hint.lf_mix", value=mix, version=version, allowed=", ".join(lf.MIX_STRATEGIES.at(version)))
    probs = g("interleave_probs")
    if isinstance(probs, str):
        probs = [to_number(x, float, "lf.interleave_probs") for x in probs.split(",")]
    cutoff = settings.whole("lf.cutoff_len") or lf.CUTOFF_LEN_DEFAULT.at(version)
    explicit_packing = g("packing") is not None or bool(g("neat_packing", False))
    packs = (stage == "pt" and g("packing") is not False) or (stage == "sft" and bool(g("packing") or g("neat_packing")))
    encode_cutoff = lf.pack_capacity(version, cutoff, explicit_packing) if packs and stage == "sft" else cutoff
    provider_options = {"version": version, "template": g("template"), "cutoff_len": encode_cutoff,
                        "train_on_prompt": _flag(g("train_on_prompt")), "mask_history": _flag(g("mask_history")),
                        "enable_thinking": g("enable_thinking", True)}
    pipeline = lf.PipelineInput(
        datasets=_datasets(cfg, names, settings.text("lf.dataset_dir", "data"), stage, lengths_provider, provider_options),
        stage=stage, version=version, cutoff_len=settings.whole("lf.cutoff_len"), max_samples=settings.whole("lf.max_samples"), val_size=settings.real("lf.val_size", 0) or 0.0,
        packing=g("packing"), neat_packing=bool(g("neat_packing", False)), mix_strategy=mix, interleave_probs=probs,
        seed=settings.whole("lf.seed", settings.get("seed", 42), minimum=None) or 42,
        preprocessing_batch_size=settings.whole("lf.preprocessing_batch_size", 1000) or 1000,
        preprocessing_num_workers=settings.whole("lf.preprocessing_num_workers"),
    )
    if probs is not None and len(probs) != len(names):
        raise InputError("configs.error.lf_probs", "configs.hint.lf_probs", probs=len(probs), datasets=len(names))
    kept: list = []
    count = lf.train_examples(pipeline, d, kept)
    # tokens are known when every kept row was encoded, and the Trainer sees those rows (not a val_size fraction of
    # packed rows, as up to 0.9.3)
    split_later = lf.VAL_SPLIT_STAGE.at(version) == "after_preprocess" and (pipeline.val_size or 0) > 1e-6
    profile = (_token_profile(kept[0], count, pipeline, encode_cutoff)
               if kept and kept[0].lengths is not None and count.exact and not split_later else None)
    if lengths_provider is not None and profile is None:
        notes.append(("LF_TOKENS_UNKNOWN", "llamafactory.note.tokens_unknown", {}))
    if mix != "concat":
        notes.append(("LF_INTERLEAVE", "llamafactory.note.interleave", {"strategy": mix}))
    if lf._packing_on(pipeline) and stage == "pt" and g("packing") is None:
        notes.append(("LF_PT_PACKS", "llamafactory.note.pt_packs", {}))
    eval_rows = _eval_rows(cfg, settings, stage) if settings.names("lf.eval_dataset") else None
    return Outcome(count, d, notes, token_profile=profile, eval_examples=eval_rows)


def _eval_rows(cfg: ConfigFile, settings: Settings, stage: str) -> int | None:
    """Rows of `eval_dataset`: each entry's rows (or its `num_samples`), at most `max_samples` of them as
    LLaMA-Factory's loader takes, less the rows its converter drops. None when an entry cannot be read here (a hub
    dataset): the evaluation time is then left out rather than guessed."""
    try:
        entries = _datasets(cfg, settings.names("lf.eval_dataset"), settings.text("lf.dataset_dir", "data"), stage, None)
    except InputError:
        return None
    max_samples, total = settings.whole("lf.max_samples"), 0
    for entry in entries:
        rows = to_number(entry.num_samples, int, "num_samples") if entry.num_samples else entry.rows.n
        rows = min(rows, max_samples) if max_samples else rows
        if entry.rows.valid is not None and not entry.num_samples:
            rows = sum(entry.rows.valid[:rows])
        total += rows
    return total


def _flag(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def _token_profile(rows: lf.Rows, count, p: lf.PipelineInput, encode_cutoff: int):
    """Tokens of the rows the Trainer sees: the kept rows as encoded (unpacked, padded per batch to a multiple of 8 by
    LLaMA-Factory's SFT collator) or packed into `count` rows (SFT: padded to cutoff_len + 1; pt: blocks of cutoff_len)."""
    from trainsteps import tokens

    supervised = rows.supervised or rows.lengths
    if not lf._packing_on(p):
        lengths = rows.lengths if p.stage == "sft" else [min(n, encode_cutoff) for n in rows.lengths]  # pt rows are cut at cutoff_len
        return tokens.from_lengths(lengths, supervised if p.stage == "sft" else lengths,
                                   pad_to_multiple_of=8 if p.stage == "sft" else 1, source="llamafactory")
    if p.stage == "pt":
        return tokens.fixed(count.value, encode_cutoff, source="llamafactory")
    fitting = [i for i, n in enumerate(rows.lengths) if n <= encode_cutoff]
    return tokens.packed(count.value, sum(rows.lengths[i] for i in fitting), sum(supervised[i] for i in fitting),
                         fixed_length=encode_cutoff + 1, pad_to_multiple_of=8, source="llamafactory")


def _check_data_args(g) -> None:
    """The checks of LLaMA-Factory's DataArguments.__post_init__ that stop a run before it starts."""
    val = to_number(g("val_size", 0) or 0, float, "lf.val_size")
    if val > 1e-6 and g("eval_dataset") is not None:
        raise InputError("configs.error.lf_val_and_eval", "configs.hint.lf_val_and_eval")
    if g("interleave_probs") is not None and g("mix_strategy", "concat") == "concat":
        raise InputError("configs.error.lf_probs_concat", "configs.hint.lf_probs_concat")


def _check_streaming(settings: Settings, g) -> None:
    if (settings.whole("max_steps", -1, minimum=None) or -1) <= 0:
        raise InputError("configs.error.lf_stream_max_steps", "configs.hint.lf_stream_max_steps")
    if g("max_samples") is not None:
        raise InputError("configs.error.lf_stream_max_samples", "configs.hint.lf_stream_max_samples")
    val = settings.real("lf.val_size", 0) or 0
    if 0 < val < 1:
        raise InputError("configs.error.lf_stream_val", "configs.hint.lf_stream_val", value=val)


def _has_tokenized(cfg: ConfigFile, path: str) -> bool:
    return any((base / path).is_dir() for base in (pathlib.Path.cwd(), cfg.path.parent))


def resolve_dataset_dir(cfg: ConfigFile, dataset_dir: str) -> pathlib.Path:
    """LLaMA-Factory opens `dataset_dir` relative to where it runs; try there, then next to the YAML and upwards."""
    candidates = [pathlib.Path(dataset_dir)]
    if not pathlib.Path(dataset_dir).is_absolute():
        parent = cfg.path.resolve().parent
        for _ in range(4):
            candidates.append(parent / dataset_dir)
            parent = parent.parent
    for candidate in candidates:
        try:
            if (candidate / "dataset_info.json").is_file():
                return candidate
        except OSError:  # a name too long for the file system cannot hold it either
            continue
    raise InputError("configs.error.lf_no_dataset_info", "configs.hint.lf_no_dataset_info", path=str(pathlib.Path(dataset_dir) / "dataset_info.json"))


def _datasets(cfg: ConfigFile, names: list[str], dataset_dir: str, stage: str, lengths_provider,
              provider_options: dict | None = None) -> list[lf.DatasetRows]:
    from trainsteps.configs import lf_data

    if dataset_dir == "ONLINE":
        raise InputError("configs.error.lf_hub", "configs.hint.lf_hub", name=names[0])
    base = resolve_dataset_dir(cfg, dataset_dir)
    info, info_path = lf_data.load_dataset_info(base)
    out = []
    for name in names:
        entry = lf_data.dataset_entry(info, info_path, name)
        source = lf_data.entry_source(entry)
        if source != "file":
            if entry.get("num_samples"):
                out.append(lf.DatasetRows(name, lf.Rows(to_number(entry["num_samples"], int, "num_samples")), None))
                continue
            raise InputError("configs.error.lf_hub", "configs.hint.lf_hub", name=name)
        if stage not in ("sft", "pt"):  # pairwise / KTO / PPO rows are encoded differently: not modelled with a tokenizer
            lengths_provider = None
        rows, lengths, supervised = [], [] if lengths_provider else None, [] if lengths_provider else None
        for path in lf_data.data_files(base, entry, name):
            file_rows = lf_data.read_rows(path)
            rows += file_rows
            if lengths_provider is not None:  # exact tokens through the config's own template (plan CONFIG --tokenizer)
                file_lengths, file_supervised = lengths_provider(file_rows, entry, stage, provider_options or {}, str(path))
                lengths += file_lengths
                supervised += file_supervised
        facts = lf_data.row_facts(rows, entry, stage)
        any_invalid = not all(facts.valid)
        out.append(lf.DatasetRows(
            name,
            lf.Rows(len(rows), facts.valid if any_invalid else None, lengths, facts.low, facts.high, supervised=supervised),
            entry.get("num_samples"),
        ))
    return out


NEWEST_VERSION = lf.NEWEST
