"""`Steps`: a non-decreasing list of training steps held as runs that repeat, so that a plan of millions of steps holds
a few numbers instead of millions of ints.

A run is `first`, a tuple of differences `diffs` (period P) and a `count`: its step j is
`first + (j // P) x sum(diffs) + sum(diffs[:j % P])`. An arithmetic progression (every interval, the epoch ends of a
per-epoch counter) is one run with P = 1; the epoch ends of the cumulative accumulation counter repeat with
P = GA / gcd(batches, GA). A `Steps` reads like a list (len, index, slice, iterate, `in`, `==` a list), and the list is
built only when someone iterates it in full. JSON writes it as a list up to LONG_LIST steps and as the documented
compact form above (docs/json.md), computed from the runs without building the list.
"""

from __future__ import annotations

from itertools import accumulate, chain, cycle, islice, repeat

LONG_LIST = 10_000
"""Longer step lists are written compactly: a plan of 4 million logging steps is kilobytes of JSON, not 67 MB."""
PERIODS = 64
"""The longest repeating pattern of differences the compact JSON form writes out."""
ENDS = 100
"""Steps kept at each end of a list that does not repeat (the `head` / `tail` JSON form)."""
_EXPAND_FOR_JSON = 200_000
"""A list of several runs that does not reduce to one pattern is expanded to find its JSON form only up to this size."""


class _Run:
    __slots__ = ("first", "diffs", "count", "span", "_prefix")

    def __init__(self, first: int, diffs: tuple, count: int):
        self.first, self.diffs, self.count = first, diffs, count
        self.span = sum(diffs)
        self._prefix = None

    def value(self, j: int) -> int:
        period = len(self.diffs)
        if period == 1:
            return self.first + j * self.diffs[0]
        if self._prefix is None:  # only read by index: iteration never needs it
            self._prefix = tuple(accumulate(self.diffs, initial=0))
        return self.first + (j // period) * self.span + self._prefix[j % period]

    @property
    def last(self) -> int:
        return self.value(self.count - 1)

    def next_value(self) -> int:
        return self.value(self.count)

    def part(self, start: int, stop: int) -> _Run:
        """Steps start..stop-1 of this run, as a run."""
        shift = start % len(self.diffs)
        return _Run(self.value(start), self.diffs[shift:] + self.diffs[:shift], stop - start)

    def __iter__(self):
        if len(self.diffs) == 1:
            step = self.diffs[0]
            if step > 0:
                return iter(range(self.first, self.first + self.count * step, step))
            return repeat(self.first, self.count)
        return accumulate(islice(cycle(self.diffs), self.count - 1), initial=self.first)


class Steps:
    """Training steps, non-decreasing, held as repeating runs (see the module's docstring)."""

    __slots__ = ("_runs", "_len")
    __hash__ = None

    def __init__(self, values=()):
        self._runs: list[_Run] = []
        self._len = 0
        if isinstance(values, Steps):
            for run in values._runs:
                self._add(run.first, run.diffs, run.count)
        elif isinstance(values, range) and values.step > 0:
            if values:
                self._add(values.start, (values.step,), len(values))
        else:
            for value in values:
                self.append(value)

    @classmethod
    def every(cls, every: int, first: int, last: int) -> Steps:
        """first, first + every, ... up to `last`."""
        steps = cls()
        if every > 0 and last >= first:
            steps._add(first, (every,), (last - first) // every + 1)
        return steps

    @classmethod
    def periodic(cls, first: int, diffs, count: int) -> Steps:
        """`count` steps from `first` whose differences repeat `diffs`."""
        steps = cls()
        steps.extend_periodic(first, diffs, count)
        return steps

    # ---------------------------------------------------------------- building

    def append(self, value: int) -> None:
        last = self._runs[-1] if self._runs else None
        if last is not None and last.count == 1:
            self._runs[-1] = _Run(last.first, (value - last.first,), 2)
        elif last is not None and value == last.next_value():
            last.count += 1
        else:
            self._runs.append(_Run(value, (0,), 1))
        self._len += 1

    def extend_periodic(self, first: int, diffs, count: int) -> None:
        """Add `count` steps from `first` whose differences repeat `diffs`, merged into the last run where they continue it."""
        diffs = _minimal(tuple(diffs))
        if count <= 0:
            return
        last = self._runs[-1] if self._runs else None
        if last is not None and last.count == 1 and first - last.first == diffs[-1]:
            self._runs[-1] = _Run(last.first, (diffs[-1],) + diffs[:-1], count + 1)  # the single step leads the pattern
            self._len += count
            return
        if last is not None and last.count > 1 and first == last.next_value():
            shift = last.count % len(last.diffs)
            if len(last.diffs) == len(diffs) and last.diffs[shift:] + last.diffs[:shift] == diffs:
                last.count += count
                self._len += count
                return
        self._add(first, diffs, count)

    def extend(self, values) -> None:
        if isinstance(values, Steps):
            for run in values._runs:
                if run.count == 1:
                    self.append(run.first)
                else:
                    self.extend_periodic(run.first, run.diffs, run.count)
        else:
            for value in values:
                self.append(value)

    def _add(self, first: int, diffs: tuple, count: int) -> None:
        self._runs.append(_Run(first, diffs, count))
        self._len += count

    # ---------------------------------------------------------------- reading like a list

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self):
        return chain.from_iterable(self._runs)  # the runs' own iterators, chained in C (no generator frame per step)

    def __reversed__(self):
        return reversed(list(self))

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, stride = index.indices(self._len)
            if stride != 1:
                return list(self)[index]
            return self._between(start, max(start, stop))
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("step index out of range")
        for run in self._runs:
            if index < run.count:
                return run.value(index)
            index -= run.count
        raise IndexError("step index out of range")  # pragma: no cover - the length says otherwise

    def _between(self, start: int, stop: int) -> Steps:
        out, offset = Steps(), 0
        for run in self._runs:
            lo, hi = max(start - offset, 0), min(stop - offset, run.count)
            if lo < hi:
                part = run.part(lo, hi)
                out._add(part.first, part.diffs, part.count)
            offset += run.count
        return out

    def index_at_least(self, step: int) -> int:
        """How many steps are below `step` (the position of the first one at or above it)."""
        lo, hi = 0, self._len
        while lo < hi:
            mid = (lo + hi) // 2
            if self[mid] < step:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def at_least(self, step: int) -> Steps:
        return self[self.index_at_least(step):]

    def up_to(self, step: int) -> Steps:
        return self[:self.index_at_least(step + 1)]

    def count_after(self, step: int) -> int:
        return self._len - self.index_at_least(step + 1)

    def strictly_increasing(self) -> bool:
        return self._rising(strictly=True)

    def non_decreasing(self) -> bool:
        return self._rising(strictly=False)

    def _rising(self, strictly: bool) -> bool:
        floor, last = (1, None) if strictly else (0, None)
        for run in self._runs:
            if (run.count > 1 and min(run.diffs) < floor) or (last is not None and run.first - last < floor):
                return False
            last = run.last
        return True

    def distinct(self) -> Steps:
        """Each step once (the steps must be non-decreasing): a pattern's zero differences are dropped from it."""
        out = Steps()
        for run in self._runs:
            period, zeros = len(run.diffs), run.diffs.count(0)
            whole, rest = divmod(run.count - 1, period)
            repeats = whole * zeros + run.diffs[:rest].count(0)
            rising = tuple(d for d in run.diffs if d)
            first = run.first
            count = run.count - repeats
            if out and out[-1] == first:  # the run starts where the last one ended
                if count == 1:
                    continue
                first, count = first + rising[0], count - 1
                rising = rising[1:] + rising[:1]
            if count == 1 or not rising:
                out.append(first)
            else:
                out.extend_periodic(first, rising, count)
        return out

    def count(self, step) -> int:
        return self.index_at_least(step + 1) - self.index_at_least(step)

    def index(self, step) -> int:
        at = self.index_at_least(step)
        if at < self._len and self[at] == step:
            return at
        raise ValueError(f"{step} is not a step of the list")

    def __contains__(self, step) -> bool:
        at = self.index_at_least(step)
        return at < self._len and self[at] == step

    def __eq__(self, other) -> bool:
        if not isinstance(other, (Steps, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __add__(self, other) -> Steps:
        out = Steps(self)
        out.extend(other)
        return out

    def __radd__(self, other) -> Steps:
        out = Steps(other)
        out.extend(self)
        return out

    def __repr__(self) -> str:
        if self._len <= 12:
            return f"Steps({list(self)})"
        return f"Steps(<{self._len:,} steps: {self[0]}, {self[1]}, {self[2]}, ..., {self[-1]}>)"

    def __reduce__(self):
        return (_rebuild, ([(run.first, run.diffs, run.count) for run in self._runs],))

    # ---------------------------------------------------------------- JSON

    def to_json(self):
        """The list up to LONG_LIST steps; above, `{count, first, last, period[, then]}` when one pattern of at most
        PERIODS differences covers all but up to two last steps, else `{count, first, last, head, tail}`."""
        if self._len <= LONG_LIST:
            return list(self)
        lead = self._runs[0]
        if self._len - lead.count <= 2 and len(lead.diffs) <= PERIODS:
            out = {"count": self._len, "first": lead.first, "last": self[-1], "period": list(lead.diffs)}
            return {**out, "then": list(self[lead.count:])} if lead.count < self._len else out
        if self._len <= _EXPAND_FOR_JSON:
            return compact_list(list(self))
        return {"count": self._len, "first": self[0], "last": self[-1], "head": list(self[:ENDS]), "tail": list(self[-ENDS:])}

    @classmethod
    def of(cls, value) -> Steps:
        """Any step list as `Steps`: a `Steps` itself, a list, or a JSON form (plain or compact; the `head`/`tail` form,
        which lost its middle, gives an estimate of the same count, its missing steps spread evenly between)."""
        if isinstance(value, Steps):
            return value
        steps = cls.from_json(value)
        if steps is not None:
            return steps
        head, tail, count = value["head"], value["tail"], value["count"]
        middle = count - len(head) - len(tail)
        steps = cls(head)
        if middle > 0:
            every = max(1, (tail[0] - head[-1]) // (middle + 1))
            steps.extend_periodic(head[-1] + every, (every,), middle)
        steps.extend(tail)
        return steps

    @classmethod
    def from_json(cls, value) -> Steps | None:
        """The steps of a JSON step list, plain or `period` form; None for the `head`/`tail` form (it lost its middle)."""
        if value is None:
            return cls()
        if isinstance(value, (list, tuple)):
            return cls(value)
        if "period" not in value:
            return None
        then = value.get("then") or []
        steps = cls.periodic(value["first"], value["period"], value["count"] - len(then))
        steps.extend(then)
        return steps


def _rebuild(runs) -> Steps:
    steps = Steps()
    for first, diffs, count in runs:
        steps._add(first, diffs, count)
    return steps


def _minimal(diffs: tuple) -> tuple:
    """The shortest pattern that repeats into `diffs` ((2, 3, 2, 3) -> (2, 3))."""
    size = len(diffs)
    for p in range(1, size):
        if size % p == 0 and diffs[p:] + diffs[:p] == diffs:
            return diffs[:p]
    return diffs


def compact_list(steps: list):
    """The JSON form of a plain list: itself up to LONG_LIST entries; above, `{count, first, last, period}` when the
    differences between neighbours repeat with a period of at most PERIODS (every interval, and every epoch-end
    pattern the loop makes): step i is first + (i // p) x sum(period) + sum(period[:i % p]), so the list is exact; up
    to two last steps outside the pattern (the final save) are listed in `then`. Anything else keeps its first and last
    ENDS steps (`head`, `tail`) and its `count`."""
    if steps is None or len(steps) <= LONG_LIST:
        return steps
    count = len(steps)
    differences = [b - a for a, b in zip(steps, steps[1:])]  # noqa: B905 - one shorter by design
    for extra in range(3):  # the last steps may break the pattern: the final save, a cut-short last epoch
        regular = differences[:len(differences) - extra]
        for p in range(1, PERIODS + 1):
            if regular[p:] == regular[:-p]:  # compared in C, stopping at the first difference
                out = {"count": count, "first": steps[0], "last": steps[-1], "period": regular[:p]}
                return {**out, "then": list(steps[count - extra:])} if extra else out
    return {"count": count, "first": steps[0], "last": steps[-1], "head": list(steps[:ENDS]), "tail": list(steps[-ENDS:])}
