"""TRL: SFT packing (how many packed rows the Trainer sees) and GRPO's repeated prompts (how many steps).

SFT: with `packing`, `Num examples` is the number of packed rows of `max_length` tokens, packed per
`datasets.map` batch of 1000 rows in each `dataset_num_proc` shard. GRPO: every prompt is sampled
`num_generations` times and each generation batch is reused `num_iterations x steps_per_generation` times,
so one epoch over N prompts is about N x num_generations / (global batch) optimizer steps.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from trainsteps.frameworks.llamafactory import map_batches
from trainsteps.versions import Timeline

NEWEST = "1.16.0"

PACKING = Timeline("trl.packing", [
    ("0.7.5", "constant_length"),   # ConstantLengthDataset precomputed (PR #979)
    ("0.15.0", "wrapped"),          # pack_examples / pack_dataset: concatenate and cut per map batch
    ("0.19.0", "bfd"),              # best-fit decreasing per map batch, long rows truncated (0.19-0.21 segment-tree bug)
    ("0.27.0", "bfd_split"),        # "bfd" splits long rows into max_length pieces (PR #4632)
    ("0.29.0", "bfd"),              # "bfd" truncates again; splitting is "bfd-requeue", later "bfd_split" (PR #5076)
])
"""What `packing: true` does by default in each release."""

MAX_LENGTH_KEY = Timeline("trl.max_length_key", [("0.7.5", "max_seq_length"), ("0.16.0", "max_length")])
"""Name of the sequence-length option (`max_seq_length` stays a deprecated alias for a while)."""

MAX_LENGTH_DEFAULT = 1024
"""Default `max_length` of SFTConfig."""

NUM_GENERATIONS_DEFAULT = 8
"""GRPOConfig default `num_generations`."""
NUM_GENERATIONS_DEFAULTS = {"grpo": 8, "rloo": 2}
"""`num_generations` default of each trainer's config (RLOOConfig's own is 2, not GRPOConfig's 8)."""

# GRPOConfig / RLOOConfig generation defaults, read from each release's config class (tools/record_trl_generation_defaults.py,
# tests/fixtures/rl/generation-defaults-trl.json: 0.14.0 to 1.16.0)
MAX_COMPLETION_DEFAULT = Timeline("trl.max_completion_length", [("0.14.0", 256), ("1.10.0", 512)])
"""`max_completion_length` when a GRPO/RLOO config leaves it out: the longest response generated."""
MAX_PROMPT_DEFAULT = Timeline("trl.max_prompt_length", [("0.14.0", 512), ("0.27.0", None)])
"""`max_prompt_length` (None from 0.27.0: prompts are no longer cut, and 0.29.0 drops the option)."""
BETA_DEFAULTS = {"grpo": Timeline("trl.grpo.beta", [("0.14.0", 0.04), ("0.19.0", 0.0)]),
                 "rloo": Timeline("trl.rloo.beta", [("0.14.0", 0.05)])}
"""`beta`: a reference model is loaded and run each generation when it is not 0."""
VLLM_MODE_DEFAULT = Timeline("trl.vllm_mode", [("0.14.0", "server"), ("1.0.0", "colocate")])
"""`vllm_mode` with `use_vllm: true` (use_vllm is False by default in every release: generation with the training model)."""

PROMPT_FILLS_DROP = Timeline("trl.prompt_fills_drop", [("0.7.5", False), ("1.9.0", True)])
"""DPOTrainer and KTOTrainer drop rows whose tokenized prompt alone has max_length tokens or more (DPO only with
truncation_mode keep_start, KTO always): from 1.9.0 (tools/record_trl_prompt_drop.py ran both trainers on 1.8.0,
1.9.0 and 1.16.0: tests/fixtures/rl/prompt-drop-trl-*.json)."""
PREFERENCE_MAX_LENGTH_DEFAULT = 1024
"""DPOConfig / KTOConfig `max_length` from 1.9.0 (read from their config classes)."""


def preference_rows_kept(prompt_tokens: list[tuple[int, int]], trainer: str, max_length: int | None, keep_end: bool,
                         version: str) -> int:
    """Rows DPOTrainer (one per pair) or KTOTrainer (two per pair: it unpairs them first) trains on, from each pair's
    prompt tokens as the trainer measures them against the chosen and the rejected completion (the common prefix of
    the prompt's ids and the prompt + completion's ids)."""
    drops = PROMPT_FILLS_DROP.at(version) and max_length is not None and not (trainer == "dpo" and keep_end)
    if trainer == "kto":
        return sum(1 for pair in prompt_tokens for side in pair if not drops or side < max_length)
    return sum(1 for pair in prompt_tokens if not drops or min(pair) < max_length)


class RefusedConfig(ValueError):
    """A setting TRL's config refuses in `__post_init__`; the message is TRL's own."""


def generation_layout(trainer: str, per_device_batch: int, world: int, ga: int, steps_per_generation: int | None,
                      generation_batch_size: int | None, num_generations: int) -> tuple[int, int]:
    """(steps_per_generation, generation_batch_size) as `GRPOConfig.__post_init__` / `RLOOConfig.__post_init__` set them
    (TRL 1.0.0, tests/fixtures/rl/trl-config-1.0.0.json), raising `RefusedConfig` with TRL's reason where it refuses."""
    global_batch = per_device_batch * world
    if generation_batch_size is None and steps_per_generation is None:
        steps_per_generation = ga
        generation_batch_size = global_batch * steps_per_generation
    elif steps_per_generation is None:
        if generation_batch_size % global_batch:
            raise RefusedConfig(f"generation_batch_size ({generation_batch_size}) must be divisible by the global batch size "
                                f"({global_batch}).")
        steps_per_generation = generation_batch_size // global_batch
    elif generation_batch_size is None:
        generation_batch_size = global_batch * steps_per_generation
    else:
        raise RefusedConfig("'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time")
    if generation_batch_size % num_generations:
        raise RefusedConfig(f"generation_batch_size ({generation_batch_size}) must be divisible by num_generations ({num_generations}).")
    if num_generations < 2:
        raise RefusedConfig(f"{trainer.upper()} requires at least 2 generations per prompt to calculate the advantages. You provided "
                            f"{num_generations}, which is less than the minimum required.")
    return steps_per_generation, generation_batch_size


def best_fit_decreasing(lengths: Sequence[int], capacity: int) -> int:
    """TRL `_pack_bfd`'s placement: longest first, each into the open bin with the least room that still fits; bins made.

    Open bins are kept as a sorted list of their free room, so the best fit is one bisection (O(n log n))."""
    bins = 0
    rooms: list[int] = []
    for length in sorted(lengths, reverse=True):
        index = bisect.bisect_left(rooms, length)
        if index < len(rooms):
            room = rooms.pop(index) - length
        else:
            bins += 1
            room = capacity - length
        if room > 0:
            bisect.insort(rooms, room)
    return bins


def bfd_bins(lengths: Sequence[int], capacity: int, split: bool = False) -> int:
    """Rows out of TRL's best-fit-decreasing packing of one map batch (`_pack_bfd`): empty rows skipped, long rows
    truncated (or split into `capacity` pieces), each row into the bin with the least room that still fits."""
    items = [x for x in lengths if x > 0]
    if split:
        items = [capacity] * sum(x // capacity for x in items) + [x % capacity for x in items if x % capacity]
    else:
        items = [min(x, capacity) for x in items]
    return best_fit_decreasing(items, capacity)


def wrapped_rows(lengths: Sequence[int], capacity: int) -> int:
    """Rows out of "wrapped" packing of one map batch: all tokens concatenated and cut, the last piece kept."""
    return math.ceil(sum(lengths) / capacity)


def packed_rows(lengths: Sequence[int], capacity: int, strategy: str = "bfd", num_proc: int | None = None) -> int:
    total = 0
    for start, end in map_batches(len(lengths), 1000, num_proc):
        chunk = lengths[start:end]
        if strategy == "wrapped":
            total += wrapped_rows(chunk, capacity)
        else:
            total += bfd_bins(chunk, capacity, split=strategy in ("bfd_split", "bfd-requeue"))
    return total


def grpo_steps_per_epoch(prompts: int, num_generations: int, per_device_batch: int, world: int, steps_per_generation: int,
                         num_iterations: int = 1) -> tuple[int, int]:
    """(generation batch in completions, micro-batches per epoch on each rank) for GRPO's RepeatSampler.

    The sampler takes whole chunks of generation_batch_size / num_generations prompts (an incomplete chunk is
    dropped), repeats each prompt num_generations times and each chunk num_iterations x steps_per_generation times."""
    generation_batch = per_device_batch * world * steps_per_generation
    chunks = (prompts * num_generations) // generation_batch
    return generation_batch, chunks * num_iterations * steps_per_generation


# ---- SFT rows with exact token lengths (plan CONFIG --tokenizer) ---------------------------------------------------

TOKENS_RECORDED = "1.16.0"
"""The SFTTrainer release whose dataset preparation `sft_rows` replays (tools/record_trl_tokens.py runs it)."""


def supervised_kept(length: int, masked: int, max_length: int | None, keep_end: bool = False) -> tuple[int, int]:
    """(tokens, supervised tokens) of one row after `max_length` truncation; `masked` leading tokens have label -100
    (the prompt under completion-only loss)."""
    if max_length is None or length <= max_length:
        return length, max(0, length - masked)
    if keep_end:  # slice(-max_length, None): the masked prefix loses its first length - max_length tokens first
        return max_length, max(0, min(max_length, length - masked))
    return max_length, max(0, max_length - masked)


def _first_trained(start: int, masked: int, cut_front: bool, length: int, kept: int) -> bool:
    """Is the first token of a kept row supervised (keep_end cuts length - kept tokens off the front)?"""
    first = length - kept if cut_front else start
    return first >= masked


def _map_batches(n: int, num_proc: int | None) -> list[tuple[int, int]]:
    return list(map_batches(n, 1000, num_proc))


def sft_rows(rows: Sequence[tuple[int, int]], max_length: int | None, packing: bool, strategy: str = "bfd",
             num_proc: int | None = None, keep_end: bool = False, flat: bool = False) -> dict:
    """What SFTTrainer._prepare_dataset (TRL 1.16) makes of rows of (tokens, masked leading tokens):

    - unpacked: each row truncated to `max_length` (keep_start, or keep_end), rows left with no supervised token dropped
      (the "Dropping fully masked examples" filter);
    - packed: no truncation first; per `datasets.map` batch of 1000 rows (in each `dataset_num_proc` shard): `bfd`
      drops empty rows, truncates each to max_length and best-fit-decreasing packs them; `bfd_split` cuts long rows
      into max_length pieces first; `wrapped` concatenates the batch and cuts it every max_length tokens.

    `flat` (padding-free batches: bfd packing, or padding_free): the collator sets the label of each sequence's first
    token (position id 0) to -100, so a sequence whose first token was supervised loses one supervised token.

    Returns rows (the Trainer's Num examples), tokens, supervised, lengths (each training row's tokens) and dropped."""
    if not packing:
        lengths, supervised, dropped = [], 0, 0
        for length, masked in rows:
            kept, sup = supervised_kept(length, masked, max_length, keep_end)
            if sup == 0:
                dropped += 1
                continue
            lengths.append(kept)
            supervised += sup - (1 if flat and _first_trained(0, masked, keep_end and length > kept, length, kept) else 0)
        return {"rows": len(lengths), "tokens": sum(lengths), "supervised": supervised, "lengths": lengths, "dropped": dropped}
    cap = int(max_length)
    total_rows, tokens, supervised, lengths = 0, 0, 0, []
    for start, end in _map_batches(len(rows), num_proc):
        chunk = rows[start:end]
        if strategy == "wrapped":
            batch_tokens = sum(n for n, _ in chunk)
            full, rest = divmod(batch_tokens, cap)
            lengths += [cap] * full + ([rest] if rest else [])
            total_rows += full + (1 if rest else 0)
            tokens += batch_tokens
            supervised += sum(max(0, n - m) for n, m in chunk)
            continue
        split = strategy in ("bfd_split", "bfd-requeue")
        sizes = [n if split else min(n, cap) for n, _ in chunk if n > 0]
        total_rows += bfd_bins(sizes, cap, split=split)
        tokens += sum(sizes)
        for n, m in chunk:
            if n <= 0:
                continue
            if split:  # pieces [0, cap), [cap, 2 cap), ..., each its own sequence
                supervised += max(0, n - m) - (sum(1 for start in range(0, n, cap) if start >= m) if flat else 0)
            else:
                supervised += supervised_kept(n, m, cap)[1] - (1 if flat and m == 0 else 0)
    return {"rows": total_rows, "tokens": tokens, "supervised": supervised, "lengths": lengths, "dropped": 0}


def padding_free(packing: bool, strategy: str, padding_free_flag: bool) -> bool:
    """SFTTrainer flattens each batch without padding with padding_free, and always for bfd / bfd_split packing."""
    return bool(padding_free_flag) or (bool(packing) and strategy in ("bfd", "bfd_split"))
