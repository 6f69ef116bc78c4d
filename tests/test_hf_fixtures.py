"""The engine equals every run of the real Trainer recorded by tools/record_hf.py.

Each fixture file holds one transformers release; each run is the real banner and what the
real loop did. Regenerate with the command in the file's "regenerate" field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import trainsteps

from .conftest import FIXTURES, load_json, recorded_runs
from .hf_compare import assert_engine_matches

FILES = sorted((FIXTURES / "hf").glob("transformers-*.json"))


def test_fixtures_cover_every_family_with_enough_cases():
    versions = {load_json(p)["transformers"] for p in FILES}
    families = {trainsteps.plan(num_examples=10, transformers=v).family for v in versions}
    assert families >= {"4.30", "4.31-4.45", "4.46", "4.47-4.51", "4.52-4.56", "4.57+"}
    assert all(len(load_json(p)["runs"]) >= 40 for p in FILES)


def test_every_family_has_its_first_and_last_release_and_three_in_all_recorded():
    from trainsteps.frameworks.hf.log_lines import all_releases

    recorded = {load_json(p)["transformers"] for p in FILES}
    by_family: dict[str, list[str]] = {}
    for release in all_releases():  # oldest first
        by_family.setdefault(trainsteps.plan(num_examples=10, transformers=release).family, []).append(release)
    for family, releases in by_family.items():
        mine = [r for r in releases if r in recorded]
        assert releases[0] in recorded and releases[-1] in recorded, (family, releases[0], releases[-1])
        assert len(mine) >= 3, (family, mine)


@pytest.mark.parametrize("version, run", recorded_runs(FILES))
def test_engine_equals_the_recorded_run(version, run):
    assert_engine_matches(version, run)


def test_fixture_files_say_how_to_regenerate_them():
    for path in FILES:
        assert "tools/record_hf.py" in load_json(path)["regenerate"], Path(path).name
