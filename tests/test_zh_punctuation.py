"""Chinese messages use full-width punctuation in a sentence, never ASCII and full-width mixed.

Code, option names, placeholders, quoted framework messages, intervals such as [0, 1] and formulas such as
`floor(L / GA)` keep their ASCII characters; the sentence around them uses ，。；：（）.
"""

import re

from trainsteps.i18n import zh

CJK = re.compile(r"[\u3400-\u9fff]")
PROTECTED = re.compile(r"`[^`]*`|\{[^}]*\}|\"[^\"]*\"|https?://\S+|\[[^\[\]]*[\])]")


def _sentence(text: str) -> str:
    """The text without what keeps ASCII (a placeholder stays a word, so `{rule}(L)` is still a formula)."""
    return PROTECTED.sub(lambda m: "X" if m.group().startswith("{") else "", text)
ASCII_IN_SENTENCE = re.compile(r"[,;:?!](?:\s|$)|(?<![/*+=x-])\s\(")


def test_no_ascii_punctuation_in_chinese_sentences():
    mixed = {}
    for table in (zh.MESSAGES, zh.LABELS, zh.QUANTITIES):
        for key, text in table.items():
            if CJK.search(text):
                found = ASCII_IN_SENTENCE.findall(_sentence(text))
                if found:
                    mixed[key] = text
    assert not mixed, mixed


def test_supervised_tokens_are_the_ones_the_loss_is_computed_on():
    # "参与训练" would say the other tokens are not trained on; they are, only the loss skips them
    assert all("参与训练" not in text for text in (*zh.MESSAGES.values(), *zh.LABELS.values(), *zh.QUANTITIES.values()))
