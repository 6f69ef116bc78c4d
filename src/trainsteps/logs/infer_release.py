"""Which transformers releases a log allows, from its own text (pure: no I/O): the trainer.py line numbers of the
logger prefix, the banner's lines and their order, the level of the max_steps notice, a printed release, and the log's
date against the release dates.
"""

from __future__ import annotations

from trainsteps.frameworks.hf.log_lines import all_releases, release_key, releases_for_lines
from trainsteps.frameworks.hf.release_dates import RELEASE_DATES
from trainsteps.frameworks.hf.releases import FAMILIES, OLDEST, Family
from trainsteps.logs.infer_world import where
from trainsteps.logs.inference import (
    Finding,
    Inference,
    Known,
)
from trainsteps.versions import Version

# ---------------------------------------------------------------- releases from the text of the log

def _predates_the_oldest_release(inf: Inference, releases: list[str]) -> list[str]:
    """A banner stamped before the oldest modelled release came out was printed by an older one: the replay uses the
    oldest rules trainsteps has (the nearest to it), and says so."""
    oldest = str(OLDEST)
    date = inf.run.header_date
    if date is None or date >= RELEASE_DATES[oldest]:
        return releases
    nearest = [r for r in releases if family_of(r) is family_of(oldest)]
    inf.evidence.append(Finding("explain.ev.predates_releases" if nearest else "explain.ev.predates_releases_unfit",
                                {"date": date, "oldest": oldest, "released": RELEASE_DATES[oldest]}))
    return nearest or releases


def release_evidence(inf: Inference) -> None:
    run = inf.run
    releases = all_releases()
    lines = run.source_lines()
    if lines:
        by_lines = releases_for_lines(lines)
        if by_lines:
            releases = by_lines
            inf.evidence.append(Finding("explain.ev.lines", {"lines": _line_span(lines), "releases": summarize(by_lines)}))
        else:
            inf.evidence.append(Finding("explain.ev.lines_unknown", {"lines": _line_span(lines)}))
    if run.kind == "hf" and "update_steps_per_epoch" in run.banner:
        releases = [r for r in releases if Version.parse(r) >= Version(5, 3, 0)]
        inf.evidence.append(Finding("explain.ev.upe_line", {}))
    elif run.kind == "hf" and _adjacent(run.banner_order, "num_epochs", "per_device_batch"):
        releases = [r for r in releases if Version.parse(r) < Version(5, 3, 0)]
        inf.evidence.append(Finding("explain.ev.no_upe_line", {}))
    if run.kind == "hf" and "dataparallel_batch" in run.banner:
        releases = [r for r in releases if Version.parse(r) >= Version(4, 31, 0)]
        inf.evidence.append(Finding("explain.ev.dataparallel", {}))
    level = run.level_of_max_steps_notice
    if level in ("WARNING", "WARN"):
        releases = [r for r in releases if Version(4, 40, 0) <= Version.parse(r) < Version(4, 47, 0)]
        inf.evidence.append(Finding("explain.ev.notice_warning", {}))
    elif level == "INFO":
        releases = [r for r in releases if not Version(4, 40, 0) <= Version.parse(r) < Version(4, 47, 0)]
        inf.evidence.append(Finding("explain.ev.notice_info", {}))
    releases = _predates_the_oldest_release(inf, releases)
    printed = run.transformers_version
    if printed is not None:
        releases = _pin(inf, releases, str(printed.value), where(printed, run))
    inf.releases = releases


def _pin(inf: Inference, releases: list[str], printed: str, line: Finding) -> list[str]:
    """A release printed in the log outranks every guess: keep it (or the releases of its family when the table does
    not list it), unless the banner's own evidence rules it out, which is reported."""
    try:
        version = Version.parse(printed)
        family = family_of(printed)
    except (ValueError, KeyError):
        return releases
    if printed in releases:
        inf.evidence.append(Finding("explain.ev.printed_version", {"version": printed, "line": line}))
        return [printed]
    same_family = [r for r in releases if family_of(r) is family]
    if printed in all_releases() or not same_family:
        inf.evidence.append(Finding("explain.ev.printed_version_conflict", {"version": printed, "line": line,
                                                                           "releases": summarize(releases)}))
        return releases
    near = [r for r in same_family if Version.parse(r).major == version.major and Version.parse(r).minor == version.minor] or same_family
    inf.evidence.append(Finding("explain.ev.printed_version_family", {"version": printed, "line": line, "family": family.name,
                                                                     "releases": summarize(near)}))
    return near


def _adjacent(order: list[str], first: str, second: str) -> bool:
    return any(a == first and b == second for a, b in zip(order, order[1:], strict=False))


def _line_span(lines: dict[str, int]) -> str:
    values = sorted(set(lines.values()))
    return f"{values[0]}" if len(values) == 1 else f"{values[0]}-{values[-1]}"


def summarize(releases: list[str]) -> str:
    """`4.42.0-4.42.4`, or `4.50.0-4.50.3, 4.52.1-4.52.4` when the set has holes."""
    if not releases:
        return "-"
    known = all_releases()
    index = {r: i for i, r in enumerate(known)}
    ordered = sorted(set(releases), key=lambda r: index.get(r, -1))
    groups: list[list[str]] = [[ordered[0]]]
    for r in ordered[1:]:
        if index.get(r, -9) == index.get(groups[-1][-1], -9) + 1:
            groups[-1].append(r)
        else:
            groups.append([r])
    return ", ".join(g[0] if len(g) == 1 else f"{g[0]}-{g[-1]}" for g in groups)


def releases_known(releases: list[str]) -> Known:
    """One release, a contiguous run of releases as {min, max}, or the list when it has holes."""
    if len(releases) == 1:
        return Known(exact=releases[0])
    known = all_releases()
    positions = sorted(known.index(r) for r in releases if r in known)
    if positions and positions[-1] - positions[0] + 1 == len(positions):
        return Known(low=known[positions[0]], high=known[positions[-1]])
    return Known(choices=sorted(releases, key=Version.parse))


_FAMILY_OF: dict[str, Family] = {}
"""release -> its family: every known release's, filled in one pass on first use (explain asks for the family of every
known release several times per run), then releases asked about that no banner table lists."""
_NEWEST_OF: dict[str, str] = {}
"""family name -> its newest known release, filled with _FAMILY_OF."""


def family_of(version: str) -> Family:
    family = (_FAMILY_OF or _fill_families()).get(version)
    if family is None:
        family = FAMILIES.at(version)
        if len(_FAMILY_OF) < 4096:  # the known releases and a few asked-for ones: bounded all the same
            _FAMILY_OF[version] = family
    return family


def newest_of(family: Family) -> str:
    """The newest known release of a family."""
    if not _NEWEST_OF:
        _fill_families()
    return _NEWEST_OF[family.name]


def _fill_families() -> dict[str, Family]:
    """The family of every known release: the releases (oldest first) walked once beside the family timeline, instead of
    a walk of the timeline per release. Both tables are built whole, then put in place (a server's other thread never
    reads one half filled)."""
    global _FAMILY_OF, _NEWEST_OF
    starts = [(start.major, start.minor, start.patch) for start, _ in FAMILIES.entries]
    families: dict[str, Family] = {}
    newest: dict[str, str] = {}
    at = 0
    for release in all_releases():
        version = release_key(release)
        while at + 1 < len(starts) and starts[at + 1] <= version:
            at += 1
        if starts[at] <= version:  # a release older than the first family has none (FAMILIES.at refuses it)
            family = FAMILIES.entries[at][1]
            families[release] = family
            newest[family.name] = release
    _NEWEST_OF = newest
    _FAMILY_OF = {**_FAMILY_OF, **families}
    return _FAMILY_OF
