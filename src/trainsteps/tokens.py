"""Tokens of a planned run: per optimizer step, per epoch and over the run; non-padding, supervised and padded.

One home for every surface (`plan --data`, `plan CONFIG --tokenizer`, `--dataset-tokens`/`--seq-length`): the data side
is summarised as a `TokenProfile` (how many rows of which length the Trainer sees), the schedule says how many rows
are fed, and `attach` writes the token facts into the schedule's `run` with their derivation.

Pure arithmetic: no numpy, no I/O. Expected values are over the random order of a shuffled sampler:
- a row is drawn uniformly from the rows of an epoch, so the rows of a whole epoch hold exactly the epoch's tokens and
  a partial epoch holds rows x mean in expectation;
- an unpacked micro-batch is padded to its longest row (rounded up to `pad_to_multiple_of`): its expected length is
  E[max of B draws] = Σ_l pad(l) (F(l)^B - F(l-1)^B), drawing with replacement (within 1/N of drawing without);
- a step's tokens are the sum of `global batch` rows: mean G x mean, and a 95% range from the rows' spread
  (normal approximation, clipped to G x shortest .. G x longest).
"""

from __future__ import annotations

import math

from trainsteps.record import record

Z95 = 1.959963984540054


@record(frozen=True)
class TokenProfile:
    """The rows the Trainer sees, by token length (after cutoff and packing)."""

    rows: int
    """Rows of one epoch (`len(train_dataset)`)."""
    tokens: int
    """Non-padding tokens in those rows."""
    supervised: int
    """Tokens whose label is trained on (not -100)."""
    histogram: tuple[tuple[int, int], ...] = ()
    """(length, rows of that length), ascending; empty when every row has `fixed_length` tokens."""
    fixed_length: int | None = None
    """Every row is padded (or packed) to exactly this many tokens, e.g. packed blocks or packed rows padded to the cutoff."""
    pad_to_multiple_of: int = 1
    """The collator rounds each batch's length up to a multiple of this (LLaMA-Factory: 8)."""
    source: str = ""
    """What the profile was counted from, e.g. `counted with tokenizer.json`, for the report."""
    exact: bool = True
    """False when the lengths are themselves estimates (sampled count)."""

    @property
    def mean(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0

    def spread(self) -> float:
        """Standard deviation of a row's non-padding tokens."""
        if not self.histogram or not self.rows:
            return 0.0
        mean = self.mean
        return math.sqrt(max(sum(n * (length - mean) ** 2 for length, n in self.histogram) / self.rows, 0.0))

    def shortest(self) -> int:
        return self.histogram[0][0] if self.histogram else round(self.mean)

    def longest(self) -> int:
        return self.histogram[-1][0] if self.histogram else round(self.mean)

    def padded_row(self, batch: int) -> float:
        """Expected tokens of one row once its micro-batch of `batch` rows is padded."""
        m = max(self.pad_to_multiple_of, 1)
        if self.fixed_length is not None:
            return float(math.ceil(self.fixed_length / m) * m)
        if not self.histogram:
            return self.mean
        below, expected = 0, 0.0
        for length, n in self.histogram:
            before = (below / self.rows) ** batch
            below += n
            expected += math.ceil(length / m) * m * ((below / self.rows) ** batch - before)
        return expected


def from_lengths(tokens, supervised, *, pad_to_multiple_of: int = 1, fixed_length: int | None = None, source: str = "",
                 exact: bool = True) -> TokenProfile:
    """A profile from per-row lengths (any iterable of ints, or a `data.stats.Distribution`)."""
    counts_of = getattr(tokens, "counts", None)
    if counts_of is not None and not isinstance(tokens, (list, tuple)):  # a Distribution: counts[l] rows of length l
        histogram = tuple((int(length), int(n)) for length, n in enumerate(counts_of) if n)
    else:
        tally: dict[int, int] = {}
        for length in tokens:
            tally[int(length)] = tally.get(int(length), 0) + 1
        histogram = tuple(sorted(tally.items()))
    rows = sum(n for _, n in histogram)
    return TokenProfile(rows, sum(length * n for length, n in histogram), int(sum(supervised)) if not hasattr(supervised, "sum")
                        else int(supervised.sum()), histogram, fixed_length, pad_to_multiple_of, source, exact)


def packed(rows: int, tokens: int, supervised: int, *, fixed_length: int | None, pad_to_multiple_of: int = 1,
           source: str = "") -> TokenProfile:
    """Packed rows: the token totals are those of the packed examples; each row padded to `fixed_length`, if known
    (None: padding-free, a row is exactly its tokens)."""
    return TokenProfile(rows, tokens, supervised, (), fixed_length, pad_to_multiple_of, source)


def fixed(rows: int, length: int, source: str = "") -> TokenProfile:
    """Every row holds exactly `length` tokens, all trained on (pretraining blocks, a packed stream)."""
    return TokenProfile(rows, rows * length, rows * length, (), length, 1, source)


def attach(schedule, profile: TokenProfile, lang: str = "en") -> None:
    """Write tokens per step / epoch / run into `schedule.run` and its derivation."""
    run, d = schedule.run, schedule.derivation
    inputs = schedule.inputs or {}
    batch = int(inputs.get("per_device_train_batch_size") or 1)
    ga = int(inputs.get("gradient_accumulation_steps") or 1)
    world = int(inputs.get("world_size") or 1)
    dp = max(world // max(int(inputs.get("tensor_parallel_size") or 1) * max(int(inputs.get("context_parallel_size") or 1), 1), 1), 1)
    if profile.rows <= 0:
        return
    mean, n = profile.mean, profile.rows
    sup_mean = profile.supervised / n
    seen = run.samples_seen if run.samples_seen is not None else 0
    whole = seen % n == 0
    packed_rows = profile.fixed_length is not None and not profile.histogram
    why = "tokens.why.exact" if whole and profile.exact else "tokens.why.expected"
    if whole:
        tokens_seen = d.add("tokens_seen", profile.tokens * (seen // n), "T_epoch x rows seen / N",
                            f"{profile.tokens:,} x {seen:,} / {n:,}", why)
        sup_seen = d.add("supervised_tokens_seen", profile.supervised * (seen // n), "S_epoch x rows seen / N",
                         f"{profile.supervised:,} x {seen:,} / {n:,}", why)
    else:
        tokens_seen = d.add("tokens_seen", round(seen * mean), "rows seen x T_epoch / N", f"{seen:,} x {profile.tokens:,} / {n:,}", why)
        sup_seen = d.add("supervised_tokens_seen", round(seen * sup_mean), "rows seen x S_epoch / N",
                         f"{seen:,} x {profile.supervised:,} / {n:,}", why)
    row_padded = profile.padded_row(batch)
    padded = d.add("padded_tokens_seen", max(round(seen * row_padded), tokens_seen), "rows seen x E[padded row]",
                   f"{seen:,} x {row_padded:,.2f}",
                   "tokens.why.padded_fixed" if packed_rows else ("tokens.why.padded" if profile.histogram else "tokens.why.no_padding"),
                   batch=batch, multiple=profile.pad_to_multiple_of)
    share = 0.0 if padded <= 0 else round(1 - tokens_seen / padded, 4)
    d.add("padding_share", share, "1 - tokens / padded tokens", f"1 - {tokens_seen:,} / {padded:,}", "tokens.why.share")
    global_rows = batch * ga * dp
    step_mean = global_rows * mean
    sd = math.sqrt(global_rows) * profile.spread()
    low = max(global_rows * profile.shortest(), math.floor(step_mean - Z95 * sd))
    high = min(global_rows * profile.longest(), math.ceil(step_mean + Z95 * sd))
    if not profile.histogram:  # packed rows: only their total is known, not how it spreads over the rows
        exact_rows = profile.fixed_length is not None and profile.tokens == profile.rows * profile.fixed_length
        low = high = round(step_mean) if exact_rows else None
    d.add("tokens_per_step", round(step_mean, 1), "bs x GA x dp x T_epoch / N", f"{batch} x {ga} x {dp} x {mean:,.2f}",
          "tokens.why.per_step" if low is not None else "tokens.why.per_step_packed", low=f"{low or 0:,}", high=f"{high or 0:,}")
    run.tokens_seen = tokens_seen
    run.supervised_tokens_seen = sup_seen
    run.padded_tokens_seen = padded
    run.padding_share = share
    run.tokens_per_step = {"mean": round(step_mean, 1), "low": low, "high": high,
                           "supervised_mean": round(global_rows * sup_mean, 1)}
    run.tokens_per_epoch = {"tokens": profile.tokens, "supervised": profile.supervised,
                            "padded": round(n * row_padded), "rows": n,
                            "padded_exact": not profile.histogram}  # fixed-length or padding-free rows: no expectation
    run.tokens_exact = bool(whole and profile.exact)


def human_tokens(value: float) -> str:
    """46.1 M, 1.2 B, 980 K, 512."""
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value:,.0f}"
