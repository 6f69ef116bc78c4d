"""The static calculator (`make site`): the page served as plain files from 127.0.0.1 to a Chromium that cannot
resolve any other host, with the engine running in a Web Worker (Pyodide). Each tab must show what the CLI prints for
the same settings, character for character; expected values come from the CLI run in this test. The tests share one
tab, so the engine starts once: the first opens the seed-001 link, the others move between tabs by clicking."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlparse

from tests.browser.conftest import shot
from tests.browser.test_web_browser import LF, PLAN_CASES, ROOT, figure, flags, run_cli, wait_for_text

FIRST_LOAD_MS = 120_000
"""Generous: the first answer waits for Pyodide to start (about 7 s here, more on a loaded CI machine)."""
SEED_003 = ROOT / "tests" / "fixtures" / "logs" / "seed_003_4gpu.log"


def shown_settings(page) -> dict:
    return dict(parse_qsl(urlparse(page.url).query))


def test_the_static_site_plans_seed_001_in_the_browser_with_no_server_and_no_network(static_page, static_url, offline_context):
    settings = PLAN_CASES["seed001-4.49.0"]
    data, text = run_cli("plan", *flags(settings))
    static_page.goto(f"{static_url}?{urlencode(settings)}")
    wait_for_text(static_page, text, timeout=FIRST_LOAD_MS)
    run = data["run"]
    assert figure(static_page, "f_steps") == f"{run['optimizer_steps']:,} / {run['max_steps']:,}" == "3,900 / 3,900"
    assert figure(static_page, "f_epochs") == f"{run['epochs_completed']:g} / {run['epochs_planned']:g}" == "278.61 / 300"
    assert static_page.locator("#engine-status").get_attribute("data-stage") == "ready"
    assert static_page.evaluate("() => window.__engine.started") == "snapshot"  # the memory saved at build time, not a cold start
    static_page.wait_for_selector("#compare .bar.current")  # --compare-versions ran in the worker too
    assert any("/wheels/trainsteps-" in url for url in offline_context.requested)  # the worker's requests are seen (and checked)
    shot(static_page, "static-plan-seed001-1280")


def test_the_static_sites_solve_pretraining_and_time_tabs_answer_as_the_cli_does(static_page, static_url):
    if not static_page.url.startswith(static_url):  # run alone: open the site first
        static_page.goto(static_url)
    static_page.wait_for_selector("#cli-text", timeout=FIRST_LOAD_MS)
    for tab in ("solve", "pretrain", "time"):
        static_page.click(f"#tab-{tab}")
        static_page.wait_for_function("t => new URLSearchParams(location.search).get('tab') === t", arg=tab)
        values = {k: v for k, v in shown_settings(static_page).items() if k != "tab"}
        _, text = run_cli("solve" if tab == "solve" else "plan", *flags(values))
        wait_for_text(static_page, text)
        shot(static_page, f"static-{tab}-1280")


def test_the_static_site_explains_seed_003_and_plans_a_config_with_its_data(static_page, static_url):
    log = SEED_003.read_text(encoding="utf-8")
    data, text = run_cli("explain", "--text", log)
    assert data["runs"][0]["inferred"]["world_size"] == 4  # the seed's question: how many GPUs
    if not static_page.url.startswith(static_url):  # run alone: open the site first
        static_page.goto(static_url)
    static_page.wait_for_function("() => window.__engine && window.__engine.stage === 'ready'", timeout=FIRST_LOAD_MS)
    static_page.click("#tab-explain")
    static_page.fill("#log-text", log)
    static_page.click("#run")
    wait_for_text(static_page, text)
    assert figure(static_page, "x_gpus") == "4"  # the seed's answer, on a card
    shot(static_page, "static-explain-seed003-1280")

    _, text = run_cli("plan", str(LF / "sft_lora.yaml"), "--transformers", "4.49.0")
    static_page.click("#tab-config")
    static_page.fill("#f-transformers", "4.49.0")
    static_page.fill("#config-name", "sft_lora.yaml")
    static_page.fill("#config-text", (LF / "sft_lora.yaml").read_text())
    static_page.set_input_files("#config-files", [str(LF / "data" / "dataset_info.json"), str(LF / "data" / "demo_alpaca.json")])
    static_page.wait_for_function("() => (document.querySelector('#cli-text') || {}).textContent?.includes('Banner, as transformers 4.49.0')")
    shown = static_page.locator("#cli-text").text_content()
    banner = text.index("Banner, as transformers")
    assert shown.endswith(text[banner:])  # the files were read in the browser and planned by the same engine


def test_the_static_page_fits_a_phone_with_its_progress_line(static_page, static_url):
    if not static_page.url.startswith(static_url):  # run alone: open the site first
        static_page.goto(static_url)
    static_page.wait_for_function("() => window.__engine && window.__engine.stage === 'ready'", timeout=FIRST_LOAD_MS)
    static_page.set_viewport_size({"width": 390, "height": 844})
    static_page.click("#tab-plan")
    static_page.wait_for_selector("#cli-text")
    assert static_page.locator("#engine-status").is_visible()
    assert static_page.evaluate("() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)") <= 390
    right = static_page.evaluate("() => Math.max(...[...document.querySelectorAll('nav.tabs button')].map(b => b.getBoundingClientRect().right))")
    assert right <= 390
    shot(static_page, "static-plan-390")


def test_the_static_site_explains_a_50_mb_log_read_in_slices_in_the_browser(static_page, static_url, tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_explain", ROOT / "bench" / "bench_explain.py")
    bench_explain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_explain)
    log = tmp_path / "train.log"
    assert bench_explain.generate(str(log), 50) >= 50 << 20
    data, text = run_cli("explain", str(log))
    if not static_page.url.startswith(static_url):  # run alone: open the site first
        static_page.goto(static_url)
    static_page.wait_for_function("() => window.__engine && window.__engine.stage === 'ready'", timeout=FIRST_LOAD_MS)
    static_page.click("#tab-explain")
    static_page.set_input_files("#log-file", str(log))
    wait_for_text(static_page, text.replace(str(log), "train.log"), timeout=FIRST_LOAD_MS)
    assert static_page.get_attribute("#cli-line", "data-full") == "trainsteps explain train.log"
    assert static_page.input_value("#log-text") == ""  # the page never held the text: the slices went to the engine
    assert figure(static_page, "x_status") == f"finished · step {data['runs'][0]['end_step']:,}"


def test_a_browser_that_cannot_take_the_saved_memory_starts_python_the_long_way_and_plans_the_same(offline_context, static_url):
    settings = PLAN_CASES["seed001-4.49.0"]
    _, text = run_cli("plan", *flags(settings))
    tab = offline_context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    withheld: list[str] = []

    def missing(route):  # the saved memory cannot be had: the worker must start Pyodide from its own files
        withheld.append(route.request.url)
        route.fulfill(status=404, body="")

    tab.route("**/engine.snapshot.gz*", missing)
    try:
        tab.goto(f"{static_url}?{urlencode(settings)}")
        wait_for_text(tab, text, timeout=FIRST_LOAD_MS)
        assert withheld, "the worker never asked for the saved memory"
        assert tab.evaluate("() => window.__engine.started") == "start"
        assert figure(tab, "f_steps") == "3,900 / 3,900" and figure(tab, "f_epochs") == "278.61 / 300"
        tab.wait_for_selector("#compare .bar.current")
        assert tab.locator("#engine-status").get_attribute("data-stage") == "ready"
        assert not errors, errors
    finally:
        tab.close()
