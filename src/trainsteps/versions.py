"""Release numbers and timelines: how version differences are stored as data.

A framework rule that changed between releases is a `Timeline`: a list of
(first release, value) pairs. Looking up a release returns the value of the
newest entry that starts at or before it, so a new regime is one new row.
"""

from __future__ import annotations

import re

from trainsteps.record import record

_VERSION_PATTERN = r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.\-+]?(?:dev|rc|a|b|post)\d*)?(?:\+[\w.]+)?\s*$"  # compiled on first use (re caches it)


@record(frozen=True, order=True)
class Version:
    """A release number such as 4.52.4, compared numerically."""

    major: int
    minor: int = 0
    patch: int = 0

    @classmethod
    def parse(cls, text: str) -> Version:
        """Parse '4.52', '4.52.4', 'v4.52.4', '4.53.0.dev0'; raise ValueError otherwise."""
        parts = str(text).split(".")
        if 1 <= len(parts) <= 3 and all(part.isdigit() and part.isascii() for part in parts):
            return cls(*map(int, parts))  # the common case, without the regular expression
        match = re.match(_VERSION_PATTERN, str(text))
        if not match:
            raise ValueError(f"not a release number: {text!r}")
        major, minor, patch = (int(part) if part else 0 for part in match.groups())
        return cls(major, minor, patch)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


_PARSED: dict[str, Version] = {}
"""Release strings already parsed: the timelines are asked about the same few releases hundreds of times per explain."""


def as_version(value: str | Version) -> Version:
    if isinstance(value, Version):
        return value
    version = _PARSED.get(value) if type(value) is str else None
    if version is None:
        version = Version.parse(value)
        if type(value) is str and len(_PARSED) < 4096:  # bounded: a long-running server may be asked about any string
            _PARSED[value] = version
    return version


class Timeline:
    """Values that hold from a given release on; the newest applicable entry wins."""

    def __init__(self, name: str, entries: list[tuple[str, object]]):
        self.name = name
        self.entries = sorted(((Version.parse(start), value) for start, value in entries), key=lambda e: e[0])

    def at(self, version: str | Version) -> object:
        return self.entry(version)[1]

    def entry(self, version: str | Version) -> tuple[Version, object]:
        """The (first release, value) pair in force at `version`."""
        version = as_version(version)
        chosen = None
        for start, value in self.entries:
            if start > version:
                break
            chosen = (start, value)
        if chosen is None:
            raise ValueError(f"{self.name}: no rule before {self.entries[0][0]} (asked for {version})")
        return chosen

    def next_change(self, version: str | Version) -> Version | None:
        """The first release after `version` where this rule changes, if any."""
        version = as_version(version)
        return next((start for start, _ in self.entries if start > version), None)
