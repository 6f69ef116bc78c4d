"""`plan CONFIG --tokenizer T` for ms-swift configs: each row's tokens and supervised tokens as ms-swift 4.6's
`Template._swift_encode` makes them, for the ChatML-family templates below (their TemplateMeta, read from
swift/template/templates/{utils,qwen}.py).

The conversation becomes a list of pieces: the BOS ids (`auto_add_bos`), `system_prefix` with the system (the row's
system message, else the template's default system) or `prefix`, then per round `prompt` with the query, the response,
and `chat_sep` (`suffix` after the last response). Responses and the suffix carry loss, the rest not; adjacent text
pieces with the same loss are joined and each joined piece is tokenized on its own without special tokens. A masked
span right after a trained one that starts with the suffix's tokens is trained too (`_add_dynamic_eos`), and the first
label is always -100. Rows longer than `max_length` are deleted (`truncation_strategy: delete`, the default).
"""

from __future__ import annotations

from trainsteps.errors import InputError

_CHATML = {"prefix": [], "prompt": ["<|im_start|>user\n{{QUERY}}<|im_end|>\n<|im_start|>assistant\n"],
           "chat_sep": ["<|im_end|>\n"], "suffix": ["<|im_end|>\n"], "system_prefix": ["<|im_start|>system\n{{SYSTEM}}<|im_end|>\n"]}
TEMPLATES = {
    "chatml": {**_CHATML, "default_system": None, "auto_add_bos": True, "stop_words": []},
    "qwen": {**_CHATML, "default_system": "You are a helpful assistant.", "auto_add_bos": False, "stop_words": ["<|endoftext|>"]},
    "qwen2_5": {**_CHATML, "default_system": "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
                "auto_add_bos": False, "stop_words": ["<|endoftext|>"]},
}
"""ms-swift 4.6.0 TemplateMeta of the templates modelled here."""
RELEASE = "4.6.0"


class SwiftLengths:
    """Tokenizes rows for `configs.swift` (a `lengths_provider`)."""

    def __init__(self, tokenizer_path: str, threads: int | None = None, no_cache: bool = False) -> None:
        from trainsteps.data.tokenize import load

        self.tokenizer_path = tokenizer_path
        self.no_cache = no_cache
        self.base = load(tokenizer_path, threads, engine="tokenizers")

    def __call__(self, rows: list, template: str, system: str | None, files: list[str] | None = None) -> list[tuple[int, int]]:
        """(tokens, supervised tokens) per row, before the max_length filter."""
        from trainsteps.data import cache

        if template not in TEMPLATES:
            raise InputError("swift.error.template", "swift.hint.template", name=template, known=", ".join(TEMPLATES))
        settings = {"framework": "ms-swift", "release": RELEASE, "template": template, "system": system}
        return cache.cached_pairs([str(f) for f in files or []], self.tokenizer_path, settings, self.no_cache,
                                  lambda: [self._row(r, TEMPLATES[template], system) for r in rows], "swift-rows")

    def _ids(self, text: str) -> list[int]:
        return self.base.tokenizer.encode(text, add_special_tokens=False).ids

    def _row(self, row, meta: dict, system_arg: str | None) -> tuple[int, int]:
        messages = _messages(row)
        system = system_arg
        if messages and messages[0]["role"] == "system":
            system = messages[0]["content"]
            messages = messages[1:]
        if system is None:
            system = meta["default_system"]
        pieces: list[tuple[object, float]] = []  # (text or ids, loss)
        sep_ids: list[int] = []
        if meta["auto_add_bos"]:
            whole = self.base.tokenizer.encode("a", add_special_tokens=True).ids
            single = self._ids("a")[0]
            at = whole.index(single)
            if whole[:at]:
                pieces.append((whole[:at], 0.0))
            sep_ids = whole[at + 1:]
        for text in (meta["system_prefix"] if system else meta["prefix"]):
            pieces.append((text.replace("{{SYSTEM}}", system or ""), 0.0))
        rounds = list(zip(messages[::2], messages[1::2], strict=False))
        for i, (query, response) in enumerate(rounds):
            for text in meta["prompt"]:
                pieces.append((text.replace("{{QUERY}}", query["content"]), 0.0))
            pieces.append((response["content"], 1.0))
            if i < len(rounds) - 1:
                pieces += [(text, 0.0) for text in meta["chat_sep"]]
            elif not sep_ids and not any(response["content"].endswith(w) for w in meta["stop_words"] + meta["suffix"]):
                pieces += [(text, 1.0) for text in meta["suffix"]]
        if sep_ids:
            pieces.append((sep_ids, 1.0))
        ids: list[int] = []
        labels: list[bool] = []
        for chunk, loss in _joined(pieces):
            part = self._ids(chunk) if isinstance(chunk, str) else list(chunk)
            ids += part
            labels += [loss > 0] * len(part)
        suffix = [t for text in meta["suffix"] for t in self._ids(text)]
        _dynamic_eos(ids, labels, suffix)
        if labels:
            labels[0] = False
        return len(ids), sum(labels)


def _joined(pieces):
    """`_simplify_context_list`: adjacent text pieces with the same loss joined, empty text dropped."""
    out: list[tuple[object, float]] = []
    for chunk, loss in pieces:
        if isinstance(chunk, str) and not chunk:
            continue
        if out and isinstance(chunk, str) and isinstance(out[-1][0], str) and out[-1][1] == loss:
            out[-1] = (out[-1][0] + chunk, loss)
        else:
            out.append((chunk, loss))
    return out


def _dynamic_eos(ids: list[int], labels: list[bool], suffix: list[int]) -> None:
    """`Template._add_dynamic_eos`: a masked span after a trained one that starts with the suffix ids trains them."""
    n, start = len(suffix), 0
    for i in range(1, len(labels) + 1):
        if labels[i - 1] and i < len(labels) and not labels[i]:
            start = i
        elif start > 0 and not labels[i - 1] and (i == len(labels) or labels[i]):
            if i - start >= n and ids[start:start + n] == suffix:
                for k in range(start, start + n):
                    labels[k] = True


def _messages(row) -> list[dict]:
    value = row.get("messages", row.get("conversations")) if isinstance(row, dict) else None
    if not isinstance(value, list):
        from trainsteps.data.rows import RowError

        raise RowError("no messages list in the row")
    roles = {"human": "user", "gpt": "assistant"}
    return [{"role": roles.get(m.get("role", m.get("from")), m.get("role", m.get("from"))),
             "content": m.get("content", m.get("value")) or ""} for m in value if isinstance(m, dict)]
