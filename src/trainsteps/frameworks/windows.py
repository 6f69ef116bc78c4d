"""Per-split facts of a window dataset (NeoX GPT2Dataset, megatron-core GPTDataset) with their derivation."""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks import gptdata


@dataclass(slots=True)
class SplitFacts:
    """One split (train / valid / test) or one blended component, as the framework builds it."""

    name: str
    """`train`, `valid`, `test`, or `train_0`... for a blend component."""
    begin: int | None
    """First sequence of the split (None when only a token count was given)."""
    end: int | None
    """One past the last sequence."""
    tokens_per_epoch: int
    """Tokens in the split: one epoch."""
    num_samples_requested: int | None
    """Samples asked for (None: build exactly one epoch)."""
    epochs_built: int
    """Epochs the index maps span ("total number of epochs")."""
    samples_built: int
    """Windows over all epochs built (N = sample_idx rows - 1)."""
    samples_per_epoch: int
    """Windows one epoch alone holds ((T - extra) // S)."""
    length: int
    """len(dataset) as the framework reports it."""
    printed_samples: int
    """What the "total number of samples" line prints."""

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in SplitFacts.__slots__}


def build_split(
    d: Derivation,
    name: str,
    tokens: int,
    seq_length: int,
    num_samples: int | None,
    extra: int,
    length_offset: int,
    printed_offset: int,
    begin: int | None = None,
    end: int | None = None,
    round_up: bool = False,
) -> SplitFacts:
    """Epochs, samples and length of one split; every number recorded in `d` under `<name>.<quantity>`."""
    S = seq_length
    d.add(f"{name}.tokens_per_epoch", tokens, "sum(sequence_lengths[begin:end])",
          f"sum(lengths[{begin}:{end}])" if begin is not None else "", "win.why.tokens")
    if num_samples is None:
        epochs = d.add(f"{name}.epochs_built", 1, why="win.why.one_epoch")
    else:
        epochs = d.add(f"{name}.epochs_built", gptdata.epochs_needed(tokens, S, num_samples, extra),
                       "smallest E with (E*T - extra) // S >= n", f"(E*{tokens:,} - {extra}) // {S} >= {num_samples:,}",
                       "win.why.epochs", extra=extra)
    if round_up:
        built = -(-(epochs * tokens - extra) // S)
        d.add(f"{name}.samples_built", built, "ceil((E*T - extra) / S)", f"ceil(({epochs}*{tokens:,} - {extra}) / {S})",
              "win.why.samples_ceil")
    else:
        built = d.add(f"{name}.samples_built", gptdata.samples_built(epochs, tokens, S, extra), "(E*T - extra) // S",
                      f"({epochs}*{tokens:,} - {extra}) // {S}", "win.why.samples", extra=extra)
    per_epoch = d.add(f"{name}.samples_per_epoch", gptdata.samples_per_epoch(tokens, S, extra), "(T - extra) // S",
                      f"({tokens:,} - {extra}) // {S}", "win.why.per_epoch")
    length = d.add(f"{name}.length", built + length_offset, "N" + (f" {length_offset:+d}" if length_offset else ""),
                   f"{built:,}" + (f" {length_offset:+d}" if length_offset else ""),
                   "win.why.len_minus_one" if length_offset else "win.why.len")
    printed = built + printed_offset
    return SplitFacts(name, begin, end, tokens, num_samples, epochs, built, per_epoch, length, printed)
