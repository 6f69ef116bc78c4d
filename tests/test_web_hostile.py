"""The web server refuses what another site's page, a crafted request or a posted config could make it do."""

import http.client
import json
import threading

import pytest

from trainsteps.web import server as server_module
from trainsteps.web.routes import answer_post
from trainsteps.web.server import make_server

PLAN = "/api/plan?num_examples=1000&per_device_train_batch_size=8"


@pytest.fixture(scope="module")
def port():
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _ask(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=body, headers={"Host": f"127.0.0.1:{port}", **(headers or {})})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


@pytest.mark.parametrize("headers", [{"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                                     {"Origin": "https://evil.example"}, {"Origin": "null"}])
def test_an_api_request_from_another_sites_page_is_refused(port, headers):
    status, body = _ask(port, "GET", PLAN, headers=headers)
    assert status == 403 and "own page" in json.loads(body)["error"]
    status, _ = _ask(port, "POST", "/api/explain", json.dumps({"text": "x"}), {"Content-Type": "application/json", **headers})
    assert status == 403


def test_the_pages_own_requests_and_plain_clients_are_answered(port):
    assert _ask(port, "GET", PLAN)[0] == 200
    assert _ask(port, "GET", PLAN, headers={"Sec-Fetch-Site": "same-origin", "Origin": f"http://127.0.0.1:{port}"})[0] == 200
    assert _ask(port, "GET", "/", headers={"Sec-Fetch-Site": "cross-site"})[0] == 200  # the page itself may be linked to


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_post_body_that_is_not_declared_json_is_refused(port, kind):
    headers = {"Content-Type": kind} if kind else {}
    status, body = _ask(port, "POST", "/api/explain", json.dumps({"text": "x"}), headers)
    assert status == 415 and "application/json" in json.loads(body)["error"]


def test_a_host_with_a_user_part_and_a_doubled_length_are_refused(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("GET", PLAN, skip_host=True)
    connection.putheader("Host", "localhost:80@evil.example")
    connection.endheaders()
    assert connection.getresponse().status == 421
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("POST", "/api/explain", skip_host=True)
    for name, value in (("Host", f"127.0.0.1:{port}"), ("Content-Type", "application/json"), ("Content-Length", "12"),
                        ("Content-Length", "2")):
        connection.putheader(name, value)
    connection.endheaders(b'{"text": "x"}')
    assert connection.getresponse().status == 400
    connection.close()


def test_the_answer_cache_is_capped_in_bytes(monkeypatch):
    server = make_server("127.0.0.1", 0)
    try:
        monkeypatch.setattr(server_module, "CACHE_BYTES", 1000)
        for i in range(20):
            server.cache_put(("p", str(i)), (200, b"x" * 100))
        server.cache_put(("big", ""), (200, b"x" * 600))  # over an eighth of the cap: never kept
        assert server._cached_bytes <= 1000 and server.cache_get(("big", "")) is None and server.cache_get(("p", "19")) is not None
    finally:
        server.server_close()


def test_a_posted_config_cannot_read_a_file_outside_its_own_folder(tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"text": "a"}\n{"text": "b"}\n')
    config = (f"base_model: m\ndatasets:\n  - path: {secret}\n    type: completion\nsequence_len: 512\nmicro_batch_size: 1\n"
              "gradient_accumulation_steps: 1\nnum_epochs: 1\n")
    status, data = answer_post("/api/config", json.dumps({"files": [{"name": "ax.yml", "text": config}]}).encode())
    assert status == 400 and "run" not in data and "not a local file" in data["error"]


def _lf_config(dataset_dir: str) -> str:
    return (f"stage: sft\ndo_train: true\nmodel_name_or_path: m\ndataset: secret\ndataset_dir: {dataset_dir}\ntemplate: qwen\n"
            "finetuning_type: lora\noutput_dir: o\nper_device_train_batch_size: 1\nnum_train_epochs: 1\n")


def test_a_posted_llamafactory_config_cannot_point_its_dataset_dir_outside_its_folder(tmp_path):
    (tmp_path / "dataset_info.json").write_text(json.dumps({"secret": {"file_name": "secret.json"}}))
    (tmp_path / "secret.json").write_text(json.dumps([{"instruction": "a", "input": "", "output": "b"}] * 2))
    status, data = answer_post("/api/config", json.dumps({"files": [{"name": "sft.yaml", "text": _lf_config(str(tmp_path))}]}).encode())
    assert status == 400 and "run" not in data and "cannot find" in data["error"]


def test_a_posted_swift_launch_line_cannot_count_a_server_file(tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"messages": []}\n{"messages": []}\n')
    launch = f"swift sft --model m --dataset {secret} --num_train_epochs 1"
    status, data = answer_post("/api/config", json.dumps({"files": [], "settings": {"launch": launch}}).encode())
    assert status == 400 and "run" not in data


def test_a_posted_config_whose_scheduler_settings_are_an_alias_bomb_is_refused_at_once():
    """A few hundred bytes of nested YAML aliases under `lr_scheduler_kwargs`: read by the guarded reader before the
    page's schedule reads it, never expanded (the plain safe loader would let json.dumps expand it to 10^9 values)."""
    import time

    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))
    config = bomb + "lr_scheduler_kwargs: {k: *i}\nlearning_rate: 2e-5\n"
    started = time.process_time()
    status, data = answer_post("/api/config", json.dumps({"files": [{"name": "sft.yaml", "text": config}]}).encode())
    assert time.process_time() - started < 2.0
    assert status == 400 and "run" not in data and "expands to more than" in data["error"]
