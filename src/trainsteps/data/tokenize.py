"""Token lengths of many texts at once, with a local Hugging Face `tokenizers` tokenizer on all cores."""

from __future__ import annotations

import os
from dataclasses import dataclass

from trainsteps.errors import InputError


@dataclass
class LocalTokenizer:
    """A loaded tokenizer.json and what it adds around one sequence."""

    path: str
    """The tokenizer.json file."""
    tokenizer: object
    """The `tokenizers.Tokenizer`."""
    special_tokens: int
    """Tokens the post-processor adds to a single sequence (BOS/EOS of add_special_tokens=True)."""
    eos_token: str | None
    """The EOS token's text, from tokenizer_config.json beside tokenizer.json, if there is one."""

    def lengths(self, texts: list[str]) -> list[int]:
        """Token count of each text, without special tokens (the encode runs in parallel, in Rust)."""
        if not texts:
            return []
        encode = getattr(self.tokenizer, "encode_batch_fast", None) or self.tokenizer.encode_batch
        return [len(e) for e in encode(texts, add_special_tokens=False)]

    def with_special_tokens(self, tokens: list[str]) -> LocalTokenizer:
        """A copy that splits `tokens` out as special tokens, as transformers' `add_special_tokens` does (a chat
        template's stop words); the same tokenizer when there are none."""
        if not tokens:
            return self
        from tokenizers import AddedToken, Tokenizer

        copy = Tokenizer.from_str(self.tokenizer.to_str())
        copy.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in tokens])
        return LocalTokenizer(self.path, copy, self.special_tokens, self.eos_token)


def load(path: str, threads: int | None = None) -> LocalTokenizer:
    """A tokenizer.json file, or a model folder containing one (nothing is downloaded)."""
    if threads:
        os.environ["RAYON_NUM_THREADS"] = str(threads)  # read by tokenizers when its thread pool starts
    file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    if not os.path.isfile(file):
        raise InputError("count.error.no_tokenizer", "count.hint.no_tokenizer", path=path)
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise InputError("count.error.extra_missing", "count.hint.extra_missing", module="tokenizers") from exc
    try:
        tokenizer = Tokenizer.from_file(file)
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a bad file
        raise InputError("count.error.bad_tokenizer", "count.hint.no_tokenizer", path=file, detail=str(exc)[:200]) from exc
    processor = tokenizer.post_processor
    special = processor.num_special_tokens_to_add(False) if processor is not None else 0
    return LocalTokenizer(file, tokenizer, special, _eos_token(os.path.dirname(file)))


def _eos_token(folder: str) -> str | None:
    import json

    config = os.path.join(folder, "tokenizer_config.json")
    if not os.path.isfile(config):
        return None
    with open(config, encoding="utf-8") as f:
        eos = json.load(f).get("eos_token")
    return eos.get("content") if isinstance(eos, dict) else eos
