"""GPT-NeoX: batch parameters, iterations <-> samples <-> tokens <-> epochs, and what it prints.

Rules from EleutherAI/gpt-neox (`megatron/neox_arguments/arguments.py`, `megatron/data/data_utils.py`,
`gpt2_dataset.py`, `blendable_dataset.py`, `training.py`), checked against the real code at git
ea7aefd8 (main) and tag v2.0 in tests/fixtures/pretrain/neox*.json.

NeoX has two tags (v1.0, v2.0); later behaviour lives on main. Releases are modelled as
`1.0`, `2.0`, and main after v2.0 as `2.0.<PR>` (the pull request that changed a rule), so a
Timeline can say "from PR #1240 on". `main` means the newest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks import gptdata
from trainsteps.frameworks.deepspeed import DeepSpeedSpec, derive_batch
from trainsteps.frameworks.framework_error import FrameworkRuleError
from trainsteps.frameworks.hf.intervals import multiples
from trainsteps.frameworks.windows import SplitFacts, build_split
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.versions import Timeline

RELEASES = {"1.0": "1.0", "2.0": "2.0", "main": "2.0.99999"}

# v1.0/v2.0 name the maps `..._{ns}ns_{S}sl_{seed}s_*`; PR #1240 (2024-08-27) added `_{pack_impl}pi[_ac]`.
INDEX_MAP_NAME = Timeline("neox.index_map_name", [("1.0", "legacy"), ("2.0.1240", "pack_impl")])
# `train_epochs` (iterations inferred from the data loader) exists from PR #1283 (2024-09-29).
TRAIN_EPOCHS_SUPPORTED = Timeline("neox.train_epochs", [("1.0", False), ("2.0.1283", True)])
# v1.0/v2.0 compare shuffle and sample lengths wrongly and print a harmless warning on every build; PR #974 fixed it.
SHUFFLE_WARNING = Timeline("neox.shuffle_warning", [("1.0", True), ("2.0.974", False)])


@dataclass(frozen=True, slots=True)
class NeoXSpec:
    """The GPT-NeoX settings that decide how long a run is (names as in NeoX's YAML configs)."""

    global_num_gpus: int
    """All GPUs of the job (NeoX derives it from the hostfile or `num_gpus` x nodes)."""
    seq_length: int = 2048
    """`seq_length`: tokens per sample window."""
    train_batch_size: int | None = None
    """`train_batch_size`: samples per iteration over all data-parallel ranks."""
    train_micro_batch_size_per_gpu: int | None = None
    """`train_micro_batch_size_per_gpu`."""
    gradient_accumulation_steps: int | None = 1
    """`gradient_accumulation_steps`; NeoX's default is 1 (not None), so it is never derived unless set to null."""
    pipe_parallel_size: int = 1
    """`pipe_parallel_size` (0 counts as 1)."""
    model_parallel_size: int = 1
    """`model_parallel_size` (tensor parallelism)."""
    train_iters: int | None = None
    """`train_iters`: optimizer steps."""
    train_epochs: int | None = None
    """`train_epochs` (main since PR #1283): iterations inferred from the train loader."""
    eval_interval: int = 1000
    """`eval_interval`: iterations between evaluations."""
    eval_iters: int = 100
    """`eval_iters`: iterations per evaluation."""
    split: str = "969, 30, 1"
    """`split`: train/valid/test weights over sequences of a single `data_path`."""
    dataset: gptdata.SequenceTokens | None = None
    """The tokenized data (`.idx` reader or a list of lengths); gives exact split sizes."""
    train_tokens: int | None = None
    """Tokens of the train split, when no dataset is given (valid/test are then not modelled)."""
    train_data_tokens: tuple[int, ...] | None = None
    """Weighted path (`train_data_paths`): tokens of each training dataset (its whole file is used)."""
    train_data_weights: tuple[float, ...] | None = None
    """`train_data_weights`, one per `train_data_tokens` entry (default: all 1)."""
    data_path: str = "data/mydataset_text_document"
    """`data_path` prefix; index-map files are named after it."""
    seed: int = 1234
    """`seed` (part of the index-map file names)."""
    pack_impl: str = "packed"
    """`pack_impl`; only `packed` follows the window arithmetic."""
    allow_chopped: bool = True
    """`allow_chopped` (adds `_ac` to the file names)."""
    warmup: float = 0.01
    """`warmup`: fraction of the decay iterations spent warming up."""
    lr_decay_iters: int | None = None
    """`lr_decay_iters` (default: train_iters)."""
    lr_decay_fraction: float | None = None
    """`lr_decay_fraction`: decay over floor(train_iters * fraction) iterations."""
    checkpoint_factor: int | None = None
    """`checkpoint_factor`: save every N iterations (linear scale)."""
    log_interval: int = 100
    """`log_interval`."""
    version: str = "main"
    """`1.0`, `2.0` or `main`."""


@dataclass(slots=True)
class NeoXPlan:
    """Everything the planner works out, beyond the generic RunFacts."""

    data_parallel_size: int
    train_batch_size: int
    micro_batch: int
    gradient_accumulation_steps: int
    train_iters: int
    splits: list[SplitFacts] = field(default_factory=list)
    blend_length: int | None = None
    index_map_files: list[str] = field(default_factory=list)


def _version(spec: NeoXSpec) -> str:
    if spec.version not in RELEASES:
        raise InputError("neox.error.version", "neox.hint.version", version=spec.version, known=", ".join(RELEASES))
    return RELEASES[spec.version]


def data_parallel_size(spec: NeoXSpec, d: Derivation) -> int:
    pp = max(1, spec.pipe_parallel_size)
    mp = max(1, spec.model_parallel_size)
    dp = spec.global_num_gpus / pp / mp
    if dp % 1 != 0 or dp < 1:
        raise FrameworkRuleError("neox.error.dp", "neox.hint.dp", gpus=spec.global_num_gpus, pp=pp, mp=mp,
                         framework_error=f"NeoXArgs.calculate_derived() (global_num_gpus / pp_size) / mp_size "
                                         f"[({spec.global_num_gpus} / {pp}) / {mp}] must be a whole number")
    return d.add("data_parallel_size", int(dp), "gpus / pp / mp", f"{spec.global_num_gpus} / {pp} / {mp}", "neox.why.dp")


def plan_neox(spec: NeoXSpec) -> Schedule:
    version = _version(spec)
    d = Derivation()
    traps: list[Trap] = []
    dp = data_parallel_size(spec, d)
    triple = derive_batch(DeepSpeedSpec(dp, spec.train_batch_size, spec.train_micro_batch_size_per_gpu, spec.gradient_accumulation_steps),
                          d, float_dp=True)
    B = d.add("train_batch_size", triple.train_batch_size, "micro * GA * dp",
              f"{triple.micro_batch} * {triple.gradient_accumulation_steps} * {dp}", "neox.why.batch")
    S = spec.seq_length
    _check_mode(spec, version)
    requested = _requested_samples(spec, B, d)
    splits, blend_length = _build_splits(spec, requested, d, traps)
    train = splits[0]
    if train is not None and train.samples_per_epoch < 1:  # GPT-NeoX would build an empty sample index
        raise InputError("neox.error.no_sample", "neox.hint.no_sample", tokens=train.tokens_per_epoch, seq=S, need=S + 1)
    iters = _train_iters(spec, train, triple, dp, blend_length, d)
    files = _index_map_files(spec, version, requested, splits)
    facts = _run_facts(spec, d, iters, B, S, train, blend_length, traps)
    printed = _printed_lines(spec, version, splits, files, iters, blend_length)
    inputs = {k: v for k, v in _spec_inputs(spec).items()}
    return Schedule(
        framework="neox", version=spec.version, family=spec.version, family_reason="neox.family",
        banner={"total number of samples": f"{train.printed_samples}", "total number of epochs": f"{train.epochs_built}"}
        if train else {},
        banner_lines=printed, run=facts, warnings=traps, derivation=d, inputs=inputs,
        family_params={"version": spec.version},
    )


def _spec_inputs(spec: NeoXSpec) -> dict:
    out = {}
    for name in NeoXSpec.__slots__:
        value = getattr(spec, name)
        if name == "dataset":
            value = None if value is None else {"num_sequences": value.num_sequences}
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _check_mode(spec: NeoXSpec, version: str) -> None:
    if spec.train_epochs is not None and not TRAIN_EPOCHS_SUPPORTED.at(version):
        raise InputError("neox.error.epochs_unsupported", "neox.hint.epochs_unsupported", version=spec.version)
    if spec.train_epochs is not None and spec.train_iters is not None:
        raise InputError("neox.error.both_modes", "neox.hint.both_modes")
    if spec.train_epochs is None and spec.train_iters is None:
        raise InputError("neox.error.no_mode", "neox.hint.no_mode")
    if spec.train_epochs is not None and spec.train_data_weights and any(w != 1.0 for w in spec.train_data_weights):
        raise InputError("neox.error.epochs_weights", "neox.hint.both_modes")
    if spec.pack_impl != "packed":
        raise InputError("neox.error.pack_impl", "neox.hint.pack_impl", pack_impl=spec.pack_impl)
    if spec.dataset is None and spec.train_tokens is None and spec.train_data_tokens is None:
        raise InputError("neox.error.no_data", "neox.hint.no_data")


def _requested_samples(spec: NeoXSpec, B: int, d: Derivation) -> list[int | None]:
    if spec.train_iters is None:
        d.add("requested_samples", "None", why="neox.why.epochs_mode")
        return [None, None, None]
    it = spec.train_iters
    evals = d.add("eval_iters_total", (it // spec.eval_interval + 1) * spec.eval_iters, "(train_iters // eval_interval + 1) * eval_iters",
                  f"({it} // {spec.eval_interval} + 1) * {spec.eval_iters}", "neox.why.eval_total")
    train = d.add("train.num_samples", it * B, "train_iters * train_batch_size", f"{it} * {B}", "neox.why.ns")
    valid = d.add("valid.num_samples", evals * B, "eval_iters_total * train_batch_size", f"{evals} * {B}", "neox.why.ns")
    test = d.add("test.num_samples", spec.eval_iters * B, "eval_iters * train_batch_size", f"{spec.eval_iters} * {B}", "neox.why.ns")
    return [train, valid, test]


def _build_splits(spec: NeoXSpec, requested, d: Derivation, traps: list[Trap]) -> tuple[list[SplitFacts | None], int | None]:
    S = spec.seq_length
    if spec.train_data_tokens is not None:
        weights = spec.train_data_weights or tuple(1.0 for _ in spec.train_data_tokens)
        if len(weights) != len(spec.train_data_tokens):
            raise InputError("neox.error.weights_count", "neox.hint.weights_count", weights=len(weights), datasets=len(spec.train_data_tokens))
        per = gptdata.neox_weighted_num_samples(weights, requested[0])
        d.add("train.weighted_num_samples", per, "ceil(n * w_i * 1.005)", f"ceil({requested[0]} * w * 1.005)" if requested[0] else "",
              "neox.why.surplus")
        parts = [build_split(d, f"train_{i}", tokens, S, n, 1, -1, 1) for i, (tokens, n) in enumerate(zip(spec.train_data_tokens, per, strict=False))]
        total = d.add("train.blend_length", sum(p.length for p in parts), "sum(len(dataset_i))",
                      " + ".join(f"{p.length:,}" for p in parts), "neox.why.blend_len")
        combined = SplitFacts("train", None, None, sum(p.tokens_per_epoch for p in parts), requested[0],
                              max(p.epochs_built for p in parts), sum(p.samples_built for p in parts),
                              sum(p.samples_per_epoch for p in parts), total, parts[0].printed_samples)
        _blend_traps(spec, parts, requested[0], traps)
        return [combined, *parts], total
    if spec.dataset is not None:
        n = spec.dataset.num_sequences
        bounds = gptdata.split_neox(spec.split, n)
        d.add("split_boundaries", bounds, "round(w_i * n) cumulated, error moved onto every boundary", f"split {spec.split!r}, n={n:,}",
              "neox.why.split")
        out: list[SplitFacts | None] = []
        for i, name in enumerate(("train", "valid", "test")):
            b, e = bounds[i], bounds[i + 1]
            if e <= b:
                out.append(None)
                continue
            tokens = spec.dataset.tokens(b, e)
            out.append(build_split(d, name, tokens, S, requested[i], 1, -1, 1, b, e))
        if out[0] is None:
            raise InputError("neox.error.empty_train", "neox.hint.empty_train", split=spec.split, n=n)
        return out, None
    return [build_split(d, "train", spec.train_tokens, S, requested[0], 1, -1, 1), None, None], None


def _blend_traps(spec, parts, requested, traps) -> None:
    if requested is not None:
        traps.append(Trap("NEOX_BLEND_SURPLUS", "neox.trap.surplus", {"requested": requested, "built": sum(p.num_samples_requested or 0 for p in parts)}))


def _train_iters(spec: NeoXSpec, train: SplitFacts, triple, dp: int, blend_length, d: Derivation) -> int:
    if spec.train_iters is not None:
        return d.given("train_iters", spec.train_iters)
    loader = d.add("dataloader_len", train.length // (triple.micro_batch * dp), "len(train_dataset) // (micro * dp)",
                   f"{train.length:,} // ({triple.micro_batch} * {dp})", "neox.why.loader")
    return d.add("train_iters", loader * spec.train_epochs // triple.gradient_accumulation_steps,
                 "(dataloader_len * train_epochs) // GA", f"({loader:,} * {spec.train_epochs}) // {triple.gradient_accumulation_steps}",
                 "neox.why.epochs_iters")


def _run_facts(spec: NeoXSpec, d: Derivation, iters: int, B: int, S: int, train: SplitFacts, blend_length, traps) -> RunFacts:
    samples = d.add("samples_seen", iters * B, "train_iters * train_batch_size", f"{iters:,} * {B}", "neox.why.samples")
    tokens = d.add("tokens_seen", samples * S, "samples * seq_length", f"{samples:,} * {S}", "neox.why.tokens")
    per_epoch = train.samples_per_epoch
    epochs = d.add("epochs_trained", round(samples / per_epoch, 6) if per_epoch else 0.0, "samples / samples_per_epoch",
                   f"{samples:,} / {per_epoch:,}", "neox.why.epochs_trained")
    max_once = d.add("max_iters_one_epoch", per_epoch // B, "samples_per_epoch // train_batch_size", f"{per_epoch:,} // {B}",
                     "neox.why.one_epoch_iters")
    if blend_length is None and samples > train.length:
        traps.append(Trap("NEOX_LOADER_WRAPS", "neox.trap.wraps", {"samples": samples, "length": train.length}))
    if spec.train_iters is not None and train.epochs_built > 1:
        traps.append(Trap("NEOX_SECOND_EPOCH", "neox.trap.epochs", {"epochs": train.epochs_built, "iters": spec.train_iters,
                                                                     "max_iters": max_once, "per_epoch": per_epoch}))
    decay = spec.lr_decay_iters if spec.lr_decay_iters is not None else (
        math.floor(iters * spec.lr_decay_fraction) if spec.lr_decay_fraction is not None else iters)
    decay = max(1, decay)
    warm = d.add("warmup_iter", spec.warmup * decay, "warmup * decay_iters", f"{spec.warmup} * {decay:,}", "neox.why.warmup")
    # multiples() refuses more than MAX_EVENTS steps, as on the Trainer path
    evals = multiples(spec.eval_interval, iters, name="eval_interval") if spec.eval_interval and spec.eval_iters else []
    saves = multiples(spec.checkpoint_factor, iters, name="checkpoint_factor") if spec.checkpoint_factor else []
    if spec.checkpoint_factor and iters and (not saves or saves[-1] != iters):
        saves.append(iters)  # pretrain() saves once more at the end
    logs = multiples(spec.log_interval, iters, name="log_interval") if spec.log_interval else []
    return RunFacts(
        optimizer_steps=iters, max_steps=iters, epoch_end_steps=[], epochs_completed=epochs, epochs_planned=train.epochs_built,
        samples_seen=samples, warmup_steps=math.ceil(warm), log_steps=logs, eval_steps=evals, save_steps=saves,
        batches_per_epoch=None, samples_per_epoch=per_epoch, tokens_seen=tokens,
    )


def index_map_prefix(data_path: str, name: str, num_samples, seq_length: int, seed: int, version: str,
                     pack_impl: str = "packed", allow_chopped: bool = True) -> str:
    base = f"{data_path}_{name}_indexmap_{num_samples}ns_{seq_length}sl_{seed}s"
    if INDEX_MAP_NAME.at(version) == "pack_impl":
        base += f"_{pack_impl}pi" + ("_ac" if allow_chopped else "")
    return base


def _index_map_files(spec: NeoXSpec, version: str, requested, splits) -> list[str]:
    files = []
    names = ("train", "valid", "test")
    for i, split in enumerate(splits[:3]):
        if split is None or split.name != names[i]:
            continue
        base = index_map_prefix(spec.data_path, names[i], requested[i], spec.seq_length, spec.seed, version, spec.pack_impl, spec.allow_chopped)
        files += [f"{base}_{kind}_idx.npy" for kind in ("doc", "sample", "shuffle")]
    return files


def _printed_lines(spec: NeoXSpec, version: str, splits, files, iters: int, blend_length) -> list[str]:
    """The index-building lines NeoX prints for the train split (rank 0, first run: maps not cached)."""
    out = []
    train = splits[0]
    if blend_length is None and spec.dataset is not None:
        out.append(" > dataset split:")
        for name, split in zip(("train", "validation", "test"), splits[:3], strict=False):
            b, e = (split.begin, split.end) if split else (None, None)
            out.append(f"    {name}:")
            if split is not None:
                out.append(f"     document indices in [{b}, {e}) total of {e - b} documents")
    for split in (splits[1:] if blend_length is not None else [train]):
        if split is None:
            continue
        docs = (split.end - split.begin) if split.begin is not None else "?"
        out += ["    using:", f"     number of documents:       {docs}", f"     number of epochs:          {split.epochs_built}",
                f"     sequence length:           {spec.seq_length}", f"     total number of samples:   {split.samples_built}",
                f"    total number of samples: {split.samples_built + 1}", f"    total number of epochs: {split.epochs_built}"]
        if SHUFFLE_WARNING.at(version):
            out.append(f"WARNING: shuffle index length ({split.samples_built - 1}) is not equal to sample index length ({split.samples_built})")
    if files:
        out.append(f" > loading sample-idx mapping from {files[1]}")
    if spec.train_epochs is not None:
        out.append(f"Training for a total of {iters} iterations, corresponding to {spec.train_epochs} epochs.")
    out.append(f" samples/sec: ... | iteration {iters:8d}/{iters:8d} | ...")
    return out
