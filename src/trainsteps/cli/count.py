"""`trainsteps count`: examples, tokens and packed sequences of a dataset, before training."""

from __future__ import annotations

import click

from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, user_errors

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
        click.option("--cutoff-len", type=click.IntRange(min=1), help="cutoff_len / max_length / sequence_len: counts examples over it; needed to pack."),
        click.option("--packing", "packing_names", multiple=True, metavar="NAME[@VERSION]",
                     help="Packed count under: llamafactory, llamafactory-pt, trl-bfd, trl-bfd_split, trl-wrapped, "
                     "ms-swift (@1 or @2: binpacking major), axolotl. Repeatable in `count`; `plan` takes one."),
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
        click.option("--max-line-bytes", type=click.IntRange(min=1), default=64 * 1024 * 1024, show_default=True,
                     help="Longest line read; a longer one is reported as malformed, with its position, and skipped."),
        click.option("--no-cache", is_flag=True, help="Count the files again instead of reusing a cached count of the same "
                     "files, tokenizer and settings ($XDG_CACHE_HOME/trainsteps)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


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

PLAN_DATA_KEYS = ("data_paths", "tokenizer_path", "data_format", "text_field", "template", "dataset_name", "split",
                  "no_special_tokens", "add_eos", "cutoff_len", "packing_names", "num_proc", "micro_batch_size", "threads", "no_cache",
                  "sample_packing_bin_size", "sample_packing_group_size", "sample_packing_sequentially", "axolotl_world_size",
                  "engine_tokenizer", "max_line_bytes")


def plan_data_options(command: click.Command) -> click.Command:
    """Give `plan` the count options: `--data PATH` (repeatable) plus the tokenizer/packing options of `count`.

    The counted examples, or with `--packing NAME` that framework's packed sequences, become --num-examples.
    Three count options mean something else in `plan`: the DatasetDict split is `--data-split` there (plan's
    `--split` is Megatron's train/valid/test split), Axolotl's micro batch is plan's per-device batch, and its ranks
    are plan's processes.
    """
    def holder(**kwargs):
        return None

    holder = click.command("holder")(
        click.option("--data", "data_paths", multiple=True, help="Count this dataset to get --num-examples (see `trainsteps count`).")(
            click.option("--data-split", "dataset_split", default="train", show_default=True,
                         help="With --data: split of a DatasetDict saved with save_to_disk.")(
                data_options(holder))))
    taken = {q.name for q in command.params}
    added = [p for p in holder.params if p.name not in taken and p.name not in ("split", "micro_batch_size", "axolotl_world_size")]
    command.params += added
    added_names = {p.name for p in added}
    callback = command.callback

    def with_counted_data(**kwargs):
        data = {key: kwargs.pop(key, None) for key in PLAN_DATA_KEYS if key in added_names}
        data["split"] = kwargs.pop("dataset_split", "train")  # not `data_split`: that is Megatron's --split
        data["micro_batch_size"] = kwargs.get("per_device_train_batch_size") or 1
        data["axolotl_world_size"] = kwargs.get("world_size") or ((kwargs.get("gpus") or 1) * (kwargs.get("nodes") or 1))
        context = click.get_current_context()
        has_configs = bool(kwargs.get("configs") or kwargs.get("launch"))
        if has_configs and not data["data_paths"]:
            # `plan CONFIG --tokenizer T`: the config's own data is encoded with its framework's template
            context.meta["trainsteps.config_data"] = {"tokenizer": data.get("tokenizer_path"), "no_cache": bool(data.get("no_cache")),
                                                      "threads": data.get("threads")}
        if not data["data_paths"] and data.get("packing_names") or (not data["data_paths"] and not has_configs
                                                                     and data.get("tokenizer_path")):
            with user_errors(kwargs.get("lang", "en")):  # these only mean something for the data being counted
                from trainsteps.errors import InputError

                raise InputError("count.error.data_options_alone", "count.hint.data_options_alone")
        if data["data_paths"]:
            with user_errors(kwargs.get("lang", "en")):
                kwargs["num_examples"] = num_examples_from_data(data, kwargs.get("num_examples"), kwargs.get("fmt", "human"),
                                                                kwargs.get("lang", "en"))
        return callback(**kwargs)

    command.callback = with_counted_data
    return command


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
