"""A few cases run live against the newest transformers, so a release that changes the rules is noticed.

tools/live_check.sh installs the newest release, records the sample cases with tools/record_hf.py into
$TRAINSTEPS_LIVE_DIR and runs this file. Without that directory the test is skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import recorded_runs
from .hf_compare import assert_engine_matches

LIVE_DIR = os.environ.get("TRAINSTEPS_LIVE_DIR")


def _live_runs():
    if not LIVE_DIR:
        return []
    return recorded_runs(sorted(Path(LIVE_DIR).glob("transformers-*.json")))


@pytest.mark.live
@pytest.mark.skipif(not LIVE_DIR, reason="TRAINSTEPS_LIVE_DIR is not set (run tools/live_check.sh)")
def test_live_sample_was_recorded():
    assert len(_live_runs()) >= 5


@pytest.mark.live
@pytest.mark.parametrize("version, run", _live_runs())
def test_engine_equals_the_newest_release(version, run):
    assert_engine_matches(version, run)
