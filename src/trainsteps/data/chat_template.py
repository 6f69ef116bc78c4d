"""A tokenizer's own Jinja `chat_template` (tokenizer_config.json), rendered the way transformers' `apply_chat_template`
renders it: jinja2's ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the loopcontrols extension,
`tojson` that keeps non-ASCII, `raise_exception` and `strftime_now` globals, and the tokenizer's special tokens
(bos_token, eos_token, ...) as variables. TRL and Axolotl train on this text.

A row becomes two texts: the whole conversation, and the conversation before the last assistant turn rendered with
`add_generation_prompt=True`. The tokens are those of the whole text; the supervised ones are the tokens after that
prompt (TRL's completion-only loss: completion = prompt+completion minus prompt).
"""

from __future__ import annotations

import functools
import json
from datetime import datetime

from trainsteps.errors import InputError

SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")


@functools.lru_cache(maxsize=8)
def _compiled(source: str):
    try:
        from jinja2 import TemplateError
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as exc:
        raise InputError("count.error.extra_missing", "count.hint.extra_missing", module="jinja2") from exc

    def raise_exception(message):
        raise TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(source)


class ChatTemplate:
    """One tokenizer's chat template and special tokens."""

    name = "tokenizer"

    def __init__(self, source: str, special: dict) -> None:
        self.source = source
        self.special = {k: v for k, v in special.items() if v is not None}

    @classmethod
    def from_tokenizer_config(cls, tokenizer_path: str) -> ChatTemplate:
        import os

        folder = tokenizer_path if os.path.isdir(tokenizer_path) else os.path.dirname(tokenizer_path)
        path = os.path.join(folder, "tokenizer_config.json")
        config = {}
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
        source = config.get("chat_template")
        jinja_file = os.path.join(folder, "chat_template.jinja")
        if source is None and os.path.isfile(jinja_file):
            with open(jinja_file, encoding="utf-8") as f:
                source = f.read()
        if isinstance(source, list):  # named templates: transformers uses "default"
            source = next((t["template"] for t in source if t.get("name") == "default"), None)
        if not source:
            raise InputError("chat.error.no_template", "chat.hint.no_template", path=folder)
        special = {k: v.get("content") if isinstance(v, dict) else v for k, v in config.items() if k in SPECIAL_KEYS}
        return cls(source, special)

    def render(self, messages: list[dict], add_generation_prompt: bool = False) -> str:
        from jinja2 import TemplateError

        try:
            return _compiled(self.source).render(messages=messages, add_generation_prompt=add_generation_prompt, **self.special)
        except TemplateError as exc:
            from trainsteps.data.rows import RowError

            raise RowError(f"the chat template refuses the row: {exc}") from exc

    def segments(self, system: str, turns: list[tuple[str, str]]) -> list[tuple[str, int]]:
        """(text, kind) pieces for the count: kind 1 = counted and supervised, -1 = its tokens are taken off the
        supervised total (the prompt), as count.py weighs them."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": r, "content": c} for r, c in turns]
        last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=None)
        whole = self.render(messages)
        if last is None:
            return [(whole, 0)]
        prompt = self.render(messages[:last], add_generation_prompt=True)
        return [(whole, 1), (prompt, -1)]
