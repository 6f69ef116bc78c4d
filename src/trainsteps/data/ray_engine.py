"""The same count on Ray Data: files read in parallel, rows rendered and tokenized in `map_batches`, then reduced.

The row format is fixed from the first row (read locally) so every worker renders rows the same way. Each worker
loads the tokenizer once (a callable class). JSONL is read as text lines and parsed in the workers, so a malformed line
is counted (with its file; Ray's blocks do not keep line numbers) instead of failing the read.

Without packing, each worker reduces its batch to how many examples have each length (plus problem counts), and the
driver adds those up as they stream in: the driver's memory and the traffic to it do not grow with the rows. Packing
needs every length in file order: then rows come back one by one with Ray's `preserve_order` on.
"""

from __future__ import annotations

import json
import time

from trainsteps.data import formats, readers, sources
from trainsteps.data.count import Counted, CountOptions, Lengths, LengthTally
from trainsteps.data.readers import SHOWN_PROBLEMS, Problems
from trainsteps.errors import InputError


class _Tokenize:
    """map_batches worker: rows (one column per field, or `text` lines of JSONL) -> token and supervised lengths."""

    def __init__(self, options: CountOptions, fmt: formats.RowFormat, jsonl: bool):
        from trainsteps.data.tokenize import load

        self.options, self.fmt, self.jsonl = options, fmt, jsonl
        self.tokenizer = load(options.tokenizer, options.threads, options.engine_tokenizer)
        self.template = formats.template_for(options.template, options.tokenizer)

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        rows, status, paths = [], [], list(batch.get("path", [])) or [""] * len(next(iter(batch.values())))
        if self.jsonl:
            for line in batch["text"]:
                if not line.strip():
                    rows.append(None)
                    status.append("blank")
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    row = None
                ok = isinstance(row, dict)
                rows.append(row if ok else None)
                status.append("ok" if ok else "malformed")
        else:
            keys = [k for k in batch if k != "path"]
            rows = [dict(zip(keys, values, strict=False)) for values in zip(*(batch[k] for k in keys), strict=False)]
            status = ["ok"] * len(rows)
        texts, owner, sup_flags, reasons = [], [], [], [""] * len(rows)
        for i, row in enumerate(rows):
            if status[i] != "ok":
                continue
            try:
                pieces = formats.segments(self.fmt, row, self.template)
            except formats.RowError as exc:
                status[i], reasons[i] = "invalid", str(exc)
                continue
            for text, sup in pieces:
                texts.append(text)
                owner.append(i)
                sup_flags.append(sup)
        lengths = np.asarray(self.tokenizer.lengths(texts), dtype=np.int64)
        owner_array = np.asarray(owner, dtype=np.int64)
        token_weight, supervised_weight = formats.piece_weights(sup_flags)
        tokens = np.bincount(owner_array, weights=lengths * token_weight, minlength=len(rows)).astype(np.int64)
        supervised = np.bincount(owner_array, weights=lengths * supervised_weight, minlength=len(rows)).astype(np.int64)
        plain = self.fmt.kind == "text"
        extra = ((self.tokenizer.special_tokens if self.options.add_special_tokens else 0) if plain else 0) + (1 if self.options.add_eos else 0)
        status = np.asarray(status)
        problems = json.dumps([[status[i], paths[i], reasons[i] or "not a JSON object"] for i in
                               np.flatnonzero((status == "malformed") | (status == "invalid"))[:SHOWN_PROBLEMS]])
        if self.options.keep_order:  # every row, in order; the first carries the batch's problems
            return {"tokens": tokens + extra, "supervised": supervised + extra, "status": status,
                    "problems": [problems] + ["[]"] * (len(rows) - 1)}
        ok = status == "ok"
        return {"tokens": [json.dumps(np.bincount(tokens[ok] + extra).tolist())],
                "supervised": [json.dumps(np.bincount(supervised[ok] + extra).tolist())],
                "blank": [int((status == "blank").sum())], "malformed": [int((status == "malformed").sum())],
                "invalid": [int((status == "invalid").sum())], "problems": [problems]}


def count_on_ray(options: CountOptions, address: str | None = None) -> Counted:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise InputError("count.error.ray_missing", "count.hint.ray_missing") from exc

    started = time.perf_counter()
    files, hint = sources.expand(options.paths, options.dataset, options.split)
    first = next(readers.read(files[0], Problems()), None)
    if first is None or not first.rows:
        raise InputError("count.error.no_files", "count.hint.no_match", path=files[0].path)
    fmt = formats.resolve(hint, options.data_format, first.rows[0], options.text_field)
    formats.check_columns(fmt, first.rows[0])
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
        except (ConnectionError, TimeoutError) as exc:  # `--ray-address auto` with no cluster running, a wrong address
            raise InputError("count.error.ray_connect", "count.hint.ray_connect", address=address or "local",
                             detail=str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__) from None
    context = ray.data.DataContext.get_current()
    preserve = context.execution_options.preserve_order
    context.execution_options.preserve_order = options.keep_order  # packing depends on the order of the rows
    gathered = _Gathered(options.keep_order)
    try:
        for kind, paths in _runs_of_one_kind(files):  # in file order, as the local engine reads them
            dataset = _read(ray.data, kind, paths)
            mapped = dataset.map_batches(_Tokenize, fn_constructor_args=(options, fmt, kind == "json"), batch_format="numpy",
                                         batch_size=2000, concurrency=1 if options.threads else None)
            for batch in mapped.iter_batches(batch_size=None, batch_format="numpy"):
                gathered.add(batch)
    finally:
        context.execution_options.preserve_order = preserve
    return Counted([s.path for s in files], fmt.describe(), options.template if fmt.kind not in ("text", "prompt_completion") else "-",
                   gathered.lengths(), gathered.rows_read, gathered.invalid, gathered.malformed, time.perf_counter() - started)


def _runs_of_one_kind(files) -> list[tuple[str, list[str]]]:
    runs: list[tuple[str, list[str]]] = []
    for source in files:
        if runs and runs[-1][0] == source.kind:
            runs[-1][1].append(source.path)
        else:
            runs.append((source.kind, [source.path]))
    return runs


class _Gathered:
    """What the workers send back, added up as it streams in."""

    def __init__(self, keep_order: bool) -> None:
        self.keep_order = keep_order
        self.token_parts, self.supervised_parts = [], []
        self.token_tally, self.supervised_tally = LengthTally(), LengthTally()
        self.malformed, self.invalid = Problems(), Problems()
        self.rows_read = 0

    def add(self, batch: dict) -> None:
        import numpy as np

        if self.keep_order:
            status = batch["status"]
            ok = status == "ok"
            self.token_parts.append(np.asarray(batch["tokens"], dtype=np.int64)[ok])
            self.supervised_parts.append(np.asarray(batch["supervised"], dtype=np.int64)[ok])
            examples = int(ok.sum())
            blank, malformed, invalid = (int((status == s).sum()) for s in ("blank", "malformed", "invalid"))
        else:
            examples = 0
            for tokens, supervised in zip(batch["tokens"], batch["supervised"], strict=True):
                counts = np.asarray(json.loads(tokens), dtype=np.int64)
                self.token_tally.add_counts(counts)
                self.supervised_tally.add_counts(np.asarray(json.loads(supervised), dtype=np.int64))
                examples += int(counts.sum())
            blank, malformed, invalid = (int(np.sum(batch[s])) for s in ("blank", "malformed", "invalid"))
        self.malformed.blank_lines += blank
        listed = {"malformed": 0, "invalid": 0}
        for problems in batch["problems"]:
            for status, path, reason in json.loads(problems):
                (self.malformed if status == "malformed" else self.invalid).add(str(path), 0, reason)
                listed[status] += 1
        self.malformed.count += malformed - listed["malformed"]  # add() counted the listed ones
        self.invalid.count += invalid - listed["invalid"]
        self.rows_read += examples + invalid

    def lengths(self) -> Lengths:
        import numpy as np

        if not self.keep_order:
            from trainsteps.data.stats import Distribution

            return Lengths(Distribution(self.token_tally.counts), Distribution(self.supervised_tally.counts))
        empty = np.zeros(0, dtype=np.int64)
        return Lengths(np.concatenate(self.token_parts) if self.token_parts else empty,
                       np.concatenate(self.supervised_parts) if self.supervised_parts else empty)


def _read(data, kind: str, paths: list[str]):
    if kind == "json":
        return data.read_text(paths, include_paths=True, drop_empty_lines=False)
    if kind == "parquet":
        return data.read_parquet(paths, include_paths=True)
    if kind == "csv":
        return data.read_csv(paths, include_paths=True)
    if kind == "text":
        return data.read_text(paths, include_paths=True)
    if kind == "arrow":
        import pyarrow as pa

        tables = []
        for path in paths:
            with pa.memory_map(path, "r") as mapped:
                tables.append(pa.ipc.open_stream(mapped).read_all())
        return data.from_arrow(tables)
    raise InputError("count.error.unknown_extension", "count.hint.unknown_extension", path=paths[0], known=kind)
