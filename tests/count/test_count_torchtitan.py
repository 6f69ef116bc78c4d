"""`count --packing torchtitan[@release]`: documents concatenated with bos and eos and cut into samples of seq_len,
against torchtitan's own HuggingFaceTextDataset run over the same documents at 0.2.2 and 0.3.0
(tools/record_torchtitan.py -> tests/fixtures/pretrain/torchtitan.json, its one-rank windows)."""

import json
from pathlib import Path

import pytest

from trainsteps.data.report import PackingRequest, PackingSettings, packed
from trainsteps.derivation import Derivation

from .conftest import TINY_TOKENIZER, text_rows, write_jsonl
from .test_count_cli import run

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "torchtitan.json").read_text())["releases"]
DOCUMENTS = [3, 17, 40, 1, 250, 9, 64, 128, 7, 31, 0, 12, 500, 2, 77]
"""The text tokens of the recorded documents (tools/record_torchtitan.py DOCS); torchtitan adds bos and eos."""


@pytest.mark.parametrize(("release", "window"), [pytest.param(r["version"], w, id=f"{r['version']}-{w['seq_len']}x{w['passes']}")
                                                 for r in RECORDED for w in r["windows"] if w["dp"] == 1])
def test_the_packed_count_is_the_samples_torchtitan_cuts_from_the_same_documents(release, window):
    assert window["per_rank"][0]["documents"] == len(DOCUMENTS) * window["passes"]  # the recording read these documents
    result = packed(PackingRequest.parse(f"torchtitan@{release}"), DOCUMENTS * window["passes"], Derivation(),
                    PackingSettings(cutoff_len=window["seq_len"]))
    assert result["sequences"] == window["per_rank"][0]["samples"]


def test_the_two_releases_cut_differently_and_the_newest_is_the_default():
    settings = PackingSettings(cutoff_len=8)
    by_release = {r: packed(PackingRequest.parse(f"torchtitan@{r}"), DOCUMENTS, Derivation(), settings)["sequences"]
                  for r in ("0.2.2", "0.3.0")}
    assert by_release["0.2.2"] < by_release["0.3.0"]
    assert packed(PackingRequest.parse("torchtitan"), DOCUMENTS, Derivation(), settings)["sequences"] == by_release["0.3.0"]


def test_count_packs_a_corpus_for_torchtitan_and_refuses_a_release_before_its_windows(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", text_rows(40))
    base = ("count", path, "--tokenizer", TINY_TOKENIZER, "--data-format", "text", "--no-special-tokens", "--cutoff-len", "16")
    code, out, err = run(*base, "--packing", "torchtitan", "--format", "json")
    assert code == 0, err
    entry = json.loads(out)["packing"][0]
    assert entry["framework"] == "torchtitan" and entry["version"] == "0.3.0" and entry["sequences"] > 0
    code, out, err = run(*base, "--packing", "torchtitan@0.1.0")
    assert code == 2 and out == "" and err.count("\n") <= 2 and "0.1.0" in err
