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
    with user_errors(lang):
        data = run_count(list(paths), opts, sample=sample, seed=seed, engine=engine, ray_address=ray_address, progress=progress)
        from trainsteps.data import report

        emit(fmt, report.to_json(data, lang), report.render(data, lang, explain))


def run_count(paths: list[str], opts: dict, sample: int | None = None, seed: int = 0, engine: str = "local",
              ray_address: str | None = None, progress: bool | None = None, rows_only: bool = False) -> dict:
    """Count (or estimate) and build the report data; `opts` are the `data_options` values."""
    return count_and_report(paths, opts, sample, seed, engine, ray_address, progress, rows_only)[0]


def count_and_report(paths: list[str], opts: dict, sample: int | None = None, seed: int = 0, engine: str = "local",
                     ray_address: str | None = None, progress: bool | None = None, rows_only: bool = False):
    """(report data, the `Counted` behind it)."""
    from trainsteps.data import report
    from trainsteps.data.count import CountOptions
    from trainsteps.errors import InputError

    requests = [report.PackingRequest.parse(name) for name in opts.get("packing_names") or ()]
    if not opts.get("tokenizer_path") and not all(path.endswith((".idx", ".bin")) for path in paths) and (requests or not rows_only):
        raise InputError("count.error.tokenizer_needed", "count.hint.tokenizer_needed")
    cutoff = opts.get("cutoff_len")
    if requests and not cutoff:
        raise InputError("count.error.cutoff_needed", "count.hint.cutoff_needed")
    options = CountOptions(paths, opts["tokenizer_path"], opts.get("data_format", "auto"), opts.get("text_field"),
                           opts.get("template", "chatml"), opts.get("dataset_name"), opts.get("split", "train"),
                           not opts.get("no_special_tokens"), bool(opts.get("add_eos")), opts.get("threads"), progress,
                           rows_only=rows_only and not opts.get("tokenizer_path"),
                           keep_order=bool(requests) or bool(opts.get("keep_order")),  # packing needs each example in order
                           engine_tokenizer=opts.get("engine_tokenizer") or "auto", max_line_bytes=opts.get("max_line_bytes"))
    settings = report.PackingSettings(cutoff, opts.get("num_proc"), opts.get("micro_batch_size") or 1,
                                      opts.get("sample_packing_bin_size") or 200, opts.get("sample_packing_group_size") or 100_000,
                                      bool(opts.get("sample_packing_sequentially")), opts.get("axolotl_world_size")) if cutoff else None
    if sample is not None:
        from trainsteps.data.sample import estimate

        counted, summary = estimate(options, sample, seed)
        return report.build(counted, cutoff, requests, settings, summary)[0], counted
    if engine == "ray":
        from trainsteps.data.ray_engine import count_on_ray

        counted = count_on_ray(options, ray_address)
    else:
        from trainsteps.data.count import count_cached

        counted = count_cached(options, no_cache=bool(opts.get("no_cache")))
    return report.build(counted, cutoff, requests, settings)[0], counted


# ---------------------------------------------------------------- `trainsteps plan --data`

def num_examples_from_data(data: dict, given: int | None, fmt: str, lang: str) -> int:
    from trainsteps.data import profile
    from trainsteps.errors import InputError
    from trainsteps.i18n import message

    if given is not None:
        raise InputError("count.error.plan_data_twice", "count.hint.plan_data_twice")
    if len(data["packing_names"] or ()) > 1:
        raise InputError("count.error.plan_one_packing", "count.hint.plan_one_packing")
    if any(name.split("@")[0] == "axolotl" for name in data["packing_names"] or ()):
        # Axolotl's steps come from its multipack sampler, which the Trainer plan behind --data does not model
        raise InputError("count.error.plan_axolotl_packing", "count.hint.plan_axolotl_packing")
    # the cutoff's effect on each row's supervised tokens needs both lengths of each row, in order
    report, counted = count_and_report(list(data["data_paths"]), {**data, "keep_order": bool(data.get("cutoff_len"))},
                                       rows_only=True)
    context = click.get_current_context()
    tokenizer = data.get("tokenizer_path")
    source = message("tokens.source.counted", lang, tokenizer=tokenizer or "-", cached=message(
        "tokens.source.cached" if counted.from_cache else "tokens.source.fresh", lang, seconds=f"{counted.seconds:.2f}"))
    context.meta["trainsteps.counted"] = {**report, "cutoff_len": data.get("cutoff_len")}  # for the time model
    if report.get("packing"):
        packed = report["packing"][0]
        value, what, name = packed["sequences"], "count.plan.packed", packed["framework"]
        token_profile = profile.packed(counted, packed, data["cutoff_len"], source)
    else:
        value, what, name = report["examples"], "count.plan.examples", ""
        token_profile = profile.unpacked(counted, data.get("cutoff_len"), source=source) if tokenizer or counted.lengths.tokens.sum() else None
    context.meta["trainsteps.token_profile"] = token_profile
    context.meta["trainsteps.packed"] = bool(name)
    if token_profile is None:
        context.meta["trainsteps.tokens_unknown"] = message("tokens.need_tokenizer", lang)
    if fmt == "human":
        click.echo(message(what, lang, value=f"{value:,}", framework=name), err=True)
    else:  # the JSON says where num_examples came from (see output.emit)
        context.meta["trainsteps.num_examples_from"] = {
            "data": list(data["data_paths"]), "num_examples": value, "counted": "packed_sequences" if name else "examples",
            "packing": name or None, "explanation": message(what, lang, value=f"{value:,}", framework=name),
            "tokens": report["tokens"] if token_profile is not None else None,
            "supervised_tokens": report["supervised_tokens"] if token_profile is not None else None,
            "from_cache": counted.from_cache}
    return value
