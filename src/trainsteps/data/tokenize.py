"""Token lengths of many texts at once, with a local tokenizer on all cores.

Two engines count: Hugging Face `tokenizers`, which reads every tokenizer.json, and `fast-bpe` (fast_bpe.py),
tiktoken's BPE built from the same file, used only for byte-level BPE tokenizers it is proven to match.
`--engine-tokenizer auto` (the default) takes fast-bpe where it is proven, `tokenizers` elsewhere.
"""

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
    engine: str = "tokenizers"
    """Which engine counts: `tokenizers` or `fast-bpe`."""
    engine_reason: str = ""
    """Why that engine (the fast engine's check, or why it was not used)."""
    fast: object = None
    """The `fast_bpe.FastBPE` counting in place of `tokenizer`, when `engine` is `fast-bpe`."""

    def lengths(self, texts: list[str]) -> list[int]:
        """Token count of each text, without special tokens (the encode runs in parallel, in Rust)."""
        if not texts:
            return []
        if self.fast is not None:
            return self.fast.lengths(texts)
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


ENGINES = ("auto", "tokenizers", "fast-bpe")


def load(path: str, threads: int | None = None, engine: str = "auto") -> LocalTokenizer:
    """A tokenizer.json file, or a model folder containing one (nothing is downloaded); `engine` in ENGINES."""
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
    loaded = LocalTokenizer(file, tokenizer, special, _eos_token(os.path.dirname(file)))
    _choose_engine(loaded, engine, threads)
    return loaded


def _choose_engine(loaded: LocalTokenizer, engine: str, threads: int | None) -> None:
    """Use the fast engine where it is allowed and proven; say why in `engine_reason`."""
    if engine == "tokenizers":
        loaded.engine_reason = "tokenizers was asked for (--engine-tokenizer tokenizers)"
        return
    import json

    from trainsteps.data import fast_bpe

    with open(loaded.path, "rb") as f:
        raw = f.read()
    try:
        try:
            config = json.loads(raw)
        except ValueError as exc:
            raise fast_bpe.Refused(f"its JSON could not be read here: {exc}") from None
        fast = fast_bpe.build(config, threads)
        key = fast_bpe.verdict_key(raw)
        verdict = fast_bpe.cached_verdict(key)
        if verdict is None:
            problem = fast_bpe.check(fast, loaded.tokenizer)
            verdict = {"ok": problem is None, "reason": problem or ""}
            fast_bpe.store_verdict(key, verdict)
        if not verdict["ok"]:
            raise fast_bpe.Refused(f"it differs from tokenizers on the check sample: {verdict['reason']}")
    except fast_bpe.Refused as refused:
        if engine == "fast-bpe":
            raise InputError("count.error.fast_bpe_refused", "count.hint.fast_bpe_refused", path=loaded.path,
                             reason=str(refused)) from None
        loaded.engine_reason = f"fast-bpe not used: {refused}"
        return
    loaded.engine, loaded.fast = "fast-bpe", fast
    loaded.engine_reason = (f"tiktoken CoreBPE built from tokenizer.json; same ids as tokenizers on all "
                            f"{fast_bpe.CHECK_ROWS:,} rows of the mixed check sample")


def _eos_token(folder: str) -> str | None:
    import json

    config = os.path.join(folder, "tokenizer_config.json")
    if not os.path.isfile(config):
        return None
    with open(config, encoding="utf-8") as f:
        eos = json.load(f).get("eos_token")
    return eos.get("content") if isinstance(eos, dict) else eos
