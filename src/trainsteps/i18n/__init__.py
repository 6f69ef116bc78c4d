"""Message catalogs: every sentence the product prints, in English and Chinese.

Code refers to messages by id; `message(id, lang, **params)` renders one. A missing
Chinese entry falls back to English, and the test suite checks both catalogs hold
the same ids with the same parameters.
"""

from __future__ import annotations

import importlib

from trainsteps.i18n import en

LANGUAGES = ("en", "zh")
_CATALOGS = {"en": en}  # other languages are imported the first time they are asked for


def _catalog(lang: str):
    catalog = _CATALOGS.get(lang)
    if catalog is None:
        catalog = _CATALOGS[lang] = importlib.import_module(f"trainsteps.i18n.{lang}") if lang in LANGUAGES else en
    return catalog


class _Blank(dict):
    def __missing__(self, key):
        return "{" + key + "}"


class _AsIs(str):
    def __format__(self, spec: str) -> str:
        return str(self)


def message(msg_id: str, lang: str = "en", **params) -> str:
    template = _catalog(lang).MESSAGES.get(msg_id) or en.MESSAGES.get(msg_id) or msg_id
    try:
        text = template.format_map(_Blank(params))
    except ValueError:  # a word where a number goes (`{total:,}` of an unknown "?"): the word is shown as it is
        text = template.format_map(_Blank({k: _AsIs(v) if isinstance(v, str) else v for k, v in params.items()}))
    return _singular(text) if lang != "zh" and "1 " in text and _may_have_one_noun(text) else text


_ONE = None
_NOUNS = ("rows", "epochs", "examples", "steps", "batches", "tokens", "lines", "processes", "ranks", "samples", "iterations",
          "files", "evaluations", "checkpoints", "passes", "sequences", "documents", "warnings", "GPUs", "nodes", "bins",
          "micro-batches")


def _may_have_one_noun(text: str) -> bool:
    """A quick look for "1 <noun>" not inside a bigger number, so most messages never compile the regex below
    (its compilation is a millisecond of every command's start-up)."""
    at = text.find("1 ")
    while at >= 0:
        if (at == 0 or text[at - 1] not in "0123456789.,") and text.startswith(_NOUNS, at + 2):
            return True
        at = text.find("1 ", at + 2)
    return False


def _singular(text: str) -> str:
    """English: "1 rows" -> "1 row" (a count of exactly one, not 0.1 or 2,001), for every message at once."""
    global _ONE
    if _ONE is None:
        import re

        _ONE = re.compile(rf"(?<![\d.,])1 ({'|'.join(_NOUNS)})\b( are| were)?")
    verbs = {" are": " is", " were": " was", None: ""}
    return _ONE.sub(lambda m: "1 " + (m.group(1)[:-2] if m.group(1).endswith(("sses", "hes")) else m.group(1)[:-1]) + verbs[m.group(2)], text)


def quantity_name(key: str, lang: str = "en") -> str:
    return _catalog(lang).QUANTITIES.get(key) or en.QUANTITIES.get(key) or key


def label(key: str, lang: str = "en") -> str:
    """Words of the report layout (headings, column names)."""
    return _catalog(lang).LABELS.get(key) or en.LABELS.get(key) or key
