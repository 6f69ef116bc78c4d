"""The static site's engine answers as `trainsteps web` does: trainsteps.web.inprocess (what the Web Worker calls in
Pyodide) against the server's route functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainsteps.web import inprocess
from trainsteps.web.routes import answer_post, answer_query, meta

ROOT = Path(__file__).resolve().parents[1]
SEED_001 = "num_examples=1047&per_device_train_batch_size=10&gradient_accumulation_steps=8&num_train_epochs=300&transformers=4.49.0"


@pytest.mark.parametrize("path, query", [("/api/plan", SEED_001), ("/api/compare", SEED_001), ("/api/solve", "global_batch=128&world_size=6"),
                                         ("/api/plan", "num_examples=abc"), ("/api/plan", SEED_001 + "&lang=zh")])
def test_a_query_gets_the_servers_status_and_json(path, query):
    status, text = inprocess.answer("GET", path, query)
    assert [status, json.loads(text)] == [int(answer_query(path, query)[0]), json.loads(json.dumps(answer_query(path, query)[1]))]


def test_a_repeated_query_is_answered_from_the_cache_with_the_same_text():
    first = inprocess.answer("GET", "/api/plan", SEED_001 + "&logging_steps=7")
    assert inprocess.answer("GET", "/api/plan", SEED_001 + "&logging_steps=7") is first


def test_a_posted_log_and_the_meta_are_the_servers():
    log = (ROOT / "tests" / "fixtures" / "logs" / "seed_003_4gpu.log").read_text(encoding="utf-8")
    body = json.dumps({"text": log, "settings": {"lang": "en"}})
    status, text = inprocess.answer("POST", "/api/explain", body=body)
    expected_status, expected = answer_post("/api/explain", body.encode())
    assert status == expected_status == 200 and json.loads(text) == json.loads(json.dumps(expected))
    assert json.loads(inprocess.answer("GET", "/api/meta")[1]) == meta()


@pytest.mark.parametrize("method, path", [("GET", "/api/explain"), ("POST", "/api/plan"), ("GET", "/etc/passwd")])
def test_a_request_no_route_takes_is_a_json_404(method, path):
    status, text = inprocess.answer(method, path)
    assert status == 404 and json.loads(text)["error"].startswith("nothing at")


def test_an_unexpected_failure_is_a_json_500_not_a_worker_that_stops(monkeypatch):
    import trainsteps.web.routes as routes

    monkeypatch.setattr(routes, "meta", lambda: 1 / 0)
    status, text = inprocess.answer("GET", "/api/meta")
    assert status == 500 and json.loads(text)["error"] == "internal error: ZeroDivisionError"


@pytest.mark.parametrize("lang, words", [("en", "which the page in your browser does not carry"), ("zh", "浏览器中的页面没有附带它")])
def test_a_package_the_browser_lacks_is_named_with_the_command_that_has_it(monkeypatch, lang, words):
    import trainsteps.web.routes as routes

    def without_numpy(path, query):
        raise ModuleNotFoundError("No module named 'numpy'", name="numpy")

    monkeypatch.setattr(routes, "answer_query", without_numpy)
    status, text = inprocess.answer("GET", "/api/plan", f"num_examples=5&lang={lang}")
    answer = json.loads(text)
    assert status == 400 and "numpy" in answer["error"] and words in answer["error"] and "trainsteps[data]" in answer["hint"]


def test_the_browser_takes_larger_config_files_than_the_server_and_only_when_asked(monkeypatch):
    from trainsteps.web import api

    monkeypatch.setattr(api, "MAX_CONFIG_BYTES", api.MAX_CONFIG_BYTES)  # restored after the test
    served = json.loads(inprocess.answer("GET", "/api/meta")[1])["limits"]
    assert served["config_bytes"] == 2 * 1024 * 1024
    inprocess.use_browser_limits()
    limits = json.loads(inprocess.answer("GET", "/api/meta")[1])["limits"]
    assert limits["config_bytes"] == inprocess.BROWSER_CONFIG_BYTES > served["config_bytes"]
    assert limits["log_bytes"] == served["log_bytes"]


def test_a_plan_asked_with_its_families_carries_the_comparison_the_compare_route_answers():
    status, plan = answer_query("/api/plan", SEED_001 + "&families=1")
    compare_status, compare = answer_query("/api/compare", SEED_001)
    assert (status, compare_status) == (200, 200)
    assert plan["web"]["families"] == compare["web"]["charts"]
    assert plan["run"] == answer_query("/api/plan", SEED_001)[1]["run"]  # the page key changes nothing in the plan
    assert "families" not in answer_query("/api/plan", SEED_001)[1]["web"]


def test_a_plan_whose_settings_the_comparison_refuses_is_still_answered_without_families():
    status, compare = answer_query("/api/compare", SEED_001 + "&step_time=2")
    assert status == 400 and compare["id"] == "cli.error.option_with_compare"
    status, plan = answer_query("/api/plan", SEED_001 + "&step_time=2&families=1")
    assert status == 200 and plan["web"]["families"] is None and plan["time"]
