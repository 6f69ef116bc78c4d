"""`len(train_dataloader)` on one rank, and the rows each batch carries.

4.30 shards with torch's DistributedSampler (each rank pads to ceil(N/W) rows, then
batches); 4.31+ batch the whole dataset first and let accelerate's BatchSamplerShard
deal whole batches to ranks (wrapping around so every rank gets as many).
"""

from __future__ import annotations

from trainsteps.derivation import Derivation
from trainsteps.record import record


@record(frozen=True)
class LoaderShape:
    """One epoch of the train dataloader as seen by the loop."""

    batches: int
    """Micro-batches per epoch on each rank (`L`)."""
    full_rows: int
    """Rows of one micro-batch summed over all ranks."""
    last_rows: int
    """Rows of the last micro-batch of the epoch summed over all ranks (short when the data does not divide)."""
    data_parallel: int
    """Ranks that read different data."""


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def loader_shape(d: Derivation, loader: str, n: int, bs: int, dp: int, drop_last: bool, split_batches: bool,
                 even_batches: bool = True) -> LoaderShape:
    if loader == "distributed_sampler" and dp > 1:
        return _distributed_sampler(d, n, bs, dp, drop_last)
    return _accelerate(d, n, bs, dp, drop_last, split_batches, even_batches)


def _distributed_sampler(d: Derivation, n: int, bs: int, dp: int, drop_last: bool) -> LoaderShape:
    per_rank = d.add("rows_per_rank", ceil_div(n, dp), "ceil(N / W)", ("ceil({} / {})", n, dp), "hf.loader.dist_sampler")
    if drop_last:
        batches = d.add("batches_per_epoch", per_rank // bs, "floor(rows_per_rank / bs)", ("floor({} / {})", per_rank, bs), "hf.loader.drop_last")
        last = bs
    else:
        batches = d.add("batches_per_epoch", ceil_div(per_rank, bs), "ceil(rows_per_rank / bs)", ("ceil({} / {})", per_rank, bs), "hf.loader.keep_last")
        last = per_rank - (batches - 1) * bs if batches else 0
    return LoaderShape(batches, bs * dp, last * dp, dp)


def _accelerate(d: Derivation, n: int, bs: int, dp: int, drop_last: bool, split_batches: bool, even_batches: bool) -> LoaderShape:
    if drop_last:
        whole = d.add("global_batches", n // bs, "floor(N / bs)", ("floor({} / {})", n, bs), "hf.loader.drop_last")
    else:
        whole = d.add("global_batches", ceil_div(n, bs), "ceil(N / bs)", ("ceil({} / {})", n, bs), "hf.loader.keep_last")
    short = n - (whole - 1) * bs if whole and not drop_last else bs
    if dp == 1:
        batches = d.add("batches_per_epoch", whole, "B", ("{}", whole), "hf.loader.single")
        return LoaderShape(batches, bs, short, 1)
    if split_batches:
        # Each loader batch of bs rows is cut into dp pieces; the last one is completed from the start.
        batches = d.add("batches_per_epoch", whole, "B", ("{}", whole), "hf.loader.split_batches", world=dp)
        return LoaderShape(batches, bs, bs, dp)
    if drop_last:
        batches = d.add("batches_per_epoch", whole // dp, "floor(B / W)", ("floor({} / {})", whole, dp), "hf.loader.shard_drop", world=dp)
    elif not even_batches:
        # Rank 0 gets the most batches; the rows are real rows only, so ranks end up with different counts.
        batches = d.add("batches_per_epoch", ceil_div(whole, dp), "ceil(B / W)", ("ceil({} / {})", whole, dp), "hf.loader.shard_uneven", world=dp)
        return LoaderShape(batches, bs * dp, n - (batches - 1) * bs * dp, dp)
    else:
        batches = d.add("batches_per_epoch", ceil_div(whole, dp), "ceil(B / W)", ("ceil({} / {})", whole, dp), "hf.loader.shard_even", world=dp)
    # even_batches: short ranks and the short last batch are filled with rows from the start of the data.
    return LoaderShape(batches, bs * dp, bs * dp, dp)

