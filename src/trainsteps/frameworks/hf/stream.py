"""Iterable datasets (streams) under the Trainer: how ranks split a pass, what a run really covers,
and what the Trainer's own `epoch` means for them.

A stream has no length, so the Trainer runs `max_steps` optimizer steps and believes one "epoch"
is `max_steps x GA` micro-batches. Given the size of one pass over the data (rows, or tokens of a
packed stream), everything the user wants to know follows from the loop model: the batches each
rank gets per pass, the global step where every pass ends, the rows and tokens fed, and the
equivalent number of epochs (rows fed / rows in one pass).

Sources: accelerate `data_loader.py` (`prepare_data_loader`, `DataLoaderDispatcher`,
`IterableDatasetShard`; same logic 0.20 -> 1.15), transformers 4.30.2 `trainer.py:903`
(`IterableDatasetShard` around the dataset), checked against recorded runs (tests/fixtures/hf,
tests/fixtures/stream).
"""

from __future__ import annotations

from trainsteps.derivation import Derivation, format_epochs
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.loader import LoaderShape, ceil_div
from trainsteps.frameworks.hf.loop import LoopResult
from trainsteps.schedule import Schedule, Trap
from trainsteps.spec import RunSpec
from trainsteps.versions import Timeline, Version

# How the ranks of a multi-process run share one stream, by release.
STREAM_SPLIT = Timeline(
    "stream split across ranks",
    [
        # The Trainer wraps the dataset in transformers' IterableDatasetShard; the loader is not prepared.
        ("4.30.0", "shard"),
        # accelerate prepares the loader; dispatch_batches=None means True for an IterableDataset:
        # rank 0 reads W batches, concatenates them and sends each rank its slice.
        ("4.31.0", "dispatch"),
    ],
)


# Whether `dataloader_drop_last` reaches a stream's loader, by release (recorded: tests/fixtures/stream).
STREAM_DROP_LAST = Timeline(
    "drop_last on a stream",
    [
        # only transformers' IterableDatasetShard gets it (W > 1); the DataLoader itself never does
        ("4.30.0", "shard_only"),
        # get_train_dataloader sets drop_last only for map-style datasets: a stream keeps its last batch
        ("4.31.0", "ignored"),
    ],
)


def effective_drop_last(version: Version, spec: RunSpec, split: str) -> bool:
    """The drop_last the stream's loader really uses."""
    if not spec.dataloader_drop_last:
        return False
    return STREAM_DROP_LAST.at(version) == "shard_only" and split == "shard"


def rank_split(version: Version, spec: RunSpec, dp: int) -> str:
    """`single` (one data-parallel rank), `dispatch` (rank 0 reads for all) or `shard` (each rank reads its part)."""
    if dp == 1:
        return "single"
    mode = STREAM_SPLIT.at(version)
    if mode == "dispatch" and spec.dispatch_batches is False:
        return "shard"
    return mode


def pass_rows(d: Derivation, spec: RunSpec) -> int | None:
    """Rows in one pass over the stream, from `num_examples` or from the tokens of a packed stream."""
    if spec.num_examples is not None:
        return d.given("stream_rows", spec.num_examples, "hf.stream.rows_given")
    if spec.dataset_tokens is not None:
        t, length = spec.dataset_tokens, spec.seq_length
        rows = d.add("stream_rows", t // length, "floor(T / seq_length)", f"floor({t:,} / {length:,})", "hf.stream.rows_packed",
                     dropped=t % length)
        if rows == 0:
            raise InputError("stream.error.tokens_too_few", "stream.hint.tokens_too_few", tokens=t, seq_length=length)
        return rows
    return None


def stream_shape(d: Derivation, split: str, n: int, bs: int, dp: int, drop_last: bool, split_batches: bool) -> LoaderShape:
    """One pass over a stream of n rows: batches per rank, rows per full batch and per last batch (all ranks)."""
    d.given("stream_split", split, "hf.stream.split." + split, world=dp)
    if split == "shard":
        # IterableDatasetShard cuts the stream into global batches of bs x W rows; the last one is
        # completed with rows from the start of the pass (or dropped with drop_last).
        g = bs * dp
        if drop_last:
            batches = d.add("batches_per_epoch", n // g, "floor(N / (bs x W))", f"floor({n} / ({bs} x {dp}))", "hf.stream.shard_drop")
        else:
            batches = d.add("batches_per_epoch", ceil_div(n, g), "ceil(N / (bs x W))", f"ceil({n} / ({bs} x {dp}))", "hf.stream.shard_keep")
        return LoaderShape(batches, g, g, dp)
    per_read = bs if split_batches else bs * dp  # rows rank 0 reads for one dispatch (single: one batch)
    if split == "single":
        per_read = bs
    whole = d.add("global_batches", n // bs if drop_last else ceil_div(n, bs), "floor(N / bs)" if drop_last else "ceil(N / bs)",
                  f"{'floor' if drop_last else 'ceil'}({n} / {bs})", "hf.loader.drop_last" if drop_last else "hf.loader.keep_last")
    group = 1 if split in ("single",) or split_batches else dp
    if drop_last:
        # The dispatcher drops an incomplete group of batches too.
        batches = d.add("batches_per_epoch", whole // group, "floor(B / W)", f"floor({whole} / {group})", "hf.stream.dispatch_drop", world=dp)
        return LoaderShape(batches, per_read, per_read, dp)
    batches = d.add("batches_per_epoch", ceil_div(whole, group), "ceil(B / W)", f"ceil({whole} / {group})", "hf.stream.dispatch", world=dp)
    rest = n - (batches - 1) * per_read
    # The last dispatch of R rows gives every rank ceil(R / W) rows; when R is not a multiple of W
    # the dispatcher appends the first rows of the pass, so a few rows are fed twice.
    last = d.add("last_batch_rows", dp * ceil_div(rest, dp) if split != "single" else rest, "W x ceil(R / W)",
                 f"{dp} x ceil({rest} / {dp})", "hf.stream.last_batch", world=dp)
    return LoaderShape(batches, per_read, last, dp)


def annotate(d: Derivation, schedule: Schedule, spec: RunSpec, split: str, n: int | None, shape: LoaderShape | None,
             loop: LoopResult) -> Schedule:
    """Add what a stream run covers to a schedule: passes, pass ends, equivalent epochs, tokens, and the warnings."""
    run, version = schedule.run, schedule.version
    run.rank_split = split
    found = schedule.warnings
    if spec.dataloader_drop_last and not effective_drop_last(Version.parse(version), spec, split):
        found.append(Trap("HF_STREAM_DROP_LAST_IGNORED", "hf.trap.stream_drop_last", {"version": version}))
    if split == "dispatch":
        found.append(Trap("HF_STREAM_DISPATCH_SAME_SHAPE", "hf.trap.stream_dispatch", {"world": shape.data_parallel if shape else spec.world_size}))
    elif split == "shard" and spec.dispatch_batches is False:
        found.append(Trap("HF_STREAM_OWN_SHARDS", "hf.trap.stream_shards", {"world": spec.world_size}))
    if n is None or shape is None:
        found.append(Trap("HF_STREAM_SIZE_UNKNOWN", "hf.trap.stream_size_unknown", {"steps": run.max_steps}))
        return schedule
    rows_per_pass = (shape.batches - 1) * shape.full_rows + shape.last_rows
    d.add("rows_per_pass", rows_per_pass, "(L - 1) x rows per batch + last batch rows",
          f"({shape.batches} - 1) x {shape.full_rows} + {shape.last_rows}", "hf.stream.rows_per_pass")
    passes = d.add("passes_completed", loop.batches_consumed // shape.batches, "floor(batches read / L)",
                   f"floor({loop.batches_consumed} / {shape.batches})", "hf.stream.passes")
    run.passes_completed = passes
    run.pass_end_steps = loop.epoch_end_steps[:passes]
    samples = run.samples_seen
    run.equivalent_epochs = d.add("equivalent_epochs", round(samples / n, 4), "samples seen / N", f"{samples:,} / {n:,}", "hf.stream.equivalent")
    if spec.seq_length:
        run.tokens_seen = d.add("tokens_seen", samples * spec.seq_length, "samples seen x seq_length",
                                f"{samples:,} x {spec.seq_length:,}", "hf.stream.tokens")
    logged = run.epochs_completed
    if logged is not None and abs(logged - run.equivalent_epochs) > 1e-3:
        found.append(Trap("HF_STREAM_EPOCH_MISLEADING", "hf.trap.stream_epoch",
                          {"logged": format_epochs(logged), "equivalent": format_epochs(run.equivalent_epochs), "samples": samples, "n": n,
                           "batches": spec.max_steps * spec.gradient_accumulation_steps, "version": version}))
    return schedule
