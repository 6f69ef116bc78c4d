"""`plan CONFIG --tokenizer T` for Axolotl configs: each row's tokens and supervised tokens as Axolotl 0.19's
`chat_template` strategy (ChatTemplateStrategy._tokenize_single_prompt) makes them.

A conversation is rendered with the chat template (the tokenizer's own for `chat_template: tokenizer_default`, or
`chat_template_jinja`) and tokenized without special tokens. Each turn that trains (`train_on_inputs`, or its role in
`roles_to_train`, default assistant) is located in characters the way Axolotl's `_find_turn_from_text` does: the turn's
content is replaced by each of two placeholders, the span where the renders differ is the content, and the tokens
whose offsets fall in that span are supervised. The first EOS token at most 3 tokens after a trained turn is supervised
too (`train_on_eos: turn`, the default; `all` trains it after every turn, `none` never).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from trainsteps.errors import InputError

SENTINELS = ("[[dummy_message]]", "zzdummymessagezz")
ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "model": "assistant", "system": "system",
         "tool": "tool"}


class AxolotlLengths:
    """Tokenizes rows for `configs.axolotl` (a `lengths_provider`)."""

    def __init__(self, tokenizer_path: str, threads: int | None = None, no_cache: bool = False) -> None:
        from trainsteps.data.tokenize import load

        self.tokenizer_path = tokenizer_path
        self.no_cache = no_cache
        self.base = load(tokenizer_path, threads, engine="tokenizers")  # offsets are needed
        self._template = None

    def template(self, source: str | None = None):
        from trainsteps.data.chat_template import ChatTemplate

        if source:
            base = ChatTemplate.from_tokenizer_config(self.tokenizer_path) if self._has_template() else None
            return ChatTemplate(source, base.special if base else {})
        if self._template is None:
            self._template = ChatTemplate.from_tokenizer_config(self.tokenizer_path)
        return self._template

    def _has_template(self) -> bool:
        try:
            from trainsteps.data.chat_template import ChatTemplate

            ChatTemplate.from_tokenizer_config(self.tokenizer_path)
        except InputError:
            return False
        return True

    def __call__(self, rows: list, entry: dict, options: dict, files: list[str] | None = None) -> list[tuple[int, int]]:
        """(tokens, supervised tokens) per row of one `type: chat_template` dataset entry, kept in the count cache
        under `files`, the tokenizer, the entry and these options."""
        from trainsteps.data import cache

        settings = {"framework": "axolotl-chat_template", "release": "0.19.0", "entry": entry, **options}
        return cache.cached_pairs([str(f) for f in files or []], self.tokenizer_path, settings, self.no_cache,
                                  lambda: self._encode(rows, entry, options), "axolotl-rows")

    def _encode(self, rows: list, entry: dict, options: dict) -> list[tuple[int, int]]:
        template = self.template(options.get("chat_template_jinja"))
        field = entry.get("field_messages") or "messages"
        mapping = entry.get("message_property_mappings") or {}
        role_key, content_key = mapping.get("role", "role"), mapping.get("content", "content")
        train_roles = [ROLES.get(r, r) for r in (entry.get("roles_to_train") or ["assistant"])]
        on_eos = entry.get("train_on_eos") or "turn"
        on_inputs = bool(options.get("train_on_inputs"))
        eos_id = self.base.tokenizer.token_to_id(self.base.eos_token) if self.base.eos_token else None
        result = []
        for row in rows:
            turns = _turns(row, field, role_key, content_key)
            result.append(self._row(template, turns, train_roles, on_eos, on_inputs, eos_id))
        return result

    def _row(self, template, turns, train_roles, on_eos, on_inputs, eos_id) -> tuple[int, int]:
        text = template.render(turns)
        encoding = self.base.tokenizer.encode(text, add_special_tokens=False)
        ids = encoding.ids
        starts = [s for s, _ in encoding.offsets]
        ends = [e for _, e in encoding.offsets]
        trained = [False] * len(ids)
        for index, turn in enumerate(turns):
            should = on_inputs or turn["role"] in train_roles
            if not should and on_eos != "all":
                continue
            span = _span(template, turns, index, text, starts, ends)
            if span is None:
                continue
            start, end = span
            if should:
                for i in range(start, end):
                    trained[i] = True
            if eos_id is not None and (on_eos == "all" or (on_eos == "turn" and should)):
                found = next((i for i in range(end, len(ids)) if ids[i] == eos_id), -1)
                if found != -1 and abs(found - end) <= 3:
                    trained[found] = True
        return len(ids), sum(trained)


def _span(template, turns, index, text, starts, ends) -> tuple[int, int] | None:
    """Axolotl's `_find_turn_from_text`: the token span of turn `index`'s content, or None when it is not in the render."""
    spans = []
    for sentinel in SENTINELS:
        dummy = turns[:index] + [{"role": turns[index]["role"], "content": sentinel}] + turns[index + 1:]
        spans.append(_diff(text, template.render(dummy)))
    char_start, char_end = min(s for s, _ in spans), max(e for _, e in spans)
    if char_end <= char_start:
        return None
    start, end = bisect_right(ends, char_start), bisect_left(starts, char_end)
    if start >= len(ends) or end <= start:
        return None
    return start, end


def _diff(full: str, dummy: str) -> tuple[int, int]:
    limit = min(len(full), len(dummy))
    start = 0
    while start < limit and full[start] == dummy[start]:
        start += 1
    suffix = 0
    while suffix < limit - start and full[-1 - suffix] == dummy[-1 - suffix]:
        suffix += 1
    return start, len(full) - suffix


def _turns(row, field: str, role_key: str, content_key: str) -> list[dict]:
    from trainsteps.data.rows import RowError

    value = row.get(field, row.get("conversations")) if isinstance(row, dict) else None
    if not isinstance(value, list):
        raise RowError(f"no `{field}` list in the row")
    turns = []
    for message in value:
        if not isinstance(message, dict):
            continue
        role = message.get(role_key, message.get("from"))
        content = message.get(content_key, message.get("value"))
        turns.append({"role": ROLES.get(role, role), "content": content if isinstance(content, str) else ""})
    return turns
