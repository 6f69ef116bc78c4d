"""From what the user typed (files, globs, folders, a LLaMA-Factory `dataset_info.json`) to a list of files to read."""

from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass, field

from trainsteps.errors import InputError

# file kind by extension (after a compression suffix is removed); the names follow `datasets` loaders
KIND_BY_EXTENSION = {
    "jsonl": "json",
    "json": "json",
    "ndjson": "json",
    "csv": "csv",
    "tsv": "csv",
    "parquet": "parquet",
    "arrow": "arrow",
    "txt": "text",
    "idx": "idx",
    "bin": "idx",
}
COMPRESSION_BY_EXTENSION = {"gz": "gzip", "gzip": "gzip", "zst": "zstd", "zstd": "zstd"}


@dataclass(frozen=True)
class Source:
    """One file to read."""

    path: str
    """Path on disk."""
    kind: str
    """json | csv | parquet | arrow | text | idx"""
    compression: str | None = None
    """None, gzip or zstd."""


@dataclass
class FormatHint:
    """How a LLaMA-Factory `dataset_info.json` entry says its rows are laid out (None: detect from the rows)."""

    formatting: str | None = None
    """alpaca | sharegpt | openai, as in `dataset_info.json`; None to detect."""
    columns: dict = field(default_factory=dict)
    """`columns` mapping of the entry (LLaMA-Factory names -> column names in the file)."""
    tags: dict = field(default_factory=dict)
    """`tags` mapping of the entry (role/content keys and role values)."""
    from_dataset_info: bool = False
    """True when these come from a `dataset_info.json` entry (then unnamed columns are unset, as in LLaMA-Factory)."""


def describe(path: str) -> Source:
    """The kind and compression of one file, from its name; an unknown extension is an error that names the supported ones."""
    name = os.path.basename(path).lower()
    parts = name.split(".")
    compression = None
    if len(parts) > 1 and parts[-1] in COMPRESSION_BY_EXTENSION:
        compression = COMPRESSION_BY_EXTENSION[parts[-1]]
        parts = parts[:-1]
    ext = parts[-1] if len(parts) > 1 else ""
    kind = KIND_BY_EXTENSION.get(ext)
    if kind is None:
        raise InputError("count.error.unknown_extension", "count.hint.unknown_extension", path=path,
                         known=", ".join(sorted(KIND_BY_EXTENSION)))
    return Source(path, kind, compression)


def expand(paths: list[str], dataset: str | None = None, split: str = "train") -> tuple[list[Source], FormatHint]:
    """Every file named by `paths` (files, globs, folders), in a stable order.

    A folder written by `datasets.save_to_disk` yields its arrow shards; a folder or file that is a LLaMA-Factory
    `dataset_info.json` needs `dataset` (the entry name) and yields that entry's files with its format hint.
    """
    sources: list[Source] = []
    hint = FormatHint()
    for given in paths:
        info = _dataset_info_file(given)
        if info is not None:
            entry_sources, hint = _from_dataset_info(info, dataset)
            sources += entry_sources
            continue
        matches = _glob(given) if glob.has_magic(given) else [given]
        if not matches:
            raise InputError("count.error.no_match", "count.hint.no_match", path=given)
        for path in matches:
            sources += _expand_one(path, split)
    if not sources:
        raise InputError("count.error.no_files", "count.hint.no_match", path=", ".join(paths))
    return _unique(sources), hint


def _unique(sources: list[Source]) -> list[Source]:
    """Each file once, whatever paths, globs or links named it."""
    seen: set[str] = set()
    out = []
    for source in sources:
        real = os.path.realpath(source.path)
        if real not in seen:
            seen.add(real)
            out.append(source)
    return out


def _glob(pattern: str) -> list[str]:
    """`glob(pattern, recursive=True)` without following links to folders: `**` walks with `os.walk`, which does not
    enter them, so two `ln -s .` links cannot turn one folder into 2^depth paths. Hidden names are skipped, as glob does."""
    if "**" not in pattern:
        return sorted(glob.glob(pattern))
    parts = pattern.replace(os.sep, "/").split("/")
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    root = "/".join(parts[:fixed]) or ("/" if pattern.startswith("/") else ".")
    regex = re.compile(_segments_regex(parts[fixed:]))
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        found += [os.path.join(folder, name) for name in files if not name.startswith(".") and regex.fullmatch(prefix + name)]
    return sorted(os.path.normpath(path) for path in found)


def _segments_regex(parts: list[str]) -> str:
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment_regex(part) + ("" if last else "/"))
    return "".join(out)


def _segment_regex(part: str) -> str:
    """One path segment of a glob: `*` and `?` never cross a `/`."""
    out, i = [], 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and part.find("]", i + 2) > 0:  # a `]` just after `[` belongs to the set
            end = part.find("]", i + 2)
            body = part[i + 1:end]
            negate = body.startswith("!")
            out.append("[" + ("^" if negate else "") + (body[1:] if negate else body).replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _expand_one(path: str, split: str) -> list[Source]:
    if not os.path.exists(path):
        raise InputError("count.error.unreadable", "count.hint.unreadable", path=path, detail="no such file or folder")
    if os.path.isfile(path):
        return [describe(path)]
    if os.path.exists(os.path.join(path, "dataset_dict.json")):
        return _from_dataset_dict(path, split)
    if os.path.exists(os.path.join(path, "state.json")):
        return _from_saved_dataset(path)
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name in ("dataset_info.json", "state.json"):
                continue
            try:
                found.append(describe(os.path.join(root, name)))
            except InputError:
                continue  # a README or a lock file beside the data is not data
    return _drop_megatron_bin(found)


def _drop_megatron_bin(sources: list[Source]) -> list[Source]:
    """A Megatron dataset is a .bin/.idx pair: keep the .idx, which the idx reader opens with its .bin."""
    return [s for s in sources if not (s.kind == "idx" and s.path.endswith(".bin"))]


def _from_saved_dataset(folder: str) -> list[Source]:
    """`Dataset.save_to_disk`: state.json lists the arrow shards in order."""
    with open(os.path.join(folder, "state.json"), encoding="utf-8") as f:
        state = json.load(f)
    files = [entry["filename"] for entry in state.get("_data_files", [])]
    return [Source(os.path.join(folder, name), "arrow") for name in files]


def _from_dataset_dict(folder: str, split: str) -> list[Source]:
    """`DatasetDict.save_to_disk`: one saved dataset per split."""
    with open(os.path.join(folder, "dataset_dict.json"), encoding="utf-8") as f:
        splits = json.load(f).get("splits", [])
    if split not in splits:
        raise InputError("count.error.no_split", "count.hint.no_split", path=folder, split=split, splits=", ".join(splits))
    return _from_saved_dataset(os.path.join(folder, split))


def _dataset_info_file(path: str) -> str | None:
    if os.path.basename(path) == "dataset_info.json" and os.path.isfile(path):
        return path
    candidate = os.path.join(path, "dataset_info.json")
    if os.path.isdir(path) and os.path.isfile(candidate) and not os.path.exists(os.path.join(path, "state.json")):
        return candidate
    return None


def _from_dataset_info(info_path: str, name: str | None) -> tuple[list[Source], FormatHint]:
    """One entry of LLaMA-Factory's dataset_info.json: `file_name` relative to its folder (a file or a folder of files)."""
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    if not name:
        raise InputError("count.error.dataset_needed", "count.hint.dataset_needed", path=info_path,
                         names=", ".join(sorted(info)[:20]))
    if name not in info:
        raise InputError("count.error.dataset_entry", "count.hint.dataset_entry", path=info_path, name=name,
                         names=", ".join(sorted(info)[:20]))
    entry = info[name]
    if "file_name" not in entry:
        raise InputError("count.error.dataset_remote", "count.hint.dataset_remote", name=name)
    target = os.path.join(os.path.dirname(info_path), entry["file_name"])
    sources = _expand_one(target, entry.get("split", "train"))
    hint = FormatHint(entry.get("formatting", "alpaca"), entry.get("columns", {}), entry.get("tags", {}), True)
    return sources, hint
