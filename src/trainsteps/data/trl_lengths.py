"""`plan CONFIG --tokenizer T` for TRL SFT configs: each row's tokens as SFTTrainer (TRL 1.16) tokenizes it, and how many
of its leading tokens carry no loss.

- language modeling rows (`dataset_text_field`, default `text`): the text plus the EOS token's text when it does not
  already end with it, tokenized with the tokenizer's special tokens (`tokenizer(text=...)`); every token supervised;
- conversational rows (`messages`, or `conversations` with from/value, which TRL renames): rendered with the
  tokenizer's own chat template (`data.chat_template`) and tokenized without special tokens, as `apply_chat_template`
  does; every token supervised (`assistant_only_loss` is not modelled);
- prompt/completion rows: the prompt alone (conversational: with the generation prompt) and prompt + completion (+ EOS
  for text) are tokenized; the completion starts where the two id lists diverge (`common_prefix_length`), and with
  completion-only loss (the default for these rows) the tokens before it carry no loss.
"""

from __future__ import annotations

from trainsteps.errors import InputError


class TrlLengths:
    """Tokenizes rows for `configs.trl` (a `lengths_provider`)."""

    def __init__(self, tokenizer_path: str, threads: int | None = None, no_cache: bool = False) -> None:
        from trainsteps.data.tokenize import load

        self.tokenizer_path = tokenizer_path
        self.no_cache = no_cache
        self.base = load(tokenizer_path, threads, engine="tokenizers")  # ids are compared, not only counted
        self._template = None

    def template(self):
        if self._template is None:
            from trainsteps.data.chat_template import ChatTemplate

            self._template = ChatTemplate.from_tokenizer_config(self.tokenizer_path)
        return self._template

    @staticmethod
    def shuffled(items: list, seed: int) -> list:
        """`Dataset.shuffle(seed=seed)` before packing (shuffle_dataset): the order of numpy's
        `default_rng(seed).permutation(len(items))`, as `datasets` draws it."""
        import numpy as np

        return [items[i] for i in np.random.default_rng(seed).permutation(len(items))]

    def __call__(self, rows: list, options: dict, files: list[str] | None = None) -> tuple[list[tuple[int, int]], str]:
        """((tokens, masked leading tokens) per row, the dataset's kind: text / conversational / prompt_completion);
        kept in the count cache under `files`, the tokenizer and these options."""
        from trainsteps.data import cache

        kind = _kind(rows)
        settings = {"framework": "trl-sft", "release": "1.16.0", "kind": kind, **{k: options.get(k) for k in sorted(options)}}
        pairs = cache.cached_pairs([str(f) for f in files or []], self.tokenizer_path, settings, self.no_cache,
                                   lambda: self._encode(rows, options), "trl-rows")
        return pairs, kind

    def _encode(self, rows: list, options: dict) -> list[tuple[int, int]]:
        first = next((r for r in rows if isinstance(r, dict)), {})
        field = options.get("dataset_text_field") or "text"
        eos = options.get("eos_token") or self.base.eos_token or ""
        encode = self.base.tokenizer.encode_batch
        if "prompt" in first and "completion" in first:
            return self._prompt_completion(rows, eos, options)
        if _messages(first) is not None:
            template = self.template()
            texts = [template.render(_messages(r) or []) for r in rows]
            return [(len(e.ids), 0) for e in encode(texts, add_special_tokens=False)]
        if field not in first:
            raise InputError("trl.error.text_field", "trl.hint.text_field", field=field, columns=", ".join(list(first)[:8]))
        texts = [_with_eos(str(r.get(field) or ""), eos) for r in rows]
        return [(len(e.ids), 0) for e in encode(texts, add_special_tokens=True)]

    def _prompt_completion(self, rows, eos: str, options: dict) -> list[tuple[int, int]]:
        encode = self.base.tokenizer.encode_batch
        only_completion = options.get("completion_only_loss") is not False
        if _messages({"messages": rows[0].get("prompt")}) is not None:
            template = self.template()
            prompts = [template.render(r["prompt"], add_generation_prompt=True) for r in rows]
            wholes = [template.render(r["prompt"] + r["completion"]) for r in rows]
            special = False
        else:
            prompts = [str(r["prompt"]) for r in rows]
            wholes = [str(r["prompt"]) + _with_eos(str(r["completion"]), eos) for r in rows]
            special = True
        result = []
        for p, w in zip(encode(prompts, add_special_tokens=special), encode(wholes, add_special_tokens=special), strict=True):
            prefix = 0
            for a, b in zip(p.ids, w.ids, strict=False):
                if a != b:
                    break
                prefix += 1
            result.append((len(w.ids), prefix if only_completion else 0))
        return result


def _kind(rows: list) -> str:
    first = next((r for r in rows if isinstance(r, dict)), {})
    if "prompt" in first and "completion" in first:
        return "prompt_completion"
    return "conversational" if _messages(first) is not None else "text"


def _with_eos(text: str, eos: str) -> str:
    return text if not eos or text.endswith(eos) else text + eos


def message_roles(rows: list, limit: int = 8) -> list[str]:
    """The roles the rows' conversations use, in order of first use (at most `limit`), as TRL passes them on."""
    seen: list[str] = []
    for row in rows:
        for m in _messages(row) or []:
            role = str(m.get("role"))[:40]
            if role not in seen:
                seen.append(role)
                if len(seen) >= limit:
                    return seen
    return seen


def _messages(row) -> list | None:
    """The row's conversation as role/content dicts (TRL's maybe_convert_to_chatml renames from/value), or None."""
    if not isinstance(row, dict):
        return None
    value = row.get("messages", row.get("conversations"))
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) for m in value):
        return None
    if all("role" in m for m in value):
        return value
    if all("from" in m and "value" in m for m in value):
        return [{"role": m["from"], "content": m["value"]} for m in value]
    return None
