"""RL prompt files: how many rows, and how many survive verl's `filter_overlong_prompts`.

verl's `RLHFDataset.maybe_filter_out_long_prompts` keeps a row when
`len(tokenizer.apply_chat_template(row[prompt_key], add_generation_prompt=True, tokenize=True)) <= max_prompt_length`.
transformers renders the tokenizer's chat template with jinja2 (a sandbox, `trim_blocks` and `lstrip_blocks`) and
encodes the text without special tokens; this module does the same with the `tokenizers` library and jinja2, so no
model library is imported. Heavy imports (pyarrow, tokenizers, jinja2) happen inside the functions.
"""

from __future__ import annotations

import json
import os
import pathlib

from trainsteps.errors import InputError


def prompt_rows(paths: list[str], max_rows: int | None = None) -> list[dict]:
    """Rows of verl train files (.parquet, .json, .jsonl), in order; `max_rows` keeps the first ones."""
    rows: list[dict] = []
    for path in paths:
        file = _existing(path)
        if file.suffix == ".parquet":
            rows.extend(_parquet().read_table(file).to_pylist())
        elif file.suffix in (".json", ".jsonl"):
            rows.extend(_json_rows(file))
        else:
            raise InputError("rl.error.data_format", "rl.hint.data_format", path=path)
        if max_rows is not None and len(rows) >= max_rows:
            return rows[:max_rows]
    return rows


def count_rows(paths: list[str]) -> int:
    """Rows of the train files without reading their contents (Parquet metadata; JSON lines counted)."""
    total = 0
    for path in paths:
        file = _existing(path)
        if file.suffix == ".parquet":
            total += _parquet().ParquetFile(file).metadata.num_rows
        else:
            total += len(_json_rows(file))
    return total


def chat_template(tokenizer_path: str, template_path: str | None) -> tuple[str, dict]:
    """The chat template and the special-token strings it may use (`bos_token`, `eos_token`, ...), from
    `--chat-template` (a tokenizer_config.json or a .jinja file) or the tokenizer_config.json beside the tokenizer."""
    folder = tokenizer_path if os.path.isdir(tokenizer_path) else os.path.dirname(tokenizer_path)
    path = template_path or os.path.join(folder, "tokenizer_config.json")
    if not os.path.isfile(path):
        raise InputError("rl.error.no_template", "rl.hint.no_template", path=path)
    text = pathlib.Path(path).read_text(encoding="utf-8")
    if not path.endswith(".json"):
        return text, {}
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise InputError("rl.error.no_template", "rl.hint.no_template", path=f"{path} ({exc})") from None
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: transformers uses "default"
        template = next((t["template"] for t in template if t.get("name") == "default"), None)
    if not isinstance(template, str):
        raise InputError("rl.error.no_template", "rl.hint.no_template", path=path)
    tokens = {k: (v.get("content") if isinstance(v, dict) else v) for k, v in config.items() if k.endswith("_token")}
    return template, tokens


def prompt_lengths(rows: list[dict], tokenizer_path: str, template_path: str | None, prompt_key: str = "prompt") -> list[int]:
    """Tokens of each row's prompt as verl's filter counts them (chat template, generation prompt, no special tokens)."""
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from trainsteps.data.tokenize import load

    template_text, tokens = chat_template(tokenizer_path, template_path)

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(template_text)
    texts = []
    for index, row in enumerate(rows):
        messages = row.get(prompt_key)
        if not isinstance(messages, list):
            raise InputError("rl.error.prompt_column", "rl.hint.prompt_column", key=prompt_key, row=index)
        texts.append(template.render(messages=messages, add_generation_prompt=True, **tokens))
    return load(tokenizer_path).lengths(texts)


def kept_after_filter(lengths: list[int], max_prompt_length: int) -> int:
    """`dataframe.filter(lambda doc: doc2len(doc) <= max_prompt_length)`."""
    return sum(1 for n in lengths if n <= max_prompt_length)


def _existing(path: str) -> pathlib.Path:
    file = pathlib.Path(os.path.expanduser(path))
    if not file.is_file():
        raise InputError("rl.error.data_missing", "rl.hint.data_missing", path=path)
    return file


def _parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("count.error.extra_missing", "count.hint.extra_missing", module="pyarrow") from None
    return pq


def _json_rows(file: pathlib.Path) -> list[dict]:
    text = file.read_text(encoding="utf-8")
    if file.suffix == ".json" and text.lstrip().startswith("["):
        data = json.loads(text)
        return [r for r in data if isinstance(r, dict)]
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise InputError("rl.error.data_line", "rl.hint.data_line", path=str(file), line=number) from None
    return rows
