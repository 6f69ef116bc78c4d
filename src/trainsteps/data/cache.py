"""A cache of full counts, so a second `count`, `plan --data` or `plan CONFIG --tokenizer` on the same data answers at once.

Key: every file's identity (resolved path, size, mtime and ctime in ns, inode, and a hash of its content: all of it up
to FULL_HASH bytes, else its first and last MiB and SAMPLES pieces spread between them), the tokenizer's hash (the
bytes of tokenizer.json and tokenizer_config.json) and the settings that change a length (format, template, text
field, special tokens, EOS, the caller's own settings). ctime cannot be set back by `touch -r`, `cp -p` or `rsync -t`,
so a file edited to the same size and mtime still gets a new key.

An entry holds a hash of its own content: one that is damaged (truncated, edited, of another version) is a miss,
removed, and counted again; `load` says so, so the caller can note it once.

Stored in `$XDG_CACHE_HOME/trainsteps/counts/` (default `~/.cache/trainsteps/counts/`) as one `.npz` of lengths
(loaded with `allow_pickle=False`: the cache never unpickles) and one `.json` of the rest. `TRAINSTEPS_NO_CACHE=1` or
`--no-cache` turns it off; a cache that cannot be written is skipped silently (the count is still right).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib

VERSION = 2
EDGE = 1 << 20  # bytes hashed at each end of a large file
FULL_HASH = 16 << 20
"""Files up to this size are hashed whole (a few milliseconds); larger ones by their ends and SAMPLES pieces."""
SAMPLES = 16
PIECE = 64 << 10
DAMAGED = "damaged"
"""What `load` returns for an entry that exists but cannot be trusted (it has been removed)."""


def directory() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "trainsteps" / "counts"


def enabled(no_cache: bool = False) -> bool:
    return not no_cache and os.environ.get("TRAINSTEPS_NO_CACHE", "") not in ("1", "true", "yes")


def file_identity(path: str) -> list:
    """(path, size, mtime_ns, ctime_ns, inode, blake2b of the content or of a sample of it) of one file."""
    st = os.stat(path)
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        if st.st_size <= FULL_HASH:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        else:
            h.update(f.read(EDGE))
            span = st.st_size - 2 * EDGE
            for i in range(1, SAMPLES + 1):
                f.seek(EDGE + span * i // (SAMPLES + 1))
                h.update(f.read(PIECE))
            f.seek(st.st_size - EDGE)
            h.update(f.read(EDGE))
    return [os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, h.hexdigest()]


def tokenizer_hash(path: str | None) -> str:
    if not path:
        return "-"
    file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    h = hashlib.blake2b(digest_size=16)
    for name in (file, os.path.join(os.path.dirname(file), "tokenizer_config.json")):
        if os.path.isfile(name):
            with open(name, "rb") as f:
                for block in iter(lambda f=f: f.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()


def key(files: list[str], tokenizer: str | None, settings: dict) -> str:
    identity = {"v": VERSION, "files": [file_identity(p) for p in files], "tokenizer": tokenizer_hash(tokenizer),
                "settings": settings}
    return hashlib.blake2b(json.dumps(identity, sort_keys=True, default=str).encode(), digest_size=20).hexdigest()


def load(cache_key: str, check=None):
    """(arrays, meta) stored under the key; None when there is none; DAMAGED when the entry is unreadable, fails its
    content hash, or `check(arrays, meta)` refuses it (the entry is then removed, so the next count rebuilds it)."""
    folder = directory()
    arrays_path, meta_path = folder / f"{cache_key}.npz", folder / f"{cache_key}.json"
    if not (arrays_path.is_file() and meta_path.is_file()):
        return None
    try:
        import numpy as np

        with np.load(arrays_path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        trusted = isinstance(meta, dict) and meta.get("digest") == _digest(arrays, meta) and (check is None or check(arrays, meta))
    except Exception:  # noqa: BLE001 - numpy and zipfile raise many types for a damaged file: every one is a miss
        trusted = False
    if not trusted:
        for damaged in (arrays_path, meta_path):
            try:
                damaged.unlink()
            except OSError:
                pass
        return DAMAGED
    return arrays, meta


def _digest(arrays: dict, meta: dict) -> str:
    """A hash of an entry's arrays (names, types, shapes, bytes) and of its meta without the digest itself."""
    h = hashlib.blake2b(digest_size=16)
    for name in sorted(arrays):
        array = arrays[name]
        h.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        h.update(array.tobytes())
    h.update(json.dumps({k: v for k, v in meta.items() if k != "digest"}, sort_keys=True).encode())
    return h.hexdigest()


def store(cache_key: str, arrays: dict, meta: dict) -> None:
    folder = directory()
    try:
        import numpy as np

        arrays = {name: np.asarray(array) for name, array in arrays.items()}
        meta = {**meta, "digest": _digest(arrays, meta)}
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{cache_key}.{os.getpid()}.npz"
        np.savez(tmp, **arrays)
        (folder / f"{cache_key}.json").write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, folder / f"{cache_key}.npz")  # the arrays last: a half-written entry is never read
    except OSError:
        return


def cached_pairs(files: list[str], tokenizer: str | None, settings: dict, no_cache: bool, compute, kind: str) -> list[tuple[int, int]]:
    """Per-row (a, b) pairs (tokens and masked / supervised tokens) of `files` through a framework's preprocessing,
    from the cache when the files, tokenizer and settings are unchanged; otherwise `compute()` and keep the result."""
    cache_key = None
    if files and enabled(no_cache):
        try:
            cache_key = key(files, tokenizer, settings)
            hit = load(cache_key, lambda arrays, _: {"first", "second"} <= set(arrays) and len(arrays["first"]) == len(arrays["second"]))
        except OSError:
            hit = None
        if hit is not None and hit != DAMAGED:
            arrays, _ = hit
            return list(zip((int(x) for x in arrays["first"]), (int(x) for x in arrays["second"]), strict=True))
    pairs = compute()
    if cache_key is not None:
        import numpy as np

        try:
            store(cache_key, {"first": np.asarray([a for a, _ in pairs], dtype=np.int64),
                              "second": np.asarray([b for _, b in pairs], dtype=np.int64)}, {"kind": kind})
        except OSError:
            pass
    return pairs
