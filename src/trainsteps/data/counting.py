"""Count (or estimate) a dataset from the count options: what `trainsteps count`, `plan --data` and the Python API
share. `opts` holds the `data_options` values by parameter name (`tokenizer_path`, `cutoff_len`, `packing_names`, ...).
"""

from __future__ import annotations


def run_count(paths: list[str], opts: dict, sample: int | None = None, seed: int = 0, engine: str = "local",
              ray_address: str | None = None, progress: bool | None = None, rows_only: bool = False) -> dict:
    """Count (or estimate) and build the report data; `opts` are the `data_options` values. With `rows_only` and no
    tokenizer, rows are counted and the token fields say they are unknown (pre-tokenized .idx files keep their tokens)."""
    from trainsteps.data import report

    texts = not opts.get("tokenizer_path") and not all(path.endswith((".idx", ".bin")) for path in paths)
    if rows_only and texts and (opts.get("cutoff_len") or sample is not None):  # a cutoff and an estimate are in tokens
        from trainsteps.errors import InputError

        raise InputError("count.error.tokenizer_needed", "count.hint.tokenizer_needed")
    data = count_and_report(paths, opts, sample, seed, engine, ray_address, progress, rows_only)[0]
    return report.without_tokens(data) if rows_only and texts else data


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
