"""`Count`: a number of rows or steps that is exact, or an estimate with its range."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Count:
    """A number of rows: exact, or an estimate with a range when it depends on unknown token lengths."""

    value: int
    """The exact count, or the central estimate."""
    low: int | None = None
    """Lower end of the range (None when exact)."""
    high: int | None = None
    """Upper end of the range (None when exact)."""

    @property
    def exact(self) -> bool:
        return self.low is None

    @classmethod
    def of(cls, value: int) -> Count:
        return cls(value)

    def scaled(self, fn) -> Count:
        if self.exact:
            return Count(fn(self.value))
        return Count(fn(self.value), fn(self.low), fn(self.high))
