"""The calculator in a real Chromium: every tab shows what the CLI prints for the same settings (its text, character
for character, and its numbers formatted as it formats them), the LR plot marks the plan's epoch ends, links
round-trip, phones get no horizontal scroll, Chinese renders. Expected values come from the CLI run in this test."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner

from tests.browser.conftest import shot
from trainsteps.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
SEEDS = Path("/work/shared/seeds")
LF = ROOT / "examples" / "llamafactory"
ISSUE_URL = "/?num_examples=1047&per_device_train_batch_size=10&gradient_accumulation_steps=8&num_train_epochs=300&transformers=4.49.0"


def run_cli(*args: str, lang: str = "en") -> tuple[dict, str]:
    """The CLI's JSON and its text (with the derivation), for the same arguments."""
    runner = CliRunner()
    data = runner.invoke(cli, [*args, "--format", "json", "--lang", lang], catch_exceptions=False)
    assert data.exit_code == 0, data.output
    explains = args[0] in ("plan", "solve") and "--global-batch" not in args  # layouts have no derivation
    human_args = [*args, "--lang", lang] + (["--explain"] if explains else [])
    text = runner.invoke(cli, human_args, catch_exceptions=False)
    return json.loads(data.stdout), text.stdout.rstrip("\n")


def flags(settings: dict) -> list[str]:
    out = []
    for key, value in settings.items():
        name = "--" + {"transformers": "transformers", "split": "split"}.get(key, key).replace("_", "-")
        out += [name] if value == "true" else [name, str(value)]
    return out


def wait_for_text(page, expected: str, timeout: int = 15000) -> None:
    """Wait until the page shows the CLI's text; on a timeout, compare what it shows for a readable failure."""
    try:
        page.wait_for_function("t => { const n = document.querySelector('#cli-text'); return n && n.textContent === t; }",
                               arg=expected, timeout=timeout)
    except Exception:  # noqa: BLE001 - report the difference instead of a bare timeout
        error = page.locator("#error").all_text_contents()
        shown = page.locator("#cli-text").all_text_contents()
        assert shown == [expected], error


def figure(page, key: str) -> str:
    return page.locator(f'[data-figure="{key}"] .v').text_content()


PLAN_CASES = {
    "seed001-4.49.0": dict(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300,
                           transformers="4.49.0"),
    "seed001-4.52.4": dict(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300,
                           transformers="4.52.4"),
    "seed003-4.42.4": dict(num_examples=128770, per_device_train_batch_size=8, gradient_accumulation_steps=8, world_size=4,
                           num_train_epochs=3, transformers="4.42.4"),
    "seed003-5.23.0": dict(num_examples=128770, per_device_train_batch_size=8, gradient_accumulation_steps=8, world_size=4,
                           num_train_epochs=3, transformers="5.23.0"),
    "stream": dict(streaming="true", num_examples=1047, max_steps=40, per_device_train_batch_size=10, gradient_accumulation_steps=8),
    "events": dict(num_examples=5000, per_device_train_batch_size=4, gradient_accumulation_steps=4, num_train_epochs=2,
                   warmup_steps=30, logging_steps=10, eval_strategy="steps", eval_steps=200, save_steps=250, transformers="4.46.3"),
}


@pytest.mark.parametrize("name", PLAN_CASES)
def test_the_plan_tab_shows_the_clis_numbers(page, base_url, name):
    settings = PLAN_CASES[name]
    data, text = run_cli("plan", *flags(settings))
    page.goto(f"{base_url}/?{urlencode(settings)}")
    wait_for_text(page, text)
    run = data["run"]
    assert figure(page, "f_steps") == f"{run['optimizer_steps']:,} / {run['max_steps']:,}"
    if run["rank_split"] is None:
        assert figure(page, "f_epochs") == f"{run['epochs_completed']:g} / {run['epochs_planned']:g}"
    assert figure(page, "f_samples") == f"{run['samples_seen']:,}"
    warnings = page.locator(".warn").all_text_contents()
    assert warnings == [f"[{w['code']}] {w['message']}" for w in data["warnings"]]
    shot(page, f"plan-{name}-1280")


def test_the_issue_link_renders_the_plan_and_its_plot_without_a_click(page, base_url):
    data, text = run_cli("plan", *flags(PLAN_CASES["seed001-4.49.0"]))
    page.goto(base_url + ISSUE_URL)
    wait_for_text(page, text)
    assert figure(page, "f_steps") == "3,900 / 3,900" == f"{data['run']['optimizer_steps']:,} / {data['run']['max_steps']:,}"
    assert figure(page, "f_epochs").startswith("278.61 ")
    assert "278.61" in page.locator("#stop-caption").text_content()
    page.wait_for_selector("#chart-events canvas")
    drawn = page.evaluate("""() => { const c = window.__charts.events; return {
        epochs: c.drawn.epochs, stop: c.drawn.stop,
        expected: c.drawn.epochs.map(e => Math.round(c.u.valToPos(e.step, 'x', true))),
        width: c.u.bbox.width, left: c.u.bbox.left, lr: c.u.data[1].length }; }""")
    assert [e["step"] for e in drawn["epochs"]] == data["run"]["epoch_end_steps"]  # 279 epoch ends, where the plan says
    assert [e["px"] for e in drawn["epochs"]] == drawn["expected"]
    assert all(drawn["left"] <= e["px"] <= drawn["left"] + drawn["width"] for e in drawn["epochs"])
    assert drawn["stop"]["step"] == 3900 and drawn["lr"] > 100
    shot(page, "issue-link-1280")


def test_the_lr_curve_is_the_schedulers(page, base_url):
    from trainsteps.frameworks.hf.lr_schedule import LrSchedule

    settings = dict(PLAN_CASES["seed001-4.49.0"], lr_scheduler_type="cosine_with_min_lr", learning_rate="2e-4",
                    lr_scheduler_kwargs='{"min_lr_rate": 0.1}', warmup_ratio="0.05")
    data, _ = run_cli("plan", *flags({k: v for k, v in settings.items() if not k.startswith(("lr_", "learning"))}))
    page.goto(f"{base_url}/?{urlencode(settings)}")
    page.wait_for_selector("#chart-events canvas")
    xs, ys = page.evaluate("() => [window.__charts.events.u.data[0], window.__charts.events.u.data[1]]")
    schedule = LrSchedule("cosine_with_min_lr", data["run"]["warmup_steps"], data["run"]["max_steps"], 2e-4, {"min_lr_rate": 0.1})
    assert xs[0] == 0 and xs[-1] == data["run"]["max_steps"]
    assert ys == pytest.approx([schedule.rate(x) for x in xs])


def test_a_link_round_trips_and_back_and_forward_work(page, base_url):
    first, first_text = run_cli("plan", *flags(PLAN_CASES["seed001-4.49.0"]))
    changed = dict(PLAN_CASES["seed001-4.49.0"], num_examples=2000)
    _, changed_text = run_cli("plan", *flags(changed))
    page.goto(base_url + ISSUE_URL)
    wait_for_text(page, first_text)
    page.fill("#f-num_examples", "2000")
    wait_for_text(page, changed_text)
    page.wait_for_function("() => location.search.includes('num_examples=2000')")
    link = page.url
    fresh = page.context.new_page()
    fresh.goto(link)  # opened from the link: the plan renders with no click
    wait_for_text(fresh, changed_text)
    assert fresh.input_value("#f-num_examples") == "2000"
    fresh.close()
    page.go_back()
    wait_for_text(page, first_text)
    assert page.input_value("#f-num_examples") == "1047"
    page.go_forward()
    wait_for_text(page, changed_text)


def test_one_change_of_a_plan_is_one_request_that_brings_its_release_families(page, base_url):
    compared, _ = run_cli("plan", *flags(dict(PLAN_CASES["seed001-4.49.0"], num_examples=2000)), "--compare-versions")
    _, changed_text = run_cli("plan", *flags(dict(PLAN_CASES["seed001-4.49.0"], num_examples=2000)))
    page.goto(base_url + ISSUE_URL)
    page.wait_for_selector("#compare .bar.current")
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/api/" in request.url else None)
    page.fill("#f-num_examples", "2000")
    wait_for_text(page, changed_text)
    shown = page.locator("#compare table.compare tr td:nth-child(3)").all_text_contents()
    assert shown == [f"{row['optimizer_steps']:,}" if row["optimizer_steps"] is not None else "-" for row in compared["comparison"]]
    assert len(asked) == 1 and "/api/plan?" in asked[0] and "families=1" in asked[0]


def test_chinese_renders_and_the_switch_keeps_the_settings(page, base_url):
    _, text_zh = run_cli("plan", *flags(PLAN_CASES["seed003-4.42.4"]), lang="zh")
    page.goto(f"{base_url}/?{urlencode(PLAN_CASES['seed003-4.42.4'])}")
    page.wait_for_selector("#cli-text")
    page.select_option("#lang", "zh")
    wait_for_text(page, text_zh)
    assert page.locator("#tab-plan").text_content() == "规划"
    assert "lang=zh" in page.url and "num_examples=128770" in page.url
    assert page.input_value("#f-world_size") == "4"
    shot(page, "plan-zh-1280")


def test_errors_name_the_field_not_the_cli_flag(page, base_url):
    page.goto(f"{base_url}/?num_examples=abc&per_device_train_batch_size=10")
    page.wait_for_selector("#error")
    words = page.locator("#error").text_content()
    assert "num_examples" in words and "--" not in words
    page.goto(f"{base_url}/?num_train_epochs=1e400&num_examples=5")
    page.wait_for_selector("#error")
    assert "num_train_epochs" in page.locator("#error").text_content()


def test_the_config_tab_plans_a_llamafactory_yaml(page, base_url):
    data, text = run_cli("plan", str(LF / "sft_lora.yaml"), "--transformers", "4.49.0")
    page.goto(f"{base_url}/?tab=config&transformers=4.49.0")
    page.fill("#config-name", "sft_lora.yaml")
    page.fill("#config-text", (LF / "sft_lora.yaml").read_text())
    page.set_input_files("#config-files", [str(LF / "data" / "dataset_info.json"), str(LF / "data" / "demo_alpaca.json")])
    page.wait_for_selector("#cli-text")
    shown = page.locator("#cli-text").text_content()
    banner = text.index("Banner, as transformers")
    assert shown.endswith(text[banner:])  # the plan, word for word; the file list above it names the uploaded files
    assert shown[:shown.index("Banner, as transformers")] == text[:banner].replace(str(LF / "sft_lora.yaml"), "sft_lora.yaml")
    run = data["run"]
    assert figure(page, "f_steps") == f"{run['optimizer_steps']:,} / {run['max_steps']:,}"
    page.wait_for_selector("#chart-events canvas")  # the YAML's cosine schedule is drawn
    assert page.evaluate("() => window.__charts.events.u.data[1].length") > 100
    shot(page, "config-llamafactory-1280")


LOGS = [SEEDS / "001_da0d5ce1fe3e06b2.txt", SEEDS / "003_7f500e4ac564ddde.txt",  # the whole pastes, where the machine has them
        ROOT / "tests" / "fixtures" / "logs" / "seed_001_1047.log", ROOT / "tests" / "fixtures" / "logs" / "seed_003_4gpu.log"]


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_the_explain_tab_explains_a_pasted_log(page, base_url, path):
    seed = path.name
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    log = path.read_text(encoding="utf-8")
    _, text = run_cli("explain", "--text", log)
    page.goto(f"{base_url}/?tab=explain")
    page.fill("#log-text", log)
    page.click("#run")
    wait_for_text(page, text)
    shot(page, f"explain-{seed[:3]}-1280")


SOLVE_CASES = {
    "stream-epochs": dict(streaming="true", num_examples=1047, epochs=3, per_device_train_batch_size=10, gradient_accumulation_steps=8),
    "tokens": dict(streaming="true", dataset_tokens=1000000000, seq_length=2048, epochs=1, per_device_train_batch_size=4,
                   gradient_accumulation_steps=8, world_size=8),
    "layouts": dict(global_batch=128, world_size=6),
    "time-budget": dict(streaming="true", num_examples=100000, per_device_train_batch_size=4, gradient_accumulation_steps=8, world_size=8,
                        time_budget="12h", step_time="4s"),
}


@pytest.mark.parametrize("name", SOLVE_CASES)
def test_the_solve_tab_shows_the_clis_answer(page, base_url, name):
    settings = SOLVE_CASES[name]
    _, text = run_cli("solve", *flags(settings))
    page.goto(f"{base_url}/?{urlencode({'tab': 'solve', **settings})}")
    wait_for_text(page, text)
    shot(page, f"solve-{name}-1280")


PRETRAIN_CASES = {
    "megatron": dict(framework="megatron", train_tokens=32017905665, seq_length=2048, global_batch_size=1024, micro_batch_size=4,
                     world_size=64, train_iters=15000),
    "neox": dict(framework="neox", train_tokens=32017905665, seq_length=2048, train_batch_size=1024, micro_batch_size=8,
                 world_size=128, train_iters=15267),
    "lightning": dict(framework="lightning", num_examples=100000, per_device_train_batch_size=8, gradient_accumulation_steps=4,
                      max_epochs=3, world_size=2),
}


@pytest.mark.parametrize("name", PRETRAIN_CASES)
def test_the_pretraining_tab_shows_the_clis_plan(page, base_url, name):
    settings = PRETRAIN_CASES[name]
    data, text = run_cli("plan", *flags(settings))
    page.goto(f"{base_url}/?{urlencode({'tab': 'pretrain', **settings})}")
    wait_for_text(page, text)
    if name != "lightning":
        assert figure(page, "f_iterations") == f"{data['run']['optimizer_steps']:,}"
        assert figure(page, "f_tokens") == f"{data['run']['tokens_seen']:,}"
    shot(page, f"pretrain-{name}-1280")


@pytest.mark.parametrize("tab, query", [("plan", ISSUE_URL[2:]), ("config", ""), ("explain", ""), ("solve", ""), ("pretrain", ""),
                                        ("time", ""), ("plan", "lang=zh&" + ISSUE_URL[2:])])
def test_a_phone_gets_no_horizontal_scroll(page, base_url, tab, query):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base_url}/?tab={tab}&{query}")
    page.wait_for_timeout(300)
    if tab not in ("config", "explain"):
        page.wait_for_selector("#cli-text")
    if tab == "explain" and (SEEDS / "003_7f500e4ac564ddde.txt").exists():
        page.fill("#log-text", (SEEDS / "003_7f500e4ac564ddde.txt").read_text(encoding="utf-8"))
        page.click("#run")
        page.wait_for_selector("#cli-text")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert page.evaluate("() => document.body.scrollWidth") <= 390
    shot(page, f"phone-{tab}{'-zh' if 'zh' in query else ''}-390")


TIME_CASES = {
    "seed001-4s": dict(PLAN_CASES["seed001-4.49.0"], step_time="4s"),
    "flops-h100": dict(num_examples=20000, per_device_train_batch_size=4, gradient_accumulation_steps=8, world_size=8, num_train_epochs=2,
                       seq_length=2048, params="7.6B", gpu="h100-sxm", mfu="0.3-0.45"),
}


@pytest.mark.parametrize("name", TIME_CASES)
def test_the_time_tab_says_the_clis_hours(page, base_url, name):
    from trainsteps.timing.durations import format_duration

    settings = TIME_CASES[name]
    data, text = run_cli("plan", *flags(settings))
    page.goto(f"{base_url}/?{urlencode({'tab': 'time', **settings})}")
    wait_for_text(page, text)
    assert page.locator('[data-figure="f_wall"] .v').text_content() == format_duration(data["time"]["wall_seconds"]["expected"])
    shot(page, f"time-{name}-1280")


@pytest.mark.parametrize("query", [ISSUE_URL[2:], "tab=pretrain", "tab=time&lang=zh"])
def test_360_px_is_the_narrowest_supported_width(page, base_url, query):
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{base_url}/?{query}")
    page.wait_for_selector("#cli-text")
    page.wait_for_timeout(200)
    assert page.evaluate("() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)") <= 360


@pytest.mark.parametrize("entry", ["verl", "verl-sft", "openrlhf", "easyr1", "trl-ppo", "trl-grpo", "trl-kto", "unsloth"])
def test_every_rl_trainer_opens_from_the_picker_and_shows_the_clis_plan(page, base_url, entry, tmp_path):
    from urllib.parse import parse_qsl, urlparse

    page.goto(base_url + "/")
    page.select_option("#wrapper", entry)
    page.click("#open-example")
    page.wait_for_selector("#cli-text")
    values = dict(parse_qsl(urlparse(page.url).query))
    args = []
    config = page.input_value("#config-text")
    if config.strip():  # a template: the CLI reads the same text under the same name
        path = tmp_path / page.input_value("#config-name")
        path.write_text(config)
        args.append(str(path))
    args += flags({k: v for k, v in values.items() if k in ("framework", "launch", "num_examples")})
    data, text = run_cli("plan", *args)
    first = text.splitlines()[0]  # the answer line (RL: the trainer and its steps)
    page.wait_for_function("t => { const n = document.querySelector('#cli-text'); return n && n.textContent.split('\\n')[0] === t; }",
                           arg=first, timeout=15000)
    shown = page.locator("#cli-text").text_content()
    if "training_steps" in data["run"]:
        assert f"{data['run']['training_steps']:,}" in shown
    shot(page, f"config-rl-{entry}-1280")


def test_explain_shows_cards_its_steps_over_time_and_a_command_that_runs_as_pasted(page, base_url):
    log = (ROOT / "tests" / "fixtures" / "logs" / "corpus" / "lf-8261-nccl-timeout.log").read_text(encoding="utf-8")
    data, text = run_cli("explain", "--text", log)
    run = data["runs"][0]
    page.goto(f"{base_url}/?tab=explain")
    page.fill("#log-text", log)
    page.click("#run")
    wait_for_text(page, text)
    assert figure(page, "x_status") == f"crashed · step {run['end_step']:,}"
    crash = next(f["text"] for f in run["facts"] if f["code"] == "LOG_CRASHED")
    assert crash in page.locator("#explain-wrong").text_content()
    assert page.evaluate("() => window.__charts.stepsOverTime.points") == len(run["time"]["trace"])
    full = page.get_attribute("#cli-line", "data-full")
    assert full.startswith("trainsteps explain - <<'LOG'\n") and full.endswith("\nLOG")  # the log on stdin: runs as pasted
    assert len(page.locator("#cli-line").text_content().split("\n")) < len(full.split("\n"))  # shown by its first lines
    shot(page, "explain-cards-crashed-1280")
