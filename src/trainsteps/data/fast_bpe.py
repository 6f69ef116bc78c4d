"""An exact, faster token counter for byte-level BPE tokenizers: tiktoken's CoreBPE built from a tokenizer.json.

Most of today's vocabularies (Qwen2/2.5/3, Llama 3, GPT-style) are byte-level BPE with one pre-tokenizer regex.
For those, tiktoken's Rust BPE gives the same tokens as Hugging Face `tokenizers` when it is given the same merges
(as ranks), the same regex and the same added tokens, and it counts without offsets or Python objects per token.

"The same" is not taken on trust. A tokenizer is used with this engine only if
1. its tokenizer.json can be expressed: a BPE model without dropout, byte fallback or word affixes, every byte in
   the vocabulary; no normalizer or NFC only; the pre-tokenizer is one regex `Split` (isolated) then `ByteLevel`
   without its own regex, or `ByteLevel` with the GPT-2 regex; added tokens without lstrip/rstrip/single_word;
2. and both engines give the same token ids, token for token, on every row of a mixed sample (English, Chinese,
   Japanese, code, emoji, numbers, odd whitespace, the tokenizer's own added tokens; `mixed_text.py`).
The verdict is cached per tokenizer file (its SHA-256), tiktoken release and check version. Anything else counts
with `tokenizers`, and the report says which engine counted and why.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from concurrent.futures import ThreadPoolExecutor

CHECK_VERSION = 1
"""Bump when the check sample or the build changes, so cached verdicts are made again."""
CHECK_ROWS = 2000
"""Rows of the mixed sample compared token for token before a tokenizer is used (about 0.3 M tokens)."""
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
"""The regex of `ByteLevel(use_regex=True)` (the GPT-2 pre-tokenizer), as in tokenizers' byte_level.rs."""


class Refused(Exception):
    """This tokenizer cannot be counted by the fast engine; the message says why."""


def byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> printable character table that byte-level BPE vocabularies are written in."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


class FastBPE:
    """tiktoken's CoreBPE over a tokenizer.json's merges; `lengths` counts, `ids` gives the tokenizer's own ids."""

    engine = "fast-bpe"

    def __init__(self, encoding, rank_to_id: list[int], specials: dict[str, int], nfc: bool, threads: int | None):
        self.encoding = encoding
        self._encode = encoding._core_bpe.encode_to_tiktoken_buffer  # ids in a buffer: no Python object per token
        self._encode_ordinary = encoding._core_bpe.encode_ordinary
        self.rank_to_id = rank_to_id
        self.specials = specials
        self.allowed = set(specials)
        self.nfc = nfc
        self.threads = max(1, threads or os.cpu_count() or 1)
        self._special_re = None

    def lengths(self, texts: list[str]) -> list[int]:
        """Token count of each text (added tokens written in the text count as one, as in `tokenizers`)."""
        if len(texts) < 64 or self.threads == 1:
            return self._lengths(texts)
        size = -(-len(texts) // self.threads)
        with ThreadPoolExecutor(self.threads) as pool:  # tiktoken releases the GIL while it encodes
            parts = list(pool.map(self._lengths, [texts[i:i + size] for i in range(0, len(texts), size)]))
        return [n for part in parts for n in part]

    def _lengths(self, texts: list[str]) -> list[int]:
        encode, allowed = self._encode, self.allowed
        if not self.nfc:
            return [memoryview(encode(text, allowed)).nbytes >> 2 for text in texts]  # 4 bytes per token id
        is_nfc = unicodedata.is_normalized
        return [memoryview(encode(text, allowed)).nbytes >> 2 if is_nfc("NFC", text) else self._count_normalized(text)
                for text in texts]

    def _count_normalized(self, text: str) -> int:
        return sum(len(piece) if isinstance(piece, list) else 1 for piece in self._pieces(text))

    def _pieces(self, text: str) -> list:
        """`tokenizers` order for a text NFC changes: cut at added tokens first, then normalize the rest."""
        if self._special_re is None:
            import re

            names = sorted(self.specials, key=len, reverse=True)  # leftmost-longest, as tokenizers' matcher
            self._special_re = re.compile("|".join(map(re.escape, names))) if names else re.compile(r"(?!x)x")
        out, at = [], 0
        for match in self._special_re.finditer(text):
            if match.start() > at:
                out.append(self._encode_ordinary(unicodedata.normalize("NFC", text[at:match.start()])))
            out.append(match.group())
            at = match.end()
        if at < len(text):
            out.append(self._encode_ordinary(unicodedata.normalize("NFC", text[at:])))
        return out

    def ids(self, text: str) -> list[int]:
        """The tokenizer's own ids for `text` (for the check; counting never builds them)."""
        if self.nfc and not unicodedata.is_normalized("NFC", text):
            ranks = []
            for piece in self._pieces(text):
                ranks += piece if isinstance(piece, list) else [self.specials[piece]]
        else:
            ranks = memoryview(self._encode(text, self.allowed)).cast("B").cast("I").tolist()
        return [self.rank_to_id[r] for r in ranks]


def build(config: dict, threads: int | None = None) -> FastBPE:
    """A FastBPE from a parsed tokenizer.json; raises Refused when the tokenizer cannot be expressed."""
    try:
        import tiktoken
    except ImportError:
        raise Refused("tiktoken is not installed (pip install 'trainsteps[data]')") from None
    model = config.get("model") or {}
    if model.get("type") != "BPE":
        raise Refused(f"the model is {model.get('type') or 'unknown'}, not BPE")
    for key, allowed in (("dropout", (None,)), ("byte_fallback", (False, None)), ("continuing_subword_prefix", ("", None)),
                         ("end_of_word_suffix", ("", None))):
        if model.get(key) not in allowed:
            raise Refused(f"the BPE model sets {key}={model.get(key)!r}")
    nfc = _normalizer(config.get("normalizer"))
    pattern = _pattern(config.get("pre_tokenizer"))
    vocab, merges = model.get("vocab") or {}, model.get("merges") or []
    alphabet = byte_alphabet()
    if any(char not in vocab for char in alphabet.values()):
        raise Refused("the vocabulary is not byte-level (some of the 256 byte symbols are missing)")
    to_bytes = {ord(char): chr(b) for b, char in alphabet.items()}
    ranks: dict[bytes, int] = {bytes([b]): b for b in range(256)}
    rank_to_id = [vocab[alphabet[b]] for b in range(256)]
    for merge in merges:  # a token's rank is the order of the merge that makes it, as BPE applies them
        left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
        token = left + right
        if token in vocab:
            key = token.translate(to_bytes).encode("latin-1")
            if key not in ranks:
                ranks[key] = len(rank_to_id)
                rank_to_id.append(vocab[token])
    specials = {}
    for added in config.get("added_tokens") or []:
        if added.get("lstrip") or added.get("rstrip") or added.get("single_word"):
            raise Refused(f"added token {added.get('content')!r} strips spaces or matches single words only")
        specials[added["content"]] = len(rank_to_id)
        rank_to_id.append(added["id"])
    try:
        encoding = tiktoken.Encoding("trainsteps-fast-bpe", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    except Exception as exc:  # noqa: BLE001 - e.g. a regex tiktoken's engine does not accept: count with tokenizers
        raise Refused(f"tiktoken could not build it: {str(exc)[:200]}") from None
    return FastBPE(encoding, rank_to_id, specials, nfc, threads)


def _normalizer(normalizer: dict | None) -> bool:
    """True for NFC, False for none; Refused for anything else."""
    if not normalizer:
        return False
    kind = normalizer.get("type")
    if kind == "NFC":
        return True
    if kind == "Sequence":
        kinds = [n.get("type") for n in normalizer.get("normalizers") or []]
        if kinds in ([], ["NFC"]):
            return bool(kinds)
        raise Refused(f"normalizers {kinds} cannot be expressed")
    raise Refused(f"normalizer {kind} cannot be expressed")


def _pattern(pre: dict | None) -> str:
    """The one pre-tokenizer regex; Refused for any other pre-tokenizer."""
    if not pre:
        raise Refused("no pre-tokenizer (byte-level BPE needs ByteLevel)")
    steps = pre.get("pretokenizers") if pre.get("type") == "Sequence" else [pre]
    kinds = [step.get("type") for step in steps]
    if kinds == ["ByteLevel"] and steps[0].get("use_regex", True) and not steps[0].get("add_prefix_space"):
        return GPT2_PATTERN
    if kinds == ["Split", "ByteLevel"]:
        split, level = steps
        regex = (split.get("pattern") or {}).get("Regex")
        if (regex and split.get("behavior") == "Isolated" and not split.get("invert") and not level.get("use_regex", True)
                and not level.get("add_prefix_space")):
            return regex
    raise Refused(f"pre-tokenizer {kinds} cannot be expressed as one regex")


def check(fast: FastBPE, tokenizer, rows: int = CHECK_ROWS) -> str | None:
    """None when both engines give the same ids on every row of the mixed sample; else the first difference."""
    from trainsteps.data.mixed_text import rows as mixed_rows

    specials = tuple(sorted(fast.specials))[:8]
    texts = mixed_rows(rows, seed=17, specials=specials) + [" ".join(specials), "\u00e9\u0301" + "".join(specials[:1]) + "\u0338"]
    expected = tokenizer.encode_batch(texts, add_special_tokens=False)
    for row, (text, encoding) in enumerate(zip(texts, expected, strict=True)):
        ids = fast.ids(text)
        if ids != encoding.ids:
            at = next((i for i, (a, b) in enumerate(zip(ids, encoding.ids, strict=False)) if a != b), min(len(ids), len(encoding.ids)))
            return (f"row {row + 1} of the check sample differs at token {at + 1} "
                    f"({len(ids)} tokens against {len(encoding.ids)} from tokenizers)")
    return None


def cache_file() -> str:
    root = os.environ.get("TRAINSTEPS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "trainsteps")
    return os.path.join(root, "fast_bpe_checks.json")


def verdict_key(raw: bytes) -> str:
    import tiktoken

    return f"{hashlib.sha256(raw).hexdigest()}:tiktoken-{tiktoken.__version__}:check-{CHECK_VERSION}"


def cached_verdict(key: str) -> dict | None:
    try:
        with open(cache_file(), encoding="utf-8") as f:
            return json.load(f).get(key)
    except (OSError, ValueError):
        return None


def store_verdict(key: str, verdict: dict) -> None:
    path = cache_file()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path, encoding="utf-8") as f:
                known = json.load(f)
        except (OSError, ValueError):
            known = {}
        known[key] = verdict
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(known, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs the check again next time
