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
    if not params:  # a sentence without values is the same every time: rendered once (a plan's report reads a dozen)
        text = _WITHOUT_VALUES.get((msg_id, lang))
        if text is None:
            text = _rendered(msg_id, lang, params)
            if msg_id in en.MESSAGES and lang in LANGUAGES:  # a bounded set: the catalogs' ids in their languages
                _WITHOUT_VALUES[(msg_id, lang)] = text
        return text
    return _rendered(msg_id, lang, params)


_WITHOUT_VALUES: dict[tuple[str, str], str] = {}


def _rendered(msg_id: str, lang: str, params: dict) -> str:
    template = _catalog(lang).MESSAGES.get(msg_id) or en.MESSAGES.get(msg_id) or msg_id
    if lang == "zh" and params:
        template = _tight_around_chinese_names(template, params)
    try:
        text = template.format_map(_Blank(params))
    except ValueError:  # a word where a number goes (`{total:,}` of an unknown "?"): the word is shown as it is
        text = template.format_map(_Blank({k: _AsIs(v) if isinstance(v, str) else v for k, v in params.items()}))
    return _singular(text) if lang != "zh" and "1 " in text and _may_have_one_noun(text) else text


def _is_ideograph(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def _tight_around_chinese_names(template: str, params: dict) -> str:
    """Chinese puts a space between a Chinese word and a Latin name (`在 train.log 的`), none around a Chinese one
    (`在粘贴的文本的`): the space a template keeps around a placeholder goes where the value meets Chinese."""
    for key, value in params.items():
        if not isinstance(value, str) or not value or "{" + key not in template:
            continue
        starts, ends = _is_ideograph(value[0]), _is_ideograph(value[-1])
        if not (starts or ends):
            continue
        at = template.find("{" + key)
        while at >= 0:
            close = template.find("}", at)
            if close < 0:
                break
            if template[at + 1 + len(key)] not in "}:!":  # {file} is not {files}
                at = template.find("{" + key, at + 1)
                continue
            if ends and template[close + 1:close + 2] == " " and _is_ideograph(template[close + 2:close + 3]):
                template = template[:close + 1] + template[close + 2:]
            if starts and at >= 2 and template[at - 1] == " " and _is_ideograph(template[at - 2]):
                template = template[:at - 1] + template[at:]
                at -= 1
            at = template.find("{" + key, at + 1)
    return template


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
