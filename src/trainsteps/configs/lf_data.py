"""LLaMA-Factory data on disk: `dataset_info.json` entries and the rows of their local files.

For each row we find what LLaMA-Factory's converters decide without a tokenizer: whether the row survives
(alpaca: the response is a string; sharegpt/openai: roles alternate and the turn count is even) and how many
characters it holds, from which token lengths are estimated when no tokenizer is given.
"""

from __future__ import annotations

import csv
import json
import pathlib
from dataclasses import dataclass

from trainsteps.configs.files import find_local, reachable, read_config
from trainsteps.errors import InputError

DATA_CONFIG = "dataset_info.json"
_TEXT_SUFFIXES = (".json", ".jsonl", ".csv", ".txt")
_ARROW_SUFFIXES = (".parquet", ".arrow")

# Token estimate from characters: (low, high) tokens per character, and chat-template tokens per row/turn.
ASCII_TOKENS_PER_CHAR = (1 / 5.0, 1 / 2.5)
CJK_TOKENS_PER_CHAR = (0.6, 1.5)
TEMPLATE_TOKENS_PER_TURN = (3, 12)


@dataclass(slots=True)
class RowFacts:
    """What is known about the rows of one dataset without a tokenizer."""

    valid: list[bool]
    """Whether LLaMA-Factory keeps each row."""
    low: list[int]
    """Lower estimate of each row's tokens (before truncation)."""
    high: list[int]
    """Upper estimate of each row's tokens."""


def load_dataset_info(dataset_dir: pathlib.Path) -> tuple[dict, pathlib.Path]:
    path = dataset_dir / DATA_CONFIG
    if find_local(str(path), [pathlib.Path()]) is None:
        raise InputError("configs.error.lf_no_dataset_info", "configs.hint.lf_no_dataset_info", path=str(path))
    return read_config(path).data, path


def dataset_entry(info: dict, info_path: pathlib.Path, name: str) -> dict:
    if name not in info:
        known = ", ".join(sorted(info)[:8]) + (", ..." if len(info) > 8 else "")
        raise InputError("configs.error.lf_unknown_dataset", "configs.hint.lf_unknown_dataset", name=name, path=str(info_path), known=known)
    entry = info[name]
    if not isinstance(entry, dict):
        raise InputError("configs.error.lf_bad_entry", "configs.hint.lf_unknown_dataset", name=name, path=str(info_path), known="")
    return entry


def entry_source(entry: dict) -> str:
    """Where LLaMA-Factory loads the entry from, in its priority order."""
    for key, source in (("hf_hub_url", "hub"), ("ms_hub_url", "hub"), ("om_hub_url", "hub"), ("script_url", "script"),
                        ("cloud_file_name", "cloud"), ("file_name", "file")):
        if key in entry:
            return source
    return "missing"


def data_files(dataset_dir: pathlib.Path, entry: dict, name: str) -> list[pathlib.Path]:
    path = find_local(entry["file_name"], [dataset_dir], directory_too=True)
    if path is None:
        raise InputError("configs.error.lf_missing_file", "configs.hint.lf_missing_file", name=name, path=str(dataset_dir / str(entry["file_name"])))
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _TEXT_SUFFIXES + _ARROW_SUFFIXES)
        if not files:
            raise InputError("configs.error.lf_missing_file", "configs.hint.lf_missing_file", name=name, path=str(path))
        return files
    if not path.is_file():
        raise InputError("configs.error.lf_missing_file", "configs.hint.lf_missing_file", name=name, path=str(path))
    return [path]


def read_rows(path: pathlib.Path) -> list:
    """Rows of a JSON (array or lines), JSONL, CSV or text file; Parquet/Arrow need pyarrow (the `data` extra).
    A file that cannot be read (not UTF-8, damaged, a name too long for the system) is one InputError naming it."""
    try:
        return _rows(path)
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError("configs.error.not_text", "configs.hint.data_unreadable", path=str(path), offset=exc.start) from None
    except (OSError, ValueError, EOFError, RecursionError, MemoryError) as exc:
        raise InputError("configs.error.data_unreadable", "configs.hint.data_unreadable", path=str(path), detail=_short(exc)) from None
    except Exception as exc:  # pyarrow raises its own types for damaged files
        if type(exc).__module__.split(".")[0] != "pyarrow":
            raise
        raise InputError("configs.error.data_unreadable", "configs.hint.data_unreadable", path=str(path), detail=_short(exc)) from None


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def _rows(path: pathlib.Path) -> list:
    if not reachable(path):
        raise InputError("configs.error.data_unreadable", "configs.hint.data_unreadable", path=str(path), detail="outside the posted files")
    suffix = path.suffix.lower()
    if suffix in _ARROW_SUFFIXES:
        return _read_arrow(path)
    text = path.read_text(encoding="utf-8-sig")
    if suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if suffix == ".txt":
        return [{"text": line} for line in text.splitlines() if line.strip()]
    stripped = text.lstrip()
    if suffix == ".json" and stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError("configs.error.json", "configs.hint.json", path=str(path), line=exc.lineno, column=exc.colno, detail=exc.msg) from None
        except RecursionError:
            raise InputError("configs.error.json", "configs.hint.json", path=str(path), line=0, column=0, detail="nested too deeply") from None
        return data if isinstance(data, list) else [data]
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError("configs.error.json", "configs.hint.json", path=str(path), line=number, column=exc.colno, detail=exc.msg) from None
        except RecursionError:
            raise InputError("configs.error.json", "configs.hint.json", path=str(path), line=number, column=0, detail="nested too deeply") from None
    return rows


def _read_arrow(path: pathlib.Path) -> list:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("configs.error.needs_pyarrow", "configs.hint.needs_pyarrow", path=str(path)) from None
    if path.suffix.lower() == ".parquet":
        return pq.read_table(path).to_pylist()
    import pyarrow as pa

    with pa.memory_map(str(path)) as source:
        try:
            table = pa.ipc.open_stream(source).read_all()
        except pa.ArrowInvalid:
            table = pa.ipc.open_file(source).read_all()
        table.validate(full=True)  # offsets checked against the buffers before a value is read (a damaged file: SIGBUS)
        return table.to_pylist()


def row_facts(rows: list, entry: dict, stage: str) -> RowFacts:
    formatting = entry.get("formatting", "alpaca")
    columns = entry.get("columns") or {}
    tags = entry.get("tags") or {}
    judge = _alpaca if formatting == "alpaca" else _sharegpt
    valid, low, high = [], [], []
    ranking = bool(entry.get("ranking"))
    for row in rows:
        ok, texts = judge(row if isinstance(row, dict) else {}, columns, tags, ranking)
        if stage == "pt":
            ok = True  # pretraining keeps every row's text
        valid.append(ok)
        lo, hi = token_range(texts)
        low.append(lo)
        high.append(hi)
    return RowFacts(valid, low, high)


def _alpaca(row: dict, columns: dict, tags: dict, ranking: bool) -> tuple[bool, list[str]]:
    prompt, query = columns.get("prompt", "instruction"), columns.get("query", "input")
    response, system, history = columns.get("response", "output"), columns.get("system"), columns.get("history")
    texts = [row.get(c) for c in (prompt, query, system) if c and isinstance(row.get(c), str)]
    if history and isinstance(row.get(history), list):
        texts += [str(part) for pair in row[history] for part in (pair if isinstance(pair, list) else [pair])]
    if ranking:
        chosen, rejected = row.get(columns.get("chosen", "chosen")), row.get(columns.get("rejected", "rejected"))
        return isinstance(chosen, str) and isinstance(rejected, str), texts + [t for t in (chosen, rejected) if isinstance(t, str)]
    answer = row.get(response) if response else None
    if isinstance(answer, str):
        texts.append(answer)
        return True, texts
    return False, texts


def _sharegpt(row: dict, columns: dict, tags: dict, ranking: bool) -> tuple[bool, list[str]]:
    role, content = tags.get("role_tag", "from"), tags.get("content_tag", "value")
    user, assistant = tags.get("user_tag", "human"), tags.get("assistant_tag", "gpt")
    observation, function = tags.get("observation_tag", "observation"), tags.get("function_tag", "function_call")
    system_tag = tags.get("system_tag", "system")
    messages = row.get(columns.get("messages", "conversations"))
    if not isinstance(messages, list):
        return False, []
    texts = [str(m.get(content, "")) for m in messages if isinstance(m, dict)]
    if len(texts) != len(messages):
        return False, texts
    if system_tag and messages and messages[0].get(role) == system_tag:
        messages = messages[1:]
    accept = ((user, observation), (assistant, function))
    for i, message in enumerate(messages):
        if message.get(role) not in accept[i % 2]:
            return False, texts
    if (not ranking and len(messages) % 2) or (ranking and len(messages) % 2 == 0):
        return False, texts
    # the processors keep rows whose prompt has an odd number of turns and one response
    return (len(messages) > 0) if not ranking else True, texts


def token_range(texts: list[str]) -> tuple[int, int]:
    """(low, high) token estimate of some texts from their characters, plus chat-template tokens per turn."""
    ascii_chars = cjk = 0
    for text in texts:
        for ch in text:
            if ord(ch) >= 0x2E80:
                cjk += 1
            else:
                ascii_chars += 1
    turns = max(len(texts), 1)
    low = ascii_chars * ASCII_TOKENS_PER_CHAR[0] + cjk * CJK_TOKENS_PER_CHAR[0] + turns * TEMPLATE_TOKENS_PER_TURN[0]
    high = ascii_chars * ASCII_TOKENS_PER_CHAR[1] + cjk * CJK_TOKENS_PER_CHAR[1] + turns * TEMPLATE_TOKENS_PER_TURN[1]
    return max(int(low), 1), max(int(high + 0.999), 1)


def row_texts(row) -> list[str]:
    """The strings of a row of any layout: top-level strings and the contents of message lists."""
    if not isinstance(row, dict):
        return []
    texts = [v for v in row.values() if isinstance(v, str)]
    for value in row.values():
        if isinstance(value, list):
            texts += [str(m.get("content", m.get("value", ""))) for m in value if isinstance(m, dict)]
    return texts
