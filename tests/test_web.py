"""The web calculator answers with the same plan as the library, over HTTP on localhost."""

import json
import threading
import urllib.error
import urllib.request

import pytest

import trainsteps
from trainsteps.web.server import make_server


@pytest.fixture(scope="module")
def base_url():
    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


def test_the_api_returns_the_library_plan(base_url):
    status, body = get(f"{base_url}/api/plan?num_examples=1047&per_device_train_batch_size=10"
                       "&gradient_accumulation_steps=8&num_train_epochs=300&transformers=4.49.0&lang=zh")
    expected = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,
                               num_train_epochs=300, transformers="4.49.0").to_dict("zh")
    assert status == 200 and json.loads(body) == json.loads(json.dumps(expected))


def test_the_compare_route_lists_every_family(base_url):
    status, body = get(f"{base_url}/api/compare?num_examples=1047&per_device_train_batch_size=10&gradient_accumulation_steps=8")
    assert status == 200 and len(json.loads(body)["comparison"]) == 6


@pytest.mark.parametrize("query, words", [("num_examples=abc", "must be a number"), ("num_examples=0", "at least 1"),
                                          ("bogus=1", "unknown setting")])
def test_bad_settings_are_a_400_with_a_hint(base_url, query, words):
    status, body = get(f"{base_url}/api/plan?{query}")
    data = json.loads(body)
    assert status == 400 and words in data["error"] and data["hint"]


def test_the_page_is_served(base_url):
    status, body = get(f"{base_url}/")
    assert status == 200 and "/api/plan" in body and "中文" in body
