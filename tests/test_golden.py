"""The human report is specified: each case of tests/golden/cases.txt prints exactly its golden file, en and zh.

An intended change of the text: `python tools/golden.py` rewrites the files; the diff is the review."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("golden", ROOT / "tools" / "golden.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


@pytest.mark.parametrize("lang", golden.LANGS)
@pytest.mark.parametrize("name, args", golden.cases(), ids=[name for name, _ in golden.cases()])
def test_the_report_is_its_golden_file(name, args, lang):
    expected = (golden.GOLDEN / f"{name}.{lang}.txt").read_text(encoding="utf-8")
    assert golden.render(args, lang) == expected, f"{name}.{lang}: run `python tools/golden.py` if the change is intended"


def test_every_golden_file_has_a_case():
    named = {f"{name}.{lang}.txt" for name, _ in golden.cases() for lang in golden.LANGS}
    assert {p.name for p in golden.GOLDEN.glob("*.txt") if p.name != "cases.txt"} == named
