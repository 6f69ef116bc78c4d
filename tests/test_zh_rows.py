"""Chinese says a dataset's rows with 条 (条数据, 数据条数, 条打包序列) and keeps 行 for a file's lines (第 N 行). Checked
on what a plan, its tokens and its time say (the answer line, the report's quantities and labels); the rule comes
from the English text: a message about rows, not lines."""

from __future__ import annotations

import re

from trainsteps.i18n import en, zh

SHOWN_BY_A_PLAN = ("answer.", "tokens.", "time.tokens.", "time.assume.", "time.error.eval", "time.hint.eval", "time.hint.tokens")


def about_rows(english: str) -> bool:
    return bool(re.search(r"\brows?\b", english)) and not re.search(r"\blines?\b", english)


def test_a_plans_words_for_rows_are_tiao_not_hang():
    wrong = []
    for table in ("MESSAGES", "LABELS", "QUANTITIES"):
        english, chinese = getattr(en, table), getattr(zh, table)
        for key, text in chinese.items():
            shown = table != "MESSAGES" or key.startswith(SHOWN_BY_A_PLAN)
            if shown and isinstance(text, str) and about_rows(english.get(key, "")) and "行" in text:
                wrong.append(f"{table} {key}: {text}")
    assert not wrong, wrong


def test_the_answer_line_counts_rows_and_packed_rows_with_tiao():
    assert zh.MESSAGES["answer.rows"].format(rows="1,047") == "1,047 条数据"
    assert zh.MESSAGES["answer.packed_rows"].format(rows="12") == "12 条打包序列"
