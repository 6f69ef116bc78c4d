"""A row -> the text segments a trainer tokenizes, each marked prompt (masked) or supervised (trained on).

Formats (names as in LLaMA-Factory's dataset_info.json, plus plain text and TRL's prompt/completion):

- text              : one text column; every token is trained on.
- alpaca            : instruction (+ "\\n" + input) is the user turn, output the assistant turn, history earlier turns.
- sharegpt          : a list of {from, value} turns with tags human/gpt/observation/function_call/system.
- openai            : a list of {role, content} messages (system/user/assistant/tool).
- prompt_completion : TRL's prompt + completion columns, no template.

Chat rows are rendered with a `Template`: each user/system turn is one prompt segment, each assistant turn is a
prompt segment (its header) plus a supervised segment (its content and end marker). Segments are tokenized one by
one, as LLaMA-Factory encodes turn by turn, so a token never straddles a boundary between prompt and response.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainsteps.data.rows import RowError
from trainsteps.data.sources import FormatHint
from trainsteps.errors import InputError

TOKEN_COUNT = "_num_tokens"  # rows already tokenized (Megatron .idx) carry their length under this key

FORMATS = ("auto", "text", "alpaca", "sharegpt", "openai", "prompt_completion")

LF_DEFAULT_COLUMNS = {"prompt": "instruction", "query": "input", "response": "output", "history": None,
                      "messages": "conversations", "system": None}
LF_SHAREGPT_TAGS = {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                    "observation_tag": "observation", "function_tag": "function_call", "system_tag": "system"}
OPENAI_TAGS = {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant",
               "observation_tag": "tool", "function_tag": "function_call", "system_tag": "system"}


@dataclass(frozen=True)
class Template:
    """How a conversation becomes text. `{content}` is replaced by the turn's text."""

    name: str
    """Name given to --template."""
    prefix: str = ""
    """Written once before the conversation (e.g. a BOS token); prompt."""
    system: str = "{content}"
    """A system turn; prompt."""
    user: str = "{content}"
    """A user (or observation/tool) turn; prompt."""
    assistant_header: str = ""
    """What opens an assistant turn; prompt (the model does not learn it)."""
    assistant: str = "{content}"
    """The assistant's text and end marker; supervised."""


TEMPLATES = {
    "chatml": Template("chatml", system="<|im_start|>system\n{content}<|im_end|>\n", user="<|im_start|>user\n{content}<|im_end|>\n",
                       assistant_header="<|im_start|>assistant\n", assistant="{content}<|im_end|>\n"),
    "llama3": Template("llama3", prefix="<|begin_of_text|>",
                       system="<|start_header_id|>system<|end_header_id|>\n\n{content}<|eot_id|>",
                       user="<|start_header_id|>user<|end_header_id|>\n\n{content}<|eot_id|>",
                       assistant_header="<|start_header_id|>assistant<|end_header_id|>\n\n", assistant="{content}<|eot_id|>"),
    "plain": Template("plain"),
}


@dataclass
class RowFormat:
    """Which columns and tags to read; fixed from the first row (or a dataset_info.json entry) for the whole count."""

    kind: str
    """text | alpaca | sharegpt | openai | prompt_completion"""
    columns: dict = field(default_factory=dict)
    """Role of a column -> column name (LLaMA-Factory names: prompt, query, response, history, messages, system; text; completion)."""
    tags: dict = field(default_factory=dict)
    """role_tag, content_tag and the role values (sharegpt/openai)."""

    def describe(self) -> str:
        relevant = {"alpaca": ("prompt", "query", "response", "history", "system"), "sharegpt": ("messages", "system"),
                    "openai": ("messages", "system")}.get(self.kind, tuple(self.columns))
        used = ", ".join(f"{k}={self.columns[k]}" for k in relevant if self.columns.get(k))
        usual = OPENAI_TAGS if self.kind == "openai" else LF_SHAREGPT_TAGS if self.kind == "sharegpt" else {}
        tags = ", ".join(f"{k}={v}" for k, v in (self.tags or {}).items() if usual.get(k) != v)  # only what differs from the usual
        return f"{self.kind} ({used})" + (f" tags ({tags})" if tags else "")


def resolve(hint: FormatHint, requested: str, first_row: dict, text_field: str | None) -> RowFormat:
    """The row format: the one requested, else the dataset_info.json entry's, else detected from the first row's keys."""
    if TOKEN_COUNT in first_row:  # already tokenized (Megatron .idx): the length is given
        return RowFormat("tokens", {"tokens": TOKEN_COUNT})
    kind = requested if requested != "auto" else (hint.formatting if hint.from_dataset_info else _detect(first_row, text_field))
    if kind == "text":
        column = text_field or _first_present(first_row, ("text", "content"))
        if column is None:
            raise _missing("text", first_row)
        return RowFormat("text", {"text": column})
    if kind == "prompt_completion":
        return RowFormat(kind, {"prompt": "prompt", "completion": "completion"})
    if kind == "alpaca":
        columns = _lf_columns(hint)
        return RowFormat("alpaca", columns)
    if kind in ("sharegpt", "openai"):
        columns = _lf_columns(hint)
        if not hint.from_dataset_info and columns["messages"] not in first_row:
            columns["messages"] = _first_present(first_row, ("messages", "conversations")) or columns["messages"]
        tags = dict(OPENAI_TAGS if kind == "openai" else LF_SHAREGPT_TAGS)
        if hint.from_dataset_info and hint.tags:
            tags = {k: hint.tags.get(k) for k in tags}  # LLaMA-Factory: tags not named in the entry become unset
        elif not hint.from_dataset_info:
            tags = _detect_tags(first_row.get(columns["messages"]), tags)
        return RowFormat(kind, columns, tags)
    raise InputError("count.error.unknown_format", "count.hint.unknown_format", format=kind, known=", ".join(FORMATS))


def _lf_columns(hint: FormatHint) -> dict:
    if hint.from_dataset_info and hint.columns:
        return {k: hint.columns.get(k) for k in LF_DEFAULT_COLUMNS}  # as DatasetAttr.join: unnamed columns are None
    return dict(LF_DEFAULT_COLUMNS)


def _detect(row: dict, text_field: str | None) -> str:
    if text_field:
        return "text"
    if "messages" in row:
        return "openai" if _looks_openai(row["messages"]) else "sharegpt"
    if "conversations" in row:
        return "openai" if _looks_openai(row["conversations"]) else "sharegpt"
    if "instruction" in row and "output" in row:
        return "alpaca"
    if "prompt" in row and "completion" in row:
        return "prompt_completion"
    if "text" in row or "content" in row:
        return "text"
    raise InputError("count.error.unknown_layout", "count.hint.unknown_layout", columns=", ".join(sorted(map(str, row))))


def _looks_openai(messages) -> bool:
    return isinstance(messages, list) and bool(messages) and isinstance(messages[0], dict) and "role" in messages[0]


def _detect_tags(messages, default: dict) -> dict:
    if _looks_openai(messages):
        return dict(OPENAI_TAGS)
    return default


def _first_present(row: dict, names) -> str | None:
    return next((n for n in names if n in row), None)


def _missing(field_name: str, row: dict, path: str = "", kind: str = "text") -> InputError:
    return InputError("count.error.missing_field", "count.hint.missing_field", field=field_name,
                      columns=", ".join(sorted(map(str, row))), path=path or "-", format=kind)


def check_columns(fmt: RowFormat, row: dict, path: str = "") -> None:
    """A column the format needs but the file lacks: name it and the columns that exist (before counting anything)."""
    needed = {"tokens": ["tokens"], "text": ["text"], "alpaca": ["prompt", "response"], "sharegpt": ["messages"], "openai": ["messages"],
              "prompt_completion": ["prompt", "completion"]}[fmt.kind]
    for role in needed:
        column = fmt.columns.get(role)
        if column and column not in row:
            raise _missing(column, row, path, fmt.kind)


def segments(fmt: RowFormat, row: dict, template: Template) -> list[tuple[str, bool]]:
    """The row as (text, supervised) pieces in order. Raises RowError for a row the framework would drop."""
    if fmt.kind == "text":
        if fmt.columns["text"] not in row:
            raise RowError(f"no field {fmt.columns['text']!r} (columns: {', '.join(sorted(map(str, row)))})")
        return [(_text(row[fmt.columns["text"]]), True)]
    if fmt.kind == "prompt_completion":
        return [(_text(row.get("prompt")), False), (_text(row.get("completion")), True)]
    system, turns = _alpaca_turns(fmt, row) if fmt.kind == "alpaca" else _chat_turns(fmt, row)
    if hasattr(template, "segments"):  # the tokenizer's own Jinja chat template
        return template.segments(system, turns)
    return render(template, system, turns)


def template_for(name: str, tokenizer_path: str | None):
    """A named template of TEMPLATES, or `tokenizer`: the tokenizer's own Jinja chat_template (`chat_template`)."""
    if name == "tokenizer":
        if not tokenizer_path:
            raise InputError("count.error.tokenizer_needed", "count.hint.tokenizer_needed")
        from trainsteps.data.chat_template import ChatTemplate

        return ChatTemplate.from_tokenizer_config(tokenizer_path)
    return TEMPLATES[name]


def piece_weights(flags):
    """Per-piece weights (numpy) of the token and supervised totals: a piece marked True/1 counts in both, False/0 in
    the tokens only, -1 (a chat template's prompt, see `chat_template`) is taken off the supervised total only."""
    import numpy as np

    kinds = np.asarray(flags, dtype=np.int64)
    return (kinds != -1).astype(np.int64), kinds


def turns(fmt: RowFormat, row: dict) -> tuple[str, list[tuple[str, str]]]:
    """(system, [(role, content), ...]) of a chat row, as LLaMA-Factory's converters read it; RowError if it drops the row."""
    return _alpaca_turns(fmt, row) if fmt.kind == "alpaca" else _chat_turns(fmt, row)


def render(template: Template, system: str, turns: list[tuple[str, str]]) -> list[tuple[str, bool]]:
    """Turns as (role, content), role in user/assistant; observation and function turns count as user and assistant."""
    out: list[tuple[str, bool]] = []
    head = template.prefix
    if system:
        head += template.system.format(content=system)
    for role, content in turns:
        if role == "assistant":
            out.append((head + template.assistant_header, False))
            head = ""
            out.append((template.assistant.format(content=content), True))
        else:
            head += template.user.format(content=content)
    if head:
        out.append((head, False))
    return [(text, sup) for text, sup in out if text]


def _text(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RowError(f"a {type(value).__name__} where text was expected")
    return value


def _alpaca_turns(fmt: RowFormat, row: dict) -> tuple[str, list[tuple[str, str]]]:
    """LLaMA-Factory AlpacaDatasetConverter: history pairs, then instruction + "\\n" + input, then output."""
    c = fmt.columns
    turns: list[tuple[str, str]] = []
    history = row.get(c["history"]) if c.get("history") else None
    if isinstance(history, list):
        for pair in history:
            turns += [("user", _text(pair[0])), ("assistant", _text(pair[1]))]
    query = [row[c[k]] for k in ("prompt", "query") if c.get(k) and row.get(c[k])]
    turns.append(("user", "\n".join(_text(q) for q in query)))
    response = row.get(c["response"]) if c.get("response") else None
    if not isinstance(response, str):
        raise RowError("no text response (LLaMA-Factory drops the row)")
    turns.append(("assistant", response))
    system = _text(row.get(c["system"])) if c.get("system") else ""
    return system, turns


def _chat_turns(fmt: RowFormat, row: dict) -> tuple[str, list[tuple[str, str]]]:
    """LLaMA-Factory Sharegpt/OpenAI converters: optional leading system turn, then strictly alternating turns, even count."""
    t, c = fmt.tags, fmt.columns
    messages = row.get(c["messages"])
    if not isinstance(messages, list):
        raise RowError(f"column {c['messages']!r} is not a list of messages")
    try:
        if messages and t.get("system_tag") and messages[0][t["role_tag"]] == t["system_tag"]:
            system, messages = _text(messages[0][t["content_tag"]]), messages[1:]
        else:
            system = _text(row.get(c["system"])) if c.get("system") else ""
        odd = (t.get("user_tag"), t.get("observation_tag"))
        even = (t.get("assistant_tag"), t.get("function_tag"))
        turns = []
        for index, message in enumerate(messages):
            role = message[t["role_tag"]]
            if role not in (odd, even)[index % 2]:
                raise RowError(f"turn {index + 1} has role {role!r} out of order (LLaMA-Factory drops the row)")
            turns.append(("assistant" if index % 2 else "user", _text(message[t["content_tag"]])))
    except (KeyError, TypeError) as exc:
        raise RowError(f"a message lacks {exc}") from exc
    if len(turns) % 2 or not turns:
        raise RowError(f"{len(turns)} turns, not a whole number of user/assistant pairs (LLaMA-Factory drops the row)")
    return system, turns
