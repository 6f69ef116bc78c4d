"""Chinese says a dataset's rows with 条 (条数据, 数据条数, 条打包序列) and keeps 行 for a file's lines (第 N 行, 日志行,
每行一个对象). The rule comes from the English text, across the whole zh table: a Chinese text may say 行 (outside words
where it is not "line": 运行, 执行, 并行, ...) at most as often as its English says "line", so a row never reads as 行."""

from __future__ import annotations

import re

from trainsteps.i18n import en, zh

NOT_A_LINE = re.compile("运行|执行|进行|并行|行为|自行|另行|可行|先行|发行|实行|行动|同行|流行|换行|平行|行进|推行|举行")
"""Words with 行 that never mean a line of text."""

PLACEHOLDER = re.compile(r"\{[^{}]*\}")

LINES_IN_OTHER_WORDS = {
    # TRL's parser takes the keys "on as arguments": arguments of its command line (命令行参数), not rows.
    "unknown.reaction.trl": "command-line arguments",
    # Both quoted texts are lines of the log; the English says "line" once, after the second.
    "prime.what.step": "two log lines named by their text",
}
"""Messages whose Chinese says 行 for a line the English names in other words (key: why)."""


def hang_count(chinese: str) -> int:
    return NOT_A_LINE.sub("", chinese).count("行")


def line_count(english: str) -> int:
    return len(re.findall(r"\b(?:lines?|newlines?|command-line)\b", PLACEHOLDER.sub("", english), flags=re.IGNORECASE))


def test_every_chinese_hang_is_a_line_the_english_names():
    wrong = []
    for table in ("MESSAGES", "LABELS", "QUANTITIES"):
        english, chinese = getattr(en, table), getattr(zh, table)
        for key, text in chinese.items():
            if not isinstance(text, str) or key in LINES_IN_OTHER_WORDS:
                continue
            if hang_count(text) > line_count(english.get(key, "")):
                wrong.append(f"{table} {key}: {text}")
    assert not wrong, "\n".join(wrong)


def test_the_answer_line_counts_rows_and_packed_rows_with_tiao():
    assert zh.MESSAGES["answer.rows"].format(rows="1,047") == "1,047 条数据"
    assert zh.MESSAGES["answer.packed_rows"].format(rows="12") == "12 条打包序列"


def test_a_row_count_in_chinese_is_tiao_even_next_to_a_line_number():
    text = zh.MESSAGES["explain.fact.progress_world"].format(rows=1047, bs=10, ga=8, low=13, high=14, world=1, line=12)
    assert "1,047 条数据" in text and "第 12 行" in text and "行数" not in text
