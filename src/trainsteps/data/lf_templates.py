"""LLaMA-Factory's registered chat templates, as data, and its SFT encoding of a row: tokens and supervised tokens.

The templates live in `data/templates/llamafactory-<release>.json`, dumped from the release's own `TEMPLATES` by
tools/record_lf_templates.py (slots, default system prompt, stop words, efficient_eos, replace_eos, reasoning).
The encoding follows `Template._encode` and `SupervisedDatasetProcessor._encode_data_example` of that release:

- each message is a list of elements; a string element is tokenized on its own (Llama2Template ones, llama2 /
  mistral / gemma, put the system text in front of the first user text instead) (`tokenizer.encode(elem,
  add_special_tokens=False)`), a `{"token": t}` element is one token, `{"bos_token"}` / `{"eos_token"}` one token when
  the tokenizer has one; the first message also carries the prefix and the system prompt (the row's, else the
  template's default system prompt);
- `replace_eos` templates make their first stop word the EOS token, added as a special token when the vocabulary
  lacks it (this changes how the text around it is split);
- reasoning templates (qwen3, ...) add the empty thought `<think>\\n\\n</think>\\n\\n` to an answer that has none,
  trained on when `enable_thinking` (the default);
- truncation is per turn (`infer_seqlen`), the latest turn first with `mask_history`; labels are the answers
  (and the prompts with `train_on_prompt`), only the last answer with `mask_history`; `efficient_eos` adds one EOS.
"""

from __future__ import annotations

import functools
import json
import pathlib
from dataclasses import dataclass

from trainsteps.errors import InputError

TEMPLATE_DIR = pathlib.Path(__file__).parent / "templates"
RECORDED = ("0.9.5",)
"""LLaMA-Factory releases whose templates are recorded; other releases use the nearest recorded one (and say so)."""


@functools.lru_cache(maxsize=4)
def catalog(release: str = "0.9.5") -> dict:
    path = TEMPLATE_DIR / f"llamafactory-{release}.json"
    return json.loads(path.read_text(encoding="utf-8"))["templates"]


def recorded_release(version: str) -> str:
    """The recorded release whose templates stand for `version`."""
    return RECORDED[-1] if version not in RECORDED else version


def template(name: str, release: str = "0.9.5") -> dict:
    templates = catalog(release)
    if name not in templates:
        raise InputError("lftemplate.error.unknown", "lftemplate.hint.unknown", name=name, release=release,
                         known=", ".join(sorted(templates)))
    return templates[name]


@dataclass(frozen=True)
class EncodeSettings:
    """The DataArguments that change an SFT row's tokens."""

    cutoff_len: int
    """cutoff_len as the processor sees it (after the packing decrement of 0.9.3+)."""
    train_on_prompt: bool = False
    mask_history: bool = False
    enable_thinking: bool = True


def infer_seqlen(source_len: int, target_len: int, cutoff_len: int) -> tuple[int, int]:
    """LLaMA-Factory `processor_utils.infer_seqlen`: how a turn is cut to fit what is left of cutoff_len."""
    if target_len * 2 < cutoff_len:
        max_target_len = cutoff_len
    elif source_len * 2 < cutoff_len:
        max_target_len = cutoff_len - source_len
    else:
        max_target_len = int(cutoff_len * (target_len / (source_len + target_len)))
    new_target_len = min(max_target_len, target_len)
    new_source_len = min(max(cutoff_len - new_target_len, 0), source_len)
    return new_source_len, new_target_len


class Encoder:
    """Encodes many rows at once: all their string elements go to the tokenizer in one batch."""

    def __init__(self, tokenizer, spec: dict, settings: EncodeSettings, has_bos: bool) -> None:
        self.tokenizer = tokenizer
        self.spec = spec
        self.settings = settings
        self.has_bos = has_bos
        self.thought = spec["thought_words"][0] + spec["thought_words"][1]
        self.thought_len = tokenizer.lengths([self.thought])[0] if spec.get("reasoning") else 0

    def _elements(self, slots: list, content: str) -> list:
        """Texts to tokenize (str) and fixed token counts (int) of one formatted message."""
        out = []
        for slot in slots:
            if "text" in slot:
                text = slot["text"].replace("{{content}}", content, 1)
                if text:
                    out.append(text)
            elif "token" in slot:
                out.append(1)
            elif slot.get("special") == "bos_token":
                out.append(1 if self.has_bos else 0)
            else:  # eos_token: every tokenizer has one once LLaMA-Factory fixed it
                out.append(1)
        return out

    def messages(self, system: str, turns: list[tuple[str, str]]) -> list[list]:
        spec = self.spec
        system = system or spec["default_system"]
        encoded = []
        fused = spec.get("class") == "Llama2Template"  # llama2, mistral, gemma: the system text joins the first user text
        for i, (role, content) in enumerate(turns):
            elements = []
            if i == 0:
                elements += self._elements(spec["prefix"], "")
                if system and fused and role != "assistant":
                    content = spec["system"][0]["text"].replace("{{content}}", system, 1) + content
                elif system:
                    elements += self._elements(spec["system"], system)
            elements += self._elements(spec["assistant" if role == "assistant" else "user"], content)
            encoded.append(elements)
        return encoded

    def lengths(self, rows: list[tuple[str, list[tuple[str, str]]]]) -> list[tuple[int, int]]:
        """(tokens, supervised) of each (system, turns) row."""
        encoded = [self.messages(system, turns) for system, turns in rows]
        texts = [e for row in encoded for message in row for e in message if isinstance(e, str)]
        counts = iter(self.tokenizer.lengths(texts))
        out = []
        for (_, turns), row in zip(rows, encoded, strict=True):
            sizes = [sum(next(counts) if isinstance(e, str) else e for e in message) for message in row]
            out.append(self._encode_example(turns, sizes))
        return out

    def _encode_example(self, turns, sizes: list[int]) -> tuple[int, int]:
        spec, s = self.spec, self.settings
        pairs = [[sizes[i], sizes[i + 1]] for i in range(0, len(sizes) - 1, 2)]
        if spec.get("reasoning") and self.thought_len:
            marks = (spec["thought_words"][0].strip(), spec["thought_words"][1].strip())
            indices = [len(pairs) - 1] if s.mask_history else range(len(pairs))
            for k in indices:
                answer = turns[2 * k + 1][1]
                if marks[0] not in answer and marks[1] not in answer:
                    pairs[k][1 if s.enable_thinking else 0] += self.thought_len
        total = 1 if spec["efficient_eos"] else 0
        supervised = 0
        if s.mask_history:
            pairs = pairs[::-1]
        for turn, (source, target) in enumerate(pairs):
            if total >= s.cutoff_len:
                break
            source, target = infer_seqlen(source, target, s.cutoff_len - total)
            total += source + target
            if s.train_on_prompt:
                supervised += source
            elif spec["efficient_eos"] and turn != 0:
                supervised += 1
            if not (s.mask_history and turn != 0):
                supervised += target
        if spec["efficient_eos"]:
            supervised += 1
        return total, supervised


def special_tokens_to_add(spec: dict, eos_token: str | None) -> list[str]:
    """Tokens LLaMA-Factory's `fix_special_tokens` adds as special tokens: every stop word (the first becomes the EOS of
    a replace_eos template), and `<|endoftext|>` as EOS for a tokenizer without one."""
    added = list(spec["stop_words"])
    if eos_token is None and not (spec.get("replace_eos") and added):
        added.insert(0, "<|endoftext|>")
    return added
