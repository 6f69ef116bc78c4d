"""Token-window arithmetic shared by GPT-NeoX and Megatron (legacy and megatron-core).

A "sample" in these frameworks is a window of `seq_length` tokens cut from the
concatenated, shuffled documents of a split. Each window reads `seq_length + 1`
tokens (inputs plus the shifted labels) and consecutive windows share one token,
so only the very last window needs the extra token: `N * S + extra <= E * T`.

Everything here is pure integer arithmetic; no numpy, no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from trainsteps.errors import InputError


class SequenceTokens(Protocol):
    """What the planners need to know about a tokenized dataset (a `.bin/.idx` pair or a list of lengths)."""

    num_sequences: int

    def tokens(self, begin: int, end: int) -> int:
        """Tokens in sequences [begin, end)."""


@dataclass(frozen=True, slots=True)
class SequenceLengths:
    """Token counts of every sequence, held in memory (small datasets, tests, the Python API)."""

    lengths: tuple[int, ...]
    """Tokens in each sequence, in file order."""

    @property
    def num_sequences(self) -> int:
        return len(self.lengths)

    def tokens(self, begin: int, end: int) -> int:
        return sum(self.lengths[begin:end])


def epochs_needed(tokens_per_epoch: int, seq_length: int, num_samples: int | None, extra: int = 1) -> int:
    """Smallest E >= 1 with (E*T - extra) // S >= num_samples (NeoX `_num_epochs`, mcore `_get_num_epochs`)."""
    if num_samples is None:
        return 1
    if tokens_per_epoch <= 0:
        raise InputError("gpt.error.empty_split", "gpt.hint.empty_split")
    need = num_samples * seq_length + extra
    return max(1, -(-need // tokens_per_epoch))


def samples_built(epochs: int, tokens_per_epoch: int, seq_length: int, extra: int = 1) -> int:
    """Windows cut from E epochs: (E*T - extra) // S (`sample_idx.shape[0] - 1`)."""
    return max(0, (epochs * tokens_per_epoch - extra) // seq_length)


def samples_per_epoch(tokens_per_epoch: int, seq_length: int, extra: int = 1) -> int:
    """Windows in one epoch alone: (T - extra) // S."""
    return samples_built(1, tokens_per_epoch, seq_length, extra)


def tokens_range_from_samples(samples: int, epochs: int, seq_length: int, extra: int = 1) -> tuple[int, int]:
    """Tokens per epoch T compatible with `samples` windows over `epochs` epochs.

    N = (E*T - extra) // S  <=>  N*S + extra <= E*T <= (N+1)*S + extra - 1.
    """
    low = -(-(samples * seq_length + extra) // epochs)
    high = ((samples + 1) * seq_length + extra - 1) // epochs
    return low, high


def parse_split(split: str) -> list[float]:
    """'969, 30, 1' or '98/2/0' -> three normalized weights (NeoX and legacy Megatron)."""
    text = split.strip()
    if "," in text:
        parts = text.split(",")
    elif "/" in text:
        parts = text.split("/")
    else:
        parts = [text]
    try:
        weights = [float(p) for p in parts]
    except ValueError:
        raise InputError("gpt.error.split_words", "gpt.hint.split", split=split) from None
    weights = (weights + [0.0, 0.0, 0.0])[:3]
    total = sum(weights)
    if total <= 0 or any(w < 0 for w in weights):
        raise InputError("gpt.error.split_sum", "gpt.hint.split", split=split)
    return [w / total for w in weights]


def split_neox(split: str, size: int) -> list[int]:
    """NeoX / legacy Megatron `get_train_valid_test_split_`: four boundaries, rounding error pushed onto all of them."""
    weights = parse_split(split)
    index = [0]
    for w in weights:
        index.append(index[-1] + int(round(w * float(size))))
    diff = index[-1] - size
    return [0] + [i - diff for i in index[1:]]


def split_mcore(split: str, size: int) -> list[tuple[int, int] | None]:
    """megatron-core split matrix: each split rounds its own bookends; a zero-width split is not built (None)."""
    weights = _mcore_weights(split)
    out: list[tuple[int, int] | None] = []
    start = 0.0
    for w in weights:
        end = start + w
        if w == 0:
            out.append(None)
        else:
            out.append((int(round(start * float(size))), int(round(end * float(size)))))
        start = end
    return out


def _mcore_weights(split: str) -> list[float]:
    """megatron-core's reading of a split string: the numbers in it, normalized (at least one must be positive)."""
    try:
        numbers = [float(x) for x in re.findall(r"[.0-9]+", split)]
    except ValueError:
        raise InputError("gpt.error.split_words", "gpt.hint.split", split=split) from None
    numbers = (numbers + [0.0, 0.0, 0.0])[:3]
    total = sum(numbers)
    if total <= 0:
        raise InputError("gpt.error.split_sum", "gpt.hint.split", split=split)
    return [n / total for n in numbers]


def split_matrix(split: str) -> list[tuple[float, float] | None]:
    """The `Let split_matrix = [...]` bookends megatron-core logs."""
    weights = _mcore_weights(split)
    out: list[tuple[float, float] | None] = []
    start = 0.0
    for w in weights:
        out.append(None if w == 0 else (start, start + w))
        start += w
    return out


def normalize_weights(weights: Sequence[float]) -> list[float]:
    total = sum(weights)
    if total <= 0 or any(w < 0 for w in weights):
        raise InputError("gpt.error.weights", "gpt.hint.weights")
    return [w / total for w in weights]


def neox_weighted_num_samples(weights: Sequence[float], num_samples: int | None) -> list[int | None]:
    """NeoX `get_normalized_weights_and_num_samples`: ceil(n * w * 1.005) per dataset (the 0.5% surplus)."""
    norm = normalize_weights(weights)
    if num_samples is None:
        return [None for _ in norm]
    return [int(math.ceil(num_samples * w * 1.005)) for w in norm]


def mcore_blend_num_samples(weights: Sequence[float], size: int, surplus: float = 0.005) -> tuple[list[int], list[int]]:
    """megatron-core blend: per-dataset target ceil(size*w) and the size built, ceil(target*(1+surplus))."""
    norm = normalize_weights(weights)
    targets = [int(math.ceil(size * w)) for w in norm]
    built = [int(math.ceil(t * (1 + surplus))) for t in targets]
    return targets, built
