"""The banner line numbers of each release (frameworks/hf/log_lines.py)."""

from trainsteps.frameworks.hf.log_lines import BANNER_LINES, OFFSETS, all_releases, layout_of, releases_for_lines
from trainsteps.frameworks.hf.releases import FAMILIES


def test_every_row_is_self_consistent():
    for header, params, releases in BANNER_LINES:
        assert header + OFFSETS[layout_of(releases[0])]["trainable_parameters"] == params


def test_each_release_appears_once_and_has_a_family():
    releases = all_releases()
    assert len(releases) == len(set(releases))
    for r in releases:
        FAMILIES.at(r)


def test_lines_seen_in_the_wild():
    assert releases_for_lines({"header": 2128}) == ["4.42.0", "4.42.1", "4.42.2", "4.42.3", "4.42.4"]
    assert releases_for_lines({"num_examples": 2406, "trainable_parameters": 2414}) == ["4.49.0"]
    assert releases_for_lines({"header": 1618, "update_steps_per_epoch": 1621}) == ["5.23.0", "5.24.0"]
    assert releases_for_lines({"num_examples": 2406, "header": 2406}) == []
