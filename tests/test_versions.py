"""Release numbers and timelines: how version differences are looked up."""

import pytest

from trainsteps.versions import Timeline, Version


@pytest.mark.parametrize(
    "text, expected",
    [("4.52.4", (4, 52, 4)), ("4.52", (4, 52, 0)), ("v5.23.0", (5, 23, 0)), ("4.53.0.dev0", (4, 53, 0)), ("4.46.0rc1", (4, 46, 0))],
)
def test_release_numbers_parse(text, expected):
    assert Version.parse(text) == Version(*expected)


@pytest.mark.parametrize("text", ["", "abc", "4.x", "four"])
def test_garbage_is_not_a_release(text):
    with pytest.raises(ValueError):
        Version.parse(text)


def test_a_timeline_returns_the_newest_rule_that_has_started():
    rule = Timeline("rounding", [("4.30.0", "floor"), ("4.52.0", "ceil")])
    assert rule.at("4.51.3") == "floor"
    assert rule.at("4.52.0") == "ceil"
    assert rule.at("9.0") == "ceil"
    assert rule.next_change("4.49.0") == Version(4, 52, 0)


def test_a_timeline_refuses_releases_before_its_first_rule():
    with pytest.raises(ValueError):
        Timeline("x", [("4.30.0", 1)]).at("4.29.9")
