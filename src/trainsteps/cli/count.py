"""`trainsteps count`: examples, tokens and packed sequences of a dataset, before training."""

from __future__ import annotations

import click

from trainsteps.cli.data_options import data_options
from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, user_errors


@click.command("count")
@click.argument("paths", nargs=-1, required=True)
@data_options
@click.option("--sample", type=int, help="Estimate from N random rows (read by seeking) with a 95% interval, for huge files.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True, help="Count here or on Ray Data.")
@click.option("--ray-address", help="Ray cluster address (default: start a local Ray).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
@click.option("--explain", is_flag=True, help="Show where every number comes from.")
@FORMAT_OPTION
@LANG_OPTION
def count_command(paths, fmt, lang, explain, sample, seed, engine, ray_address, progress, **opts) -> None:
    """Count examples, tokens (total and supervised) and packed sequences of a dataset.

    \b
    PATHS: JSONL / JSON / CSV / Parquet / Arrow files (also .gz, .zst), globs, folders,
    save_to_disk folders, or a LLaMA-Factory dataset_info.json with --dataset NAME.
    \b
    Example:
      trainsteps count data/train.jsonl --tokenizer ./Qwen2.5-7B --cutoff-len 2048 \\
        --packing llamafactory --packing trl-bfd
    """
    from trainsteps.data.counting import run_count

    with user_errors(lang):
        data = run_count(list(paths), opts, sample=sample, seed=seed, engine=engine, ray_address=ray_address, progress=progress,
                         rows_only=not opts.get("tokenizer_path"))  # no tokenizer: rows are counted, tokens are unknown
        from trainsteps.data import report

        emit(fmt, report.to_json(data, lang), report.render(data, lang, explain))
