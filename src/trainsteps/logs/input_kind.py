"""What an input is when explain finds no training line in it: empty, compressed, binary, or JSON that is no
trainer_state.json. Judged on the first bytes only (bounded), so the reader stays one pass in constant memory.

Compressed logs are named, not decompressed: a decompressor in the reader would need its own output cap against
bombs, and `gunzip -c FILE | trainsteps explain -` already streams in constant memory."""

from __future__ import annotations

SAMPLE = 65536
"""Bytes of the head judged for text."""

BINARY_SHARE = 0.3
"""Above this share of non-text bytes in the sample, the input is called binary (random bytes give about 60%)."""

_MAGIC = ((b"\x1f\x8b", "gzip", "gunzip -k {file}", "gunzip -c {file}"),
          (b"\x28\xb5\x2f\xfd", "zstd", "zstd -d {file}", "zstd -dc {file}"),
          (b"BZh", "bzip2", "bunzip2 -k {file}", "bunzip2 -c {file}"),
          (b"\xfd7zXZ\x00", "xz", "unxz -k {file}", "unxz -c {file}"),
          (b"PK\x03\x04", "zip", "unzip {file}", "unzip -p {file}"))
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b\x0b")


def non_text_share(head: bytes) -> float:
    """Share of the sample's bytes that are control bytes (tab, newline, CR, ANSI escape aside) or not UTF-8."""
    sample = head[:SAMPLE]
    if not sample:
        return 0.0
    controls = sum(1 for b in sample if (b < 0x20 and b not in _TEXT_CONTROLS) or b == 0x7F)
    invalid = sample.decode("utf-8", "replace").count("\ufffd") - sample.count("\ufffd".encode())
    return (controls + invalid) / len(sample)


def json_error(data: bytes) -> tuple[int, int, str] | None:
    """(line, column, message) of the first JSON error, None when the bytes are valid JSON."""
    import json  # only for an input that looks like JSON: `json` is not needed to read a text log

    try:
        json.loads(data.decode("utf-8", "replace"))
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.colno, exc.msg
    except (ValueError, RecursionError) as exc:
        return 1, 1, str(exc)[:80]
    return None


def problem(name: str, head: bytes, whole: bool) -> tuple[str, str, dict] | None:
    """(message id, hint id, params) saying what the input is, or None when it looks like text.

    `head` is the input's first bytes; `whole` says whether it is the whole input (for the JSON check)."""
    if not head:
        return "explain.error.empty_input", "explain.hint.empty_input", {}
    for magic, kind, unpack, pipe in _MAGIC:
        if head.startswith(magic):
            file = name if name != "-" else "FILE"
            return "explain.error.compressed", "explain.hint.compressed", {
                "kind": kind, "unpack": unpack.format(file=file), "pipe": pipe.format(file=file)}
    share = non_text_share(head)
    if share > BINARY_SHARE:
        return "explain.error.binary", "explain.hint.binary", {"share": f"{share:.0%}"}
    if name.endswith(".json") and head.lstrip()[:1] in (b"{", b"["):
        if not whole:
            return None
        error = json_error(head)
        if error is not None:
            return "explain.error.bad_json", "explain.hint.bad_json", {"line": error[0], "column": error[1], "detail": error[2]}
        return "explain.error.not_state", "explain.hint.not_state", {}
    return None
