"""docs/errors.md is what trainsteps really prints for each bad input: every row is run here and compared."""

import pytest

from tests.errors_catalogue import DOC, SECTIONS, render, run

CASES = [case for cases in SECTIONS.values() for case in cases]


def test_the_catalogue_holds_at_least_60_cases():
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c.what for c in CASES])
def test_each_bad_input_gets_one_clear_line(case):
    code, line = run(case)
    if case.show is None:
        assert code == 2 and (line.startswith("error: ") or line.startswith("InputError: ")), line
        assert "unexpected internal error" not in line and "Traceback" not in line
        assert "⏎" not in line, "more than one line"
    else:
        assert code == 0 and case.show in line


def test_the_page_is_what_the_cases_print():
    results = {section: [(case, *run(case)) for case in cases] for section, cases in SECTIONS.items()}
    expected = render(results) + "\n"
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/errors.md is out of date: run `PYTHONPATH=src python -m tests.errors_catalogue --write`")
