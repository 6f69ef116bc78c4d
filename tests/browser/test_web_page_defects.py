"""What a new user of the page ran into: a phone's tab bar, settings' names broken inside a word, a Chinese browser
shown English, a large data file that dropped every file with it, a config link that planned defaults without its
file. Each is checked in a real Chromium on the served page (the static site runs the same front end)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import shot
from tests.browser.test_web_browser import ISSUE_URL, LF, PLAN_CASES, ROOT, flags, run_cli, wait_for_text

# (label text, [characters after which the browser broke a line]) for every visible setting's name in the form
LINE_BREAKS = """() => [...document.querySelectorAll('#settings label')].filter(l => l.offsetParent && !l.classList.contains('visually-hidden'))
  .map(label => {
    const chars = [];
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode())
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (rect) chars.push([node.data[i], rect.top]);
      }
    const breaks = [];
    for (let i = 1; i < chars.length; i++) if (chars[i][1] > chars[i - 1][1] + 2) breaks.push(chars[i - 1][0]);
    return [label.textContent, breaks];
  })"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("active", ["plan", "time"])
def test_at_390_px_every_tab_and_the_active_one_are_in_view(page, base_url, lang, active):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base_url}/?tab={active}&lang={lang}")
    page.wait_for_selector("#cli-text")
    boxes = page.evaluate("() => [...document.querySelectorAll('nav.tabs button')].map(b => { const r = b.getBoundingClientRect(); "
                          "return [b.dataset.tab, r.left, r.right, b.getAttribute('aria-selected')]; })")
    assert len(boxes) == 6
    for tab, left, right, _ in boxes:
        assert 0 <= left and right <= 390, (tab, left, right)
    assert [tab for tab, *_, selected in boxes if selected == "true"] == [active]
    assert page.evaluate("() => { const n = document.querySelector('nav.tabs'); return n.scrollWidth <= n.clientWidth; }")
    shot(page, f"tabs-{active}-{lang}-390")


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("tab", ["plan", "pretrain", "time", "solve"])
def test_a_settings_name_wraps_after_an_underscore_never_inside_a_word(page, base_url, width, tab):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base_url}/?tab={tab}")
    page.wait_for_selector("#cli-text")
    for details in page.locator("#settings details").all():
        details.evaluate("d => d.open = true")
    labels = page.evaluate(LINE_BREAKS)
    assert len(labels) > 10
    broken = [(text, breaks) for text, breaks in labels if any(c != "_" for c in breaks)]
    assert not broken


def test_a_chinese_browser_gets_chinese_on_its_first_visit_and_a_link_keeps_its_language(page, base_url):
    page.add_init_script("Object.defineProperty(navigator, 'languages', {get: () => ['zh-CN', 'zh', 'en']});")
    _, text_zh = run_cli("plan", *flags(PLAN_CASES["seed001-4.49.0"]), lang="zh")
    page.goto(base_url + ISSUE_URL)
    wait_for_text(page, text_zh)
    assert page.locator("#tab-plan").text_content() == "规划" and page.evaluate("() => document.documentElement.lang") == "zh-CN"
    assert "lang=" not in page.url  # the reader's language is the default: a link opened elsewhere follows that browser
    page.select_option("#lang", "en")
    _, text_en = run_cli("plan", *flags(PLAN_CASES["seed001-4.49.0"]))
    wait_for_text(page, text_en)
    assert "lang=en" in page.url  # the choice differs from the browser's, so the link carries it
    page.reload()
    wait_for_text(page, text_en)


def _lf_plan_text() -> str:
    _, text = run_cli("plan", str(LF / "sft_lora.yaml"), "--transformers", "4.49.0")
    return text[text.index("Banner, as transformers"):]


def _open_lf_config(page, base_url, data_files):
    page.goto(f"{base_url}/?tab=config&transformers=4.49.0")
    page.fill("#config-name", "sft_lora.yaml")
    page.fill("#config-text", (LF / "sft_lora.yaml").read_text())
    page.set_input_files("#config-files", data_files)


def test_a_data_file_over_the_limit_is_left_out_named_with_its_command_and_the_others_kept(page, base_url, tmp_path):
    big = tmp_path / "big_corpus.json"
    big.write_text("[" + ",".join(['{"instruction": "x", "output": "y"}'] * 70_000) + "]")
    assert big.stat().st_size > 2 * 1024 * 1024
    _open_lf_config(page, base_url, [str(LF / "data" / "dataset_info.json"), str(big), str(LF / "data" / "demo_alpaca.json")])
    note = page.locator('[data-left-out="big_corpus.json"]')
    note.wait_for()
    assert "trainsteps plan sft_lora.yaml" in note.text_content() and "MB" in note.text_content()
    assert page.locator("#file-list").text_content().replace("×", " ").split() == ["dataset_info.json", "demo_alpaca.json"]
    page.wait_for_function("t => (document.querySelector('#cli-text') || {}).textContent?.endsWith(t)", arg=_lf_plan_text())
    shot(page, "config-left-out-1280")


def test_a_config_link_names_the_files_it_needs_instead_of_planning_without_them(page, base_url):
    files = [str(LF / "data" / "dataset_info.json"), str(LF / "data" / "demo_alpaca.json")]
    _open_lf_config(page, base_url, files)
    page.wait_for_function("t => (document.querySelector('#cli-text') || {}).textContent?.endsWith(t)", arg=_lf_plan_text())
    link = page.url
    assert "files=sft_lora.yaml%2Cdataset_info.json%2Cdemo_alpaca.json" in link
    fresh = page.context.new_page()
    fresh.goto(link)
    notice = fresh.locator("#needs-files")
    notice.wait_for()
    assert "sft_lora.yaml, dataset_info.json, demo_alpaca.json" in notice.text_content()
    fresh.wait_for_timeout(500)
    assert fresh.locator("#cli-text").count() == 0  # nothing planned from the settings alone
    fresh.fill("#config-name", "sft_lora.yaml")
    fresh.fill("#config-text", (LF / "sft_lora.yaml").read_text())
    fresh.set_input_files("#config-files", files)  # every file the link named is here: the same plan
    fresh.wait_for_function("t => (document.querySelector('#cli-text') || {}).textContent?.endsWith(t)", arg=_lf_plan_text())
    fresh.close()


def test_a_config_link_with_a_launch_line_still_waits_for_its_file_unless_asked(page, base_url):
    page.goto(f"{base_url}/?tab=config&files=sft.yaml&launch=" + "torchrun%20--nproc_per_node%204%20train.py")
    page.locator("#needs-files").wait_for()
    assert page.locator("#cli-text").count() == 0
    page.click("#run")  # asked for: what is there goes to the engine (here a launch line it cannot plan alone: its error)
    page.wait_for_selector("#cli-text, #error")
    assert page.locator("#needs-files").count() == 0


def test_data_files_say_which_command_counts_their_tokens_and_that_command_runs(page, base_url, tmp_path, monkeypatch):
    import shutil

    from click.testing import CliRunner

    from trainsteps.cli.main import cli

    page.goto(f"{base_url}/?tab=config")
    page.fill("#config-name", "sft_lora.yaml")
    page.fill("#config-text", (LF / "sft_lora.yaml").read_text())
    page.set_input_files("#config-files", [str(LF / "data" / "dataset_info.json"), str(LF / "data" / "demo_alpaca.json")])
    page.wait_for_selector("#tokens-note")
    command = page.get_attribute("#tokens-note", "data-command")
    assert command in page.locator("#tokens-note").text_content()
    shutil.copytree(LF, tmp_path / "lf")
    tokenizer = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
    args = command.replace("MODEL_DIR", str(tokenizer)).split()[1:]
    monkeypatch.chdir(tmp_path / "lf")  # where the files are, as the note says
    done = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert done.exit_code == 0 and "tokens seen (all ranks)" in done.output


def test_chinese_counts_rows_with_tiao_and_its_table_values_line_up_as_in_a_terminal(page, base_url):
    settings = PLAN_CASES["seed001-4.49.0"]
    _, text = run_cli("plan", *flags(settings), lang="zh")
    page.goto(f"{base_url}{ISSUE_URL}&lang=zh")
    wait_for_text(page, text)  # the page's text is still the CLI's, character for character
    answer = page.locator("#cli-text strong").first.text_content()
    assert "1,047 条数据" in answer and "行" not in answer
    starts = page.evaluate("""() => [...document.querySelectorAll('#cli-text .cell')].map(c => {
        const r = document.createRange(); r.setStart(c.nextSibling, 0); r.setEnd(c.nextSibling, 1);
        return Math.round(r.getBoundingClientRect().left); })""")
    assert len(starts) >= 8 and max(starts) - min(starts) <= 1  # labels of CJK widths: the values start in one column
    shot(page, "plan-zh-table-1280")


def test_a_row_count_for_a_stock_llamafactory_yaml_keeps_the_release_its_data_gives(page, base_url):
    with_data, _ = run_cli("plan", str(LF / "sft_lora.yaml"))
    counted, text = run_cli("plan", str(LF / "sft_lora.yaml"), "--num-examples", "5000")
    assert counted["version"] == with_data["version"]  # a count never moves the release the config pins
    page.goto(f"{base_url}/?tab=config&num_examples=5000")
    page.fill("#config-name", "sft_lora.yaml")
    page.fill("#config-text", (LF / "sft_lora.yaml").read_text())
    page.click("#run")
    page.wait_for_function("t => (document.querySelector('#cli-text') || {}).textContent?.split('\\n')[0] === t",
                           arg=text.split("\n")[0])
    assert f"transformers {with_data['version']}" in page.locator("#cli-text strong").first.text_content()


def test_a_pasted_log_in_chinese_names_its_source_without_stray_spaces(page, base_url):
    log = (ROOT / "tests" / "fixtures" / "logs" / "seed_003_4gpu.log").read_text(encoding="utf-8")
    _, text = run_cli("explain", "--text", log, lang="zh")
    page.goto(f"{base_url}/?tab=explain&lang=zh")
    page.fill("#log-text", log)
    page.click("#run")
    wait_for_text(page, text)
    first = page.locator("#cli-text").text_content().split("\n")[0]
    assert first.startswith("在粘贴的文本的 ") and " 粘贴的文本 " not in page.locator("#cli-text").text_content()
