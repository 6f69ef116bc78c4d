"""Chinese spacing around names put into a sentence: a Latin name keeps a space on each side (在 train.log 的), a
Chinese one has none (在粘贴的文本的), and a template's own spaces elsewhere (formulas such as 总批次 x max_steps) stay."""

from __future__ import annotations

from trainsteps.i18n import message, zh


def test_a_chinese_name_sits_between_chinese_words_without_spaces():
    pasted = zh.LABELS["explain.pasted_text"]
    assert message("explain.summary", "zh", files=pasted, lines=23, runs=1) == f"在{pasted}的 23 行中找到 1 次训练"
    assert message("explain.error.nothing", "zh", source=zh.LABELS["explain.stdin"], lines=3).startswith("在标准输入中没有找到")


def test_a_latin_name_keeps_its_spaces_and_english_is_untouched():
    assert message("explain.summary", "zh", files="train.log", lines=23, runs=1) == "在 train.log 的 23 行中找到 1 次训练"
    assert message("explain.summary", "en", files="pasted text", lines=1, runs=1).endswith("of pasted text")


def test_only_the_named_placeholder_is_tightened_and_formula_spaces_stay():
    assert message("hf.stream.examples", "zh") == zh.MESSAGES["hf.stream.examples"]  # 是 总批次 x max_steps: on purpose
    template_with_both = "在 {file} 和 {files} 中"
    from trainsteps.i18n import _tight_around_chinese_names

    assert _tight_around_chinese_names(template_with_both, {"file": "文本"}) == "在{file}和 {files} 中"
