"""A real headless Chromium (Debian's `chromium` package) driven by Playwright for Python, against `trainsteps web`.

Skipped with the reason when Chromium or Playwright is missing (`.ci/run` installs both; `pip install -e '.[test]'`
and `apt-get install chromium`). Screenshots go to tests/browser/shots/ (git-ignored)."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("TRAINSTEPS_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(__file__).parent / "shots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TRAINSTEPS_CHROMIUM)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "Playwright for Python is not installed (pip install -e '.[test]'; no `playwright install` needed)"
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def base_url():
    from trainsteps.web.server import make_server

    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def driver():
    """One Playwright for the session: its sync API runs one instance at a time, and both browsers below use it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser_context(driver):
    profile = tempfile.mkdtemp(prefix="trainsteps-chromium-")  # a fresh user-data-dir every session
    context = driver.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=ARGS, headless=True,
                                                        viewport={"width": 1280, "height": 1000})
    yield context
    context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser_context):
    """A fresh tab; fails the test on any console error or page error (CSP violations included)."""
    tab = browser_context.new_page()
    problems: list[str] = []
    expected = "Failed to load resource: the server responded with a status of 4"  # a refused value is a 4xx on purpose
    tab.on("console", lambda m: problems.append(m.text) if m.type == "error" and not m.text.startswith(expected) else None)
    tab.on("pageerror", lambda e: problems.append(str(e)))
    yield tab
    tab.close()
    assert not problems, problems


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


# ---- the static site (make site): build/site served by a plain static file server, Chromium with no network -----------
NO_NETWORK = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
"""Every host name fails to resolve except 127.0.0.1: the static page can only reach the folder it is served from."""


@pytest.fixture(scope="session")
def static_url():
    """build/site, built by tools/build_site.py unless it is up to date (its downloads are cached), served from 127.0.0.1."""
    import functools
    import importlib.util
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    spec = importlib.util.spec_from_file_location("build_site", Path(__file__).resolve().parents[2] / "tools" / "build_site.py")
    build_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_site)
    try:
        folder = build_site.build(build_site.DEFAULT_OUT, log=lambda *_: None)
    except build_site.BuildError as exc:
        pytest.skip(f"the static site cannot be built here: {exc}")

    class Files(SimpleHTTPRequestHandler):
        served: list[str] = []

        def log_message(self, format, *args):  # noqa: A002 - quiet; the paths are kept for the tests instead
            self.served.append(self.path)

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Files, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def offline_context(driver):
    """A Chromium of its own for the static site: no host but 127.0.0.1 resolves; every request it makes is recorded."""
    profile = tempfile.mkdtemp(prefix="trainsteps-chromium-static-")
    context = driver.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=[*ARGS, NO_NETWORK], headless=True,
                                                        viewport={"width": 1280, "height": 1000})
    context.requested = []
    context.on("request", lambda r: context.requested.append(r.url))
    yield context
    context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def static_page(offline_context, static_url):
    """One tab on the static site for a module's tests (the engine starts once; tests move between tabs by clicking).
    Fails on a console or page error, or a request that left the site."""
    tab = offline_context.new_page()
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: problems.append(str(e)))
    before = len(offline_context.requested)
    yield tab
    tab.close()
    outside = [url for url in offline_context.requested[before:] if not url.startswith(static_url)]
    assert not outside, outside
    assert not problems, problems
