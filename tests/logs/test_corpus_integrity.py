"""The public-log corpus is well-formed: every log has a metadata pair that names its source and what its thread states."""

import json
import re
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "corpus"
KINDS = {"banner", "no_banner", "multinode", "chinese", "pretraining", "crash", "stream", "timing", "not_a_log"}
KEYS = {"id", "file", "source", "framework", "kinds", "facts", "fact_sources", "notes"}
OPTIONAL = {"companions"}  # other files of the same post or commit, stored as `<id>.<original name>`
STOPPED = {"finished", "crashed", "interrupted", "running"}
URL = re.compile(r"^https://\S+$")
HAN = re.compile(r"[\u4e00-\u9fff]")
MINIMUMS = {"no_banner": 15, "multinode": 8, "chinese": 8, "pretraining": 8, "crash": 5, "stream": 5, "timing": 20}

# A pair's metadata is `<id>.json`; a stored trainer_state.json is `<id>.trainer_state.json`.
METAS = sorted(p for p in CORPUS.glob("*.json") if "." not in p.stem)


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_corpus_is_present():
    assert len(METAS) >= 1


@pytest.mark.parametrize("path", METAS, ids=lambda p: p.stem)
def test_pair_is_well_formed(path: Path):
    meta = load(path)
    assert KEYS <= set(meta) <= KEYS | OPTIONAL
    assert meta["id"] == path.stem
    assert (CORPUS / meta["file"]).is_file()
    assert meta["file"].startswith(meta["id"] + ".")
    assert URL.match(meta["source"]), meta["source"]
    assert meta["kinds"] and set(meta["kinds"]) <= KINDS
    assert len(set(meta["kinds"])) == len(meta["kinds"])
    assert not {"banner", "no_banner"} <= set(meta["kinds"])
    assert set(meta["facts"]) == set(meta["fact_sources"])
    assert all(isinstance(quote, str) and quote for quote in meta["fact_sources"].values())
    if "stopped" in meta["facts"]:
        assert meta["facts"]["stopped"] in STOPPED
    if "crash" in meta["kinds"]:
        assert meta["facts"].get("stopped") == "crashed"
    assert isinstance(meta["notes"], str)
    if "companions" in meta:
        companions = meta["companions"]
        assert isinstance(companions, list) and companions
        assert len(set(companions)) == len(companions) and meta["file"] not in companions
        for name in companions:
            assert isinstance(name, str) and name.startswith(meta["id"] + "."), name
            assert (CORPUS / name).is_file(), name


@pytest.mark.parametrize("path", METAS, ids=lambda p: p.stem)
def test_chinese_kind_matches_the_text(path: Path):
    meta = load(path)
    text = (CORPUS / meta["file"]).read_bytes().decode("utf-8")
    assert ("chinese" in meta["kinds"]) == bool(HAN.search(text))


def test_every_log_file_has_a_pair():
    named = set()
    for path in METAS:
        meta = load(path)
        named |= {meta["file"], *meta.get("companions", [])}
    stored = {p.name for p in CORPUS.iterdir() if p.name != "README.md" and p not in METAS}
    assert stored == named


def test_corpus_reaches_its_minimums():
    real = [load(path) for path in METAS if "not_a_log" not in load(path)["kinds"]]
    counts = {kind: sum(kind in meta["kinds"] for meta in real) for kind in MINIMUMS}
    assert len(real) >= 60, len(real)
    assert all(counts[kind] >= n for kind, n in MINIMUMS.items()), counts
    assert len(METAS) > len(real), "keep a few not_a_log items"
