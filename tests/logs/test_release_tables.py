"""The release tables explain fills on first use (logs/infer_release.py) agree with the family timeline they stand for."""

from trainsteps.frameworks.hf.log_lines import all_releases
from trainsteps.frameworks.hf.releases import FAMILIES
from trainsteps.logs.infer_release import family_of, newest_of
from trainsteps.versions import Version


def test_the_known_releases_are_listed_oldest_first():
    assert all_releases() == sorted(all_releases(), key=Version.parse)


def test_every_known_release_has_the_family_the_timeline_gives_it():
    assert all(family_of(release) is FAMILIES.at(release) for release in all_releases())


def test_each_family_s_newest_release_is_the_last_known_release_of_that_family():
    for _, family in FAMILIES.entries:
        assert newest_of(family) == [r for r in all_releases() if FAMILIES.at(r) is family][-1]


def test_a_release_no_banner_table_lists_still_has_its_family():
    assert family_of("4.44.3") is FAMILIES.at("4.44.3")
