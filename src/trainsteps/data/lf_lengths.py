"""`plan CONFIG --tokenizer T` for LLaMA-Factory: each row's tokens and supervised tokens through the config's own
template, cutoff_len, train_on_prompt and mask_history (see `lf_templates`), handed to the pipeline rules of
`frameworks.llamafactory` as exact lengths. Rows of one dataset file are encoded in one batch; the result is kept in
the count cache (keyed by the file, the tokenizer and these settings)."""

from __future__ import annotations

import json
import os

from trainsteps.data import formats, lf_templates
from trainsteps.data.sources import FormatHint
from trainsteps.errors import InputError


class LlamaFactoryLengths:
    """The `lengths_provider` of `configs.import_run` for LLaMA-Factory configs."""

    def __init__(self, tokenizer_path: str, threads: int | None = None, no_cache: bool = False) -> None:
        from trainsteps.data.tokenize import load

        self.tokenizer_path = tokenizer_path
        self.base = load(tokenizer_path, threads)
        self.no_cache = no_cache
        self.config = _tokenizer_config(self.base.path)
        self.release = None
        self.template_name = None

    def __call__(self, rows: list, entry: dict, stage: str, options: dict, path: str | None = None) -> tuple[list[int], list[int]]:
        """(tokens, supervised) per row, after LLaMA-Factory's truncation; 0 for rows it drops."""
        release = lf_templates.recorded_release(options["version"])
        name = options.get("template") or "empty"
        spec = lf_templates.template(name, release)
        self.release, self.template_name = release, name
        if options.get("train_on_prompt") and spec["efficient_eos"]:  # get_template_and_fix_tokenizer refuses it
            raise InputError("lftemplate.error.train_on_prompt", "lftemplate.hint.train_on_prompt", name=name)
        settings = lf_templates.EncodeSettings(int(options["cutoff_len"]), bool(options.get("train_on_prompt")),
                                               bool(options.get("mask_history")), options.get("enable_thinking", True) is not False)
        cache_settings = {"lf_release": release, "template": name, "stage": stage, "settings": settings.__dict__, "entry": entry}
        cached = self._cached(path, cache_settings)
        if cached is not None and len(cached[0]) == len(rows):
            return cached
        eos = _token_text(self.config.get("eos_token"))
        tokenizer = self.base.with_special_tokens(lf_templates.special_tokens_to_add(spec, eos))
        if stage == "pt":
            texts = [_pt_text(row, entry) for row in rows]
            lengths = [n + 1 for n in tokenizer.lengths(texts)]  # + the EOS token appended to each text
            result = (lengths, list(lengths))  # pt: blocks are cut from the joined texts, not rows truncated
        else:
            result = self._sft(rows, entry, tokenizer, spec, settings)
        self._store(path, cache_settings, result)
        return result

    def _sft(self, rows, entry, tokenizer, spec, settings):
        hint = FormatHint(entry.get("formatting", "alpaca"), entry.get("columns") or {}, entry.get("tags") or {}, True)
        first = next((r for r in rows if isinstance(r, dict)), {})
        fmt = formats.resolve(hint, "auto", first, None)
        encoder = lf_templates.Encoder(tokenizer, spec, settings, has_bos=bool(self.config.get("bos_token")))
        parsed, keep = [], []
        for row in rows:
            try:
                parsed.append(formats.turns(fmt, row if isinstance(row, dict) else {}))
                keep.append(True)
            except formats.RowError:
                keep.append(False)
        encoded = iter(encoder.lengths(parsed))
        tokens, supervised = [], []
        for ok in keep:
            total, sup = next(encoded) if ok else (0, 0)
            tokens.append(total)
            supervised.append(sup)
        return tokens, supervised

    def _cached(self, path, settings):
        from trainsteps.data import cache

        if path is None or not cache.enabled(self.no_cache):
            return None
        try:
            hit = cache.load(cache.key([path], self.tokenizer_path, settings))
        except OSError:
            return None
        if hit is None:
            return None
        arrays, _ = hit
        return [int(x) for x in arrays["tokens"]], [int(x) for x in arrays["supervised"]]

    def _store(self, path, settings, result) -> None:
        from trainsteps.data import cache

        if path is None or not cache.enabled(self.no_cache):
            return
        import numpy as np

        try:
            key = cache.key([path], self.tokenizer_path, settings)
        except OSError:
            return
        cache.store(key, {"tokens": np.asarray(result[0], dtype=np.int64), "supervised": np.asarray(result[1], dtype=np.int64)},
                    {"kind": "llamafactory-rows"})


def _pt_text(row, entry: dict) -> str:
    columns = entry.get("columns") or {}
    column = columns.get("prompt", "text")
    value = row.get(column) if isinstance(row, dict) else None
    return value if isinstance(value, str) else ""


def _token_text(value):
    return value.get("content") if isinstance(value, dict) else value


def _tokenizer_config(tokenizer_file: str) -> dict:
    path = os.path.join(os.path.dirname(tokenizer_file), "tokenizer_config.json")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    return {k: config.get(k) for k in ("bos_token", "eos_token", "pad_token", "chat_template")}
