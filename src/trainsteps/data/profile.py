"""A count -> the `tokens.TokenProfile` of the rows the Trainer will see (after the cutoff and packing of a framework).

What each framework does to a row longer than the cutoff (see `stats.CUTOFF_RULES`): LLaMA-Factory and TRL truncate,
ms-swift and Axolotl drop. Truncation keeps the first `cutoff` tokens; the supervised tokens lost are taken from the
end of the row (the response comes last), which is TRL's rule; LLaMA-Factory splits the cut between prompt and
response per turn (`infer_seqlen`), so for its rows over the cutoff the supervised total is an approximation unless
the rows were encoded with its template (`plan CONFIG --tokenizer`).

Padding per packed row (the collator then pads a batch to its longest row):
- llamafactory : every packed row is padded to cutoff_len + 1 (cutoff_len after its packing decrement), and the SFT
                 collator rounds to a multiple of 8 (`pad_to_multiple_of=8` in its sft workflow);
- llamafactory-pt: blocks of exactly cutoff_len tokens;
- trl-wrapped  : rows of exactly max_length tokens (the last of each map batch shorter);
- trl-bfd / trl-bfd_split / ms-swift: padding-free (`padding_free=True` with packing): a row is its tokens;
- torchtitan   : samples of exactly seq_len tokens cut from the concatenated stream.
"""

from __future__ import annotations

from trainsteps import tokens as token_math


def _arrays(counted):
    import numpy as np

    tokens, supervised = counted.lengths.tokens, counted.lengths.supervised
    if hasattr(tokens, "counts"):  # a Distribution: order unknown, only used without cutoff
        return None, None
    return np.asarray(tokens, dtype=np.int64), np.asarray(supervised, dtype=np.int64)


def unpacked(counted, cutoff: int | None, pad_to_multiple_of: int = 1, source: str = "") -> token_math.TokenProfile:
    """Rows as counted, truncated to the cutoff (the Trainer pads each micro-batch to its longest row)."""
    import numpy as np

    tokens, supervised = _arrays(counted)
    if tokens is None:
        return token_math.from_lengths(counted.lengths.tokens, counted.lengths.supervised, pad_to_multiple_of=pad_to_multiple_of,
                                       source=source)
    if cutoff:
        kept = np.minimum(tokens, cutoff)
        supervised = np.maximum(supervised - (tokens - kept), 0)
        tokens = kept
    return token_math.from_lengths(tokens.tolist(), supervised, pad_to_multiple_of=pad_to_multiple_of, source=source)


def packed(counted, packing: dict, cutoff: int, source: str = "") -> token_math.TokenProfile:
    """Packed rows of one `count --packing` result: the tokens they hold and the length each is padded to."""
    import numpy as np

    tokens, supervised = _arrays(counted)
    name = packing["framework"]
    rows = packing["sequences"]
    if name in ("ms-swift", "axolotl"):
        keep = tokens <= cutoff
        total, sup = int(tokens[keep].sum()), int(supervised[keep].sum())
    elif name in ("trl-wrapped", "llamafactory-pt", "torchtitan"):
        total = sup = int(rows * packing["capacity"])
    else:
        cap = packing.get("capacity", cutoff)
        kept = np.minimum(tokens, cap)
        total, sup = int(kept.sum()), int(np.maximum(supervised - (tokens - kept), 0).sum())
    if name == "llamafactory":
        return token_math.packed(rows, total, sup, fixed_length=packing["capacity"] + 1, pad_to_multiple_of=8, source=source)
    if name in ("trl-wrapped", "llamafactory-pt", "torchtitan"):
        return token_math.fixed(rows, packing["capacity"], source=source)
    return token_math.packed(rows, total, sup, fixed_length=None, source=source)
