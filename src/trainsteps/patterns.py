"""Regular expressions compiled on their first use.

`explain` holds about two hundred patterns, and a log uses a few of them: compiling them all at import cost more than
reading a short log. `lazy(pattern, flags)` stands for `re.compile(pattern, flags)`; the first method called compiles
it, and from then on its methods are the compiled pattern's own (no wrapper between the caller and `re`)."""

from __future__ import annotations

import re

_METHODS = ("search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split")


class LazyPattern:
    """A pattern compiled when one of its methods (or `compiled`) is first asked for."""

    def __init__(self, pattern: str | bytes, flags: int = 0):
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str):  # only for names not set yet: the first use
        if name not in _METHODS and name != "compiled":
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self.flags)
        self.compiled = compiled
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(self, name)


def lazy(pattern: str | bytes, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
