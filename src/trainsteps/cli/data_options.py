"""The data options `count` and `plan --data` share, and the hook that gives them to `plan`.

Their own module so that `trainsteps plan` builds only its own options: importing cli/count.py would also build
the whole `count` command on every plan's start-up.
"""

from __future__ import annotations

import click

FORMAT_CHOICES = ("auto", "text", "alpaca", "sharegpt", "openai", "prompt_completion")
TEMPLATE_CHOICES = ("chatml", "llama3", "plain", "tokenizer")


def data_options(func):
    """Options shared by `count` and `plan --data`: what to read and how to tokenize it."""
    options = [
        click.option("--tokenizer", "tokenizer_path", type=str, help="tokenizer.json or a local model folder holding one."),
        click.option("--data-format", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True,
                     help="Row layout; auto detects it from the first row."),
        click.option("--text-field", help="Column with the text (plain-text rows)."),
        click.option("--template", type=click.Choice(TEMPLATE_CHOICES), default="chatml", show_default=True,
                     help="How chat rows are rendered before tokenizing; `tokenizer`: the tokenizer's own Jinja chat_template "
                     "(tokenizer_config.json), as transformers' apply_chat_template renders it for TRL and Axolotl."),
        click.option("--dataset", "dataset_name", help="Entry name when PATH is a LLaMA-Factory dataset_info.json (or its folder)."),
        click.option("--split", default="train", show_default=True, help="Split of a DatasetDict saved with save_to_disk."),
        click.option("--no-special-tokens", is_flag=True, help="Do not add the tokenizer's BOS/EOS to plain-text rows."),
        click.option("--add-eos", is_flag=True, help="Count one EOS token per example (LLaMA-Factory pt, TRL)."),
        click.option("--cutoff-len", type=click.IntRange(min=1, max=10**9), help="cutoff_len / max_length / sequence_len: counts examples over it; needed to pack."),
        click.option("--packing", "packing_names", multiple=True, metavar="NAME[@VERSION]",
                     help="Packed count under: llamafactory, llamafactory-pt, trl-bfd, trl-bfd_split, trl-wrapped, "
                     "ms-swift (@1 or @2: binpacking major), axolotl, torchtitan (@0.2.2 or @0.3.0; --cutoff-len is seq_len). Repeatable in `count`; `plan` takes one."),
        click.option("--num-proc", type=click.IntRange(min=1), help="preprocessing_num_workers / dataset_num_proc / packing_num_proc."),
        click.option("--micro-batch-size", type=click.IntRange(min=1), default=1, show_default=True, help="Axolotl micro_batch_size."),
        click.option("--sample-packing-bin-size", type=click.IntRange(min=1), default=200, show_default=True,
                     help="Axolotl sample_packing_bin_size: most rows per bin."),
        click.option("--sample-packing-group-size", type=click.IntRange(min=1), default=100_000, show_default=True,
                     help="Axolotl sample_packing_group_size: rows packed together."),
        click.option("--sample-packing-sequentially", is_flag=True,
                     help="Axolotl sample_packing_sequentially: next-fit in data order."),
        click.option("--world-size", "axolotl_world_size", type=click.IntRange(min=1),
                     help="Axolotl ranks (WORLD_SIZE): the packed range is the smallest count over the ranks."),
        click.option("--threads", type=click.IntRange(min=1), help="Tokenizer threads (default: all cores)."),
        click.option("--engine-tokenizer", type=click.Choice(["auto", "tokenizers", "fast-bpe"]), default="auto",
                     show_default=True, help="Token counter: fast-bpe (tiktoken, for byte-level BPE proven equal to "
                     "tokenizers on a check sample), tokenizers, or auto (fast-bpe where proven)."),
        # the default is data/readers.MAX_LINE_BYTES (not imported: plan's start-up); tokenizing a line costs ~40x its bytes
        click.option("--max-line-bytes", type=click.IntRange(min=1, max=1 << 30), default=16 * 1024 * 1024, show_default=True,
                     help="Longest line read; a longer one is reported as malformed, with its position, and skipped."),
        click.option("--no-cache", is_flag=True, help="Count the files again instead of reusing a cached count of the same "
                     "files, tokenizer and settings ($XDG_CACHE_HOME/trainsteps)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def plan_data_params() -> list[click.Parameter]:
    """The count options as `plan` takes them: `--data PATH` (repeatable) plus the tokenizer/packing options of `count`.

    The counted examples, or with `--packing NAME` that framework's packed sequences, become --num-examples
    (`trainsteps.planners.data`). Axolotl's multipack options stay in `count` (plan's Trainer does not model that
    sampler). Three count options mean something else in `plan`: the DatasetDict split is
    `--data-split` there (plan's `--split` is Megatron's train/valid/test split), Axolotl's micro batch is plan's
    per-device batch, and its ranks are plan's processes.
    """
    def holder(**kwargs):
        return None

    holder = click.command("holder")(
        click.option("--data", "data_paths", multiple=True, help="Count this dataset to get --num-examples (see `trainsteps count`).")(
            click.option("--data-split", "dataset_split", default="train", show_default=True,
                         help="With --data: split of a DatasetDict saved with save_to_disk.")(
                data_options(holder))))
    shared = ("split", "micro_batch_size", "axolotl_world_size")
    axolotl_packing = ("sample_packing_bin_size", "sample_packing_group_size", "sample_packing_sequentially")  # plan refuses it
    return [p for p in holder.params if p.name not in shared + axolotl_packing]
