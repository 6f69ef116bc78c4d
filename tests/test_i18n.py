"""Both catalogs say the same things: same ids, same parameters."""

import string

from trainsteps.i18n import en, zh


def _fields(template: str) -> set[str]:
    return {name.split("!")[0].split(":")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_exists_in_both_languages():
    assert set(en.MESSAGES) == set(zh.MESSAGES)
    assert set(en.QUANTITIES) == set(zh.QUANTITIES)
    assert set(en.LABELS) == set(zh.LABELS)


def test_translations_use_the_same_parameters():
    mismatched = [k for k in en.MESSAGES if _fields(en.MESSAGES[k]) != _fields(zh.MESSAGES[k])]
    assert mismatched == []


# Messages that are only a name or a parameter read the same in both languages.
SAME_IN_BOTH = {"cli.error.bad_value", "count.error.packing_version", "neox.family", "lit.why.estimated"}


def test_chinese_messages_are_translated():
    same = [k for k in en.MESSAGES if en.MESSAGES[k] == zh.MESSAGES[k] and k not in SAME_IN_BOTH]
    assert same == []
