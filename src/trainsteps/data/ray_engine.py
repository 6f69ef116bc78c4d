"""The same count on Ray Data: files read in parallel, rows rendered and tokenized in `map_batches`, lengths gathered.

The row format is fixed from the first row (read locally) so every worker renders rows the same way. Each worker
loads the tokenizer once (a callable class). JSONL is read as text lines and parsed in the workers, so a malformed line
is counted (with its file; Ray's blocks do not keep line numbers) instead of failing the read.
"""

from __future__ import annotations

import time

from trainsteps.data import formats, readers, sources
from trainsteps.data.count import Counted, CountOptions, Lengths
from trainsteps.data.readers import Problems
from trainsteps.errors import InputError


class _Tokenize:
    """map_batches worker: rows (one column per field, or `text` lines of JSONL) -> token and supervised lengths."""

    def __init__(self, options: CountOptions, fmt: formats.RowFormat, jsonl: bool):
        from trainsteps.data.tokenize import load

        self.options, self.fmt, self.jsonl = options, fmt, jsonl
        self.tokenizer = load(options.tokenizer, options.threads)
        self.template = formats.TEMPLATES[options.template]

    def __call__(self, batch: dict) -> dict:
        import json

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
        tokens = np.bincount(owner_array, weights=lengths, minlength=len(rows)).astype(np.int64)
        supervised = np.bincount(owner_array, weights=lengths * np.asarray(sup_flags, dtype=bool), minlength=len(rows)).astype(np.int64)
        plain = self.fmt.kind == "text"
        extra = ((self.tokenizer.special_tokens if self.options.add_special_tokens else 0) if plain else 0) + (1 if self.options.add_eos else 0)
        return {"tokens": tokens + extra, "supervised": supervised + extra, "status": np.asarray(status), "reason": np.asarray(reasons),
                "path": np.asarray(paths)}


def count_on_ray(options: CountOptions, address: str | None = None) -> Counted:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise InputError("count.error.ray_missing", "count.hint.ray_missing") from exc
    import numpy as np

    started = time.perf_counter()
    files, hint = sources.expand(options.paths, options.dataset, options.split)
    first = next(readers.read(files[0], Problems()), None)
    if first is None or not first.rows:
        raise InputError("count.error.no_files", "count.hint.no_match", path=files[0].path)
    fmt = formats.resolve(hint, options.data_format, first.rows[0], options.text_field)
    formats.check_columns(fmt, first.rows[0])
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    parts = []
    for kind in sorted({s.kind for s in files}):
        paths = [s.path for s in files if s.kind == kind]
        dataset = _read(ray.data, kind, paths)
        mapped = dataset.map_batches(_Tokenize, fn_constructor_args=(options, fmt, kind == "json"), batch_format="numpy",
                                     batch_size=2000, concurrency=1 if options.threads else None)
        parts.append(mapped.to_pandas())
    import pandas as pd

    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["tokens", "supervised", "status", "reason", "path"])
    ok = table["status"] == "ok"
    malformed, invalid = Problems(), Problems()
    malformed.blank_lines = int((table["status"] == "blank").sum())
    for problems, status in ((malformed, "malformed"), (invalid, "invalid")):
        for _, row in table[table["status"] == status].iterrows():
            problems.add(str(row["path"]), 0, row["reason"] or "not a JSON object")
    lengths = Lengths(table.loc[ok, "tokens"].to_numpy(dtype=np.int64), table.loc[ok, "supervised"].to_numpy(dtype=np.int64))
    rows_read = int((table["status"] != "blank").sum() - (table["status"] == "malformed").sum())
    return Counted([s.path for s in files], fmt.describe(), options.template if fmt.kind not in ("text", "prompt_completion") else "-",
                   lengths, rows_read, invalid, malformed, time.perf_counter() - started)


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
