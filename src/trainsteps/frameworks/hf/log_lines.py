"""Where each release's `trainer.py` prints the training banner: line numbers as DATA.

A log written with a `%(filename)s:%(lineno)d` formatter (LLaMA-Factory, the transformers
example scripts) shows e.g. `[INFO|trainer.py:2406] ... Num examples = 1,047`. The line of
each banner label is fixed by the release, so a few of them name the release (or a
handful of releases) that wrote the log.

`BANNER_LINES` maps the line of `***** Running training *****` and the line of
`Number of trainable parameters` to the releases printing them there. Every other label
sits at a fixed offset from the first (`OFFSETS`, by banner layout). Source: the released
wheels' `transformers/trainer.py` (`pip download --no-deps transformers==X`, grep the
`logger.info` calls); spot-checked on 4.42.0, 4.44.2, 4.49.0, 4.50.0, 5.3.0 and 5.23.0.
Regenerate or extend with `python tools/hf_log_lines.py 4.30.0 ... 5.24.0`.
"""

from __future__ import annotations

from trainsteps.versions import Version

# (line of "Running training", line of "Number of trainable parameters", releases)
BANNER_LINES: list[tuple[int, int, tuple[str, ...]]] = [
    (1777, 1784, ("4.30.0",)),
    (1786, 1793, ("4.30.1", "4.30.2")),
    (1686, 1695, ("4.31.0",)),
    (1714, 1723, ("4.32.0", "4.32.1")),
    (1712, 1721, ("4.33.0", "4.33.1", "4.33.2")),
    (1715, 1724, ("4.33.3",)),
    (1760, 1769, ("4.34.0", "4.34.1")),
    (1723, 1732, ("4.35.0", "4.35.1", "4.35.2")),
    (1706, 1715, ("4.36.0", "4.36.1", "4.36.2")),
    (1721, 1730, ("4.37.0", "4.37.1", "4.37.2")),
    (1812, 1821, ("4.38.0", "4.38.1", "4.38.2")),
    (1969, 1978, ("4.39.0", "4.39.1", "4.39.2", "4.39.3")),
    (2048, 2057, ("4.40.0", "4.40.1", "4.40.2")),
    (2078, 2087, ("4.41.0", "4.41.1", "4.41.2")),
    (2128, 2137, ("4.42.0", "4.42.1", "4.42.2", "4.42.3", "4.42.4")),
    (2134, 2143, ("4.43.0", "4.43.1", "4.43.2", "4.43.3", "4.43.4", "4.44.1", "4.44.2")),
    (2144, 2153, ("4.44.0",)),
    (2243, 2252, ("4.45.0", "4.45.1", "4.45.2")),
    (2313, 2322, ("4.46.0", "4.46.1")),
    (2314, 2323, ("4.46.2", "4.46.3")),
    (2361, 2370, ("4.47.0",)),
    (2362, 2371, ("4.47.1",)),
    (2369, 2378, ("4.48.0", "4.48.1", "4.48.2", "4.48.3")),
    (2405, 2414, ("4.49.0",)),
    (2409, 2418, ("4.50.0", "4.50.1", "4.50.2", "4.50.3", "4.52.1", "4.52.2", "4.52.3", "4.52.4")),
    (2414, 2423, ("4.51.0", "4.51.1", "4.51.2", "4.51.3")),
    (2403, 2412, ("4.53.0",)),
    (2402, 2411, ("4.53.1", "4.53.2", "4.53.3")),
    (2432, 2441, ("4.54.0", "4.54.1")),
    (2433, 2442, ("4.55.0", "4.55.1", "4.55.2", "4.55.3", "4.55.4")),
    (2523, 2532, ("4.56.0", "4.56.1", "4.56.2")),
    (2519, 2528, ("4.57.1", "4.57.2", "4.57.3", "4.57.4", "4.57.5", "4.57.6")),
    (2383, 2392, ("5.0.0",)),
    (2384, 2393, ("5.1.0",)),
    (1587, 1596, ("5.2.0",)),
    (1466, 1476, ("5.3.0", "5.4.0", "5.5.0", "5.5.1", "5.5.2", "5.5.3")),
    (1467, 1477, ("5.5.4",)),
    (1469, 1479, ("5.6.0", "5.6.1", "5.6.2", "5.7.0", "5.8.0", "5.8.1", "5.9.0")),
    (1475, 1485, ("5.10.1", "5.10.2", "5.10.4", "5.11.0", "5.12.0", "5.12.1", "5.13.0", "5.13.1")),
    (1479, 1489, ("5.14.0", "5.14.1")),
    (1491, 1501, ("5.15.0", "5.15.1")),
    (1500, 1510, ("5.16.0", "5.16.1")),
    (1562, 1572, ("5.17.0",)),
    (1591, 1601, ("5.18.0",)),
    (1604, 1614, ("5.19.0",)),
    (1601, 1611, ("5.20.0", "5.20.1", "5.20.2", "5.21.0", "5.21.1", "5.22.0", "5.22.1", "5.22.2")),
    (1618, 1628, ("5.23.0", "5.24.0")),
]

# Offset of each banner label from the "Running training" line, by layout (see banner.py).
_COMMON = {"header": 0, "num_examples": 1, "num_epochs": 2}
OFFSETS: dict[str, dict[str, int]] = {
    # 4.30: eight consecutive logger.info calls
    "v4.30": {**_COMMON, "per_device_batch": 3, "total_batch": 4, "grad_accum": 5, "max_steps": 6, "trainable_parameters": 7},
    # 4.31-5.2: the DataParallel `if` and its line sit between "Instantaneous" and "Total train batch"
    "v4.31": {**_COMMON, "per_device_batch": 3, "dataparallel_batch": 5, "total_batch": 6, "grad_accum": 7, "max_steps": 8,
              "trainable_parameters": 9},
    # 5.3+: "Num update steps per epoch" after "Num Epochs"
    "v5.3": {**_COMMON, "update_steps_per_epoch": 3, "per_device_batch": 4, "dataparallel_batch": 6, "total_batch": 7,
             "grad_accum": 8, "max_steps": 9, "trainable_parameters": 10},
}


def layout_of(version: str) -> str:
    v = Version.parse(version)
    if v < Version(4, 31, 0):
        return "v4.30"
    return "v5.3" if v >= Version(5, 3, 0) else "v4.31"


def all_releases() -> list[str]:
    """Every release in the table, oldest first (sorted once: explain asks for each run it reads)."""
    global _ALL_RELEASES
    if _ALL_RELEASES is None:
        # the table's releases are plain `4.52.4` strings: their numbers sort them (a Version each costs 3x more)
        _ALL_RELEASES = tuple(sorted((r for _, _, rels in BANNER_LINES for r in rels), key=release_key))
    return list(_ALL_RELEASES)


_ALL_RELEASES: tuple[str, ...] | None = None


def release_key(release: str) -> tuple[int, ...]:
    """A plain release string (`4.52.4`) as numbers, ordered as its Version."""
    return tuple(map(int, release.split(".")))


def releases_for_lines(lines: dict[str, int]) -> list[str]:
    """Releases whose banner puts every observed label (key as in OFFSETS) on the observed line.

    An empty result means the lines fit no released trainer.py (a source install, a patched
    Trainer, or a damaged paste)."""
    if not lines:
        return []
    found = []
    for header, _params, releases in BANNER_LINES:
        offsets = OFFSETS[layout_of(releases[0])]
        if all(key in offsets and header + offsets[key] == line for key, line in lines.items()):
            found.extend(releases)
    return sorted(found, key=Version.parse)
