"""The sparse reader's marker search (logs/reader.py `_find_marker`) finds what `bytes.find` finds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.logs.reader import _ANCHORS, SPARSE_MARKERS, _find_marker

_BYTES = st.lists(st.sampled_from([b"T", b"K", b":", b"r", b"o", b"\n", b"x", *SPARSE_MARKERS]), max_size=40).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(_BYTES, st.sampled_from(SPARSE_MARKERS), st.integers(0, 200))
def test_the_marker_search_finds_what_bytes_find_finds_from_any_start(data, marker, start):
    assert _find_marker(data, marker, start) == data.find(marker, start)


def test_past_its_anchor_places_the_marker_search_goes_on_from_the_last_one():
    for marker in SPARSE_MARKERS:
        data = b":TK" * _ANCHORS + marker + b"\n"  # more places of each anchor byte than are checked one by one
        assert _find_marker(data, marker, 0) == data.find(marker) == 3 * _ANCHORS
