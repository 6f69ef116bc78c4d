"""The static calculator (`make site`) in headless Chromium: its first load and each later plan.

First load: a fresh browser profile (nothing cached) opens the seed-001 link on the folder served from 127.0.0.1;
timed from navigation until the plan and its --compare-versions table are drawn (Pyodide downloaded and started, the
wheels installed, the plan and its release families answered in the Web Worker). A second load in the same profile (files from the
browser's cache) is timed the same way. Later plans: num_examples is changed in the form, and the page's own timer
(window.__computed: from the request to the drawn result, one request bringing the plan and its release
families, the 300 ms typing pause excluded) is read.

Run: `.venv/bin/python bench/bench_site.py [--loads 3] [--plans 20]`. Targets: first load <= 10 s, each later plan <= 200 ms.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import shutil
import statistics
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("TRAINSTEPS_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]
SEED001 = "?num_examples=1047&per_device_train_batch_size=10&gradient_accumulation_steps=8&num_train_epochs=300&transformers=4.49.0"
DRAWN = "() => document.querySelector('#compare .bar.current') && document.querySelector('#cli-text')"


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def build() -> Path:
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "tools" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build(module.DEFAULT_OUT, log=lambda *_: None)


def timed_load(page, url: str) -> tuple[float, float, dict]:
    """(seconds to the drawn plan, seconds the engine took to start as the worker reports it, seconds per start stage)"""
    began = time.perf_counter()
    page.goto(url)
    page.wait_for_function(DRAWN, timeout=120_000, polling=20)
    stages = page.evaluate("() => window.__stages")  # [stage, ms since the worker began], in order
    spent = {stage: (stages[i + 1][1] - at) / 1000 for i, (stage, at) in enumerate(stages[:-1])}
    return time.perf_counter() - began, page.evaluate("() => window.__engine.ms") / 1000, spent


def later_plans(page, count: int) -> list[float]:
    times = []
    for i in range(count):
        done = page.evaluate("() => window.__computed.length")
        page.fill("#f-num_examples", str(1048 + i))
        page.wait_for_function("n => window.__computed.length > n", arg=done, timeout=30_000, polling=5)
        times.append(page.evaluate("() => window.__computed[window.__computed.length - 1].ms"))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=3, help="first loads, each with a fresh profile")
    parser.add_argument("--plans", type=int, default=20, help="later plans timed in the last page")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = build()
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    server, url = serve(folder)
    first, warm, engine, stages = [], [], [], []
    with sync_playwright() as p:
        for _ in range(args.loads):
            profile = tempfile.mkdtemp(prefix="trainsteps-bench-")
            context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=ARGS, headless=True,
                                                           viewport={"width": 1280, "height": 1000})
            page = context.new_page()
            seconds, started, spent = timed_load(page, url + SEED001)
            first.append(seconds)
            engine.append(started)
            stages.append(spent)
            mode = page.evaluate("() => window.__engine.started")
            warm.append(timed_load(page, url + SEED001 + "&logging_steps=50")[0])
            if len(first) == args.loads:
                plans = later_plans(page, args.plans)
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
    server.shutdown()
    print(f"static site {folder} ({size / 1e6:.1f} MB), Chromium {CHROMIUM}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"first load, fresh profile (s):      {', '.join(f'{s:.2f}' for s in first)}   median {statistics.median(first):.2f}")
    print(f"  of which the engine starting (s): {', '.join(f'{s:.2f}' for s in engine)}   (from the {mode})")
    for stage, says in (("runtime", "Pyodide"), ("wheels", "wheels installed"), ("engine", "routes imported")):
        print(f"    {says + ' (s):':31} {', '.join(f'{spent.get(stage, 0):.2f}' for spent in stages)}")
    print(f"second load, cached files (s):      {', '.join(f'{s:.2f}' for s in warm)}   median {statistics.median(warm):.2f}")
    plans.sort()
    print(f"later plans (ms, {len(plans)}: plan and families in one request + drawing): median {statistics.median(plans):.0f}, "
          f"p90 {plans[int(0.9 * (len(plans) - 1))]:.0f}, max {plans[-1]:.0f}")


if __name__ == "__main__":
    main()
