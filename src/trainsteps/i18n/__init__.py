"""Message catalogs: every sentence the product prints, in English and Chinese.

Code refers to messages by id; `message(id, lang, **params)` renders one. A missing
Chinese entry falls back to English, and the test suite checks both catalogs hold
the same ids with the same parameters.
"""

from __future__ import annotations

from trainsteps.i18n import en, zh

LANGUAGES = ("en", "zh")
_CATALOGS = {"en": en, "zh": zh}


class _Blank(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def message(msg_id: str, lang: str = "en", **params) -> str:
    template = _CATALOGS.get(lang, en).MESSAGES.get(msg_id) or en.MESSAGES.get(msg_id) or msg_id
    return template.format_map(_Blank(params))


def quantity_name(key: str, lang: str = "en") -> str:
    return _CATALOGS.get(lang, en).QUANTITIES.get(key) or en.QUANTITIES.get(key) or key


def label(key: str, lang: str = "en") -> str:
    """Words of the report layout (headings, column names)."""
    return _CATALOGS.get(lang, en).LABELS.get(key) or en.LABELS.get(key) or key
