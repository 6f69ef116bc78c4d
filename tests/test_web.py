"""The web calculator's server: the CLI's JSON over HTTP on localhost, and every hostile request answered in JSON."""

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainsteps.cli.main import cli
from trainsteps.web import server as server_module
from trainsteps.web.routes import answer_post, answer_query
from trainsteps.web.server import make_server

ROOT = Path(__file__).resolve().parents[1]
SEED001 = "num_examples=1047&per_device_train_batch_size=10&gradient_accumulation_steps=8&num_train_epochs=300&transformers=4.49.0"


@pytest.fixture(scope="module")
def served():
    server = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def base_url(served):
    return f"http://127.0.0.1:{served.server_address[1]}"


def get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8"), dict(error.headers)


def cli_json(*args):
    result = CliRunner().invoke(cli, [*args, "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_api_returns_the_clis_json(base_url):
    status, body, _ = get(f"{base_url}/api/plan?{SEED001}&lang=zh")
    expected = cli_json("plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
                        "--num-train-epochs", "300", "--transformers", "4.49.0", "--lang", "zh")
    data = json.loads(body)
    web = data.pop("web")
    assert status == 200 and data == expected
    assert web["charts"]["epochs_completed_text"] == f"{expected['run']['epochs_completed']:g}" == "278.61"
    assert web["charts"]["steps_text"] == f"{expected['run']['optimizer_steps']:,}" == "3,900"


def test_the_compare_route_lists_every_family_with_the_clis_formatting(base_url):
    status, body, _ = get(f"{base_url}/api/compare?{SEED001}")
    data = json.loads(body)
    assert status == 200 and len(data["comparison"]) == 6
    assert [f["steps_text"] for f in data["web"]["charts"]["families"]] == [f"{r['optimizer_steps']:,}" for r in data["comparison"]]


def test_the_explain_and_config_routes_run_the_cli(base_url):
    log = (ROOT / "tests" / "fixtures" / "hf" / "transformers-4.49.0.json").read_text()
    banner = json.loads(log)["runs"][0]["log_text"]  # a real Trainer log, recorded by tools/record_hf.py
    status, data = answer_post("/api/explain", json.dumps({"text": banner}).encode())
    expected = cli_json("explain", "--text", banner)
    data.pop("web")
    assert status == 200 and data == expected
    lf = ROOT / "examples" / "llamafactory"
    files = [{"name": "sft_lora.yaml", "text": (lf / "sft_lora.yaml").read_text()},
             {"name": "dataset_info.json", "text": (lf / "data" / "dataset_info.json").read_text()},
             {"name": "demo_alpaca.json", "text": (lf / "data" / "demo_alpaca.json").read_text(), "role": "data"}]
    status, data = answer_post("/api/config", json.dumps({"files": files, "settings": {"transformers": "4.49.0"}}).encode())
    expected = cli_json("plan", str(lf / "sft_lora.yaml"), "--transformers", "4.49.0")
    assert status == 200 and data["run"] == expected["run"] and data["banner"] == expected["banner"]
    assert data["web"]["charts"]["lr"]["scheduler"] == "cosine"  # the YAML's lr_scheduler_type


@pytest.mark.parametrize("query, words", [
    ("num_examples=abc", "must be a whole number"), ("num_examples=0", "at least 1"), ("bogus=1", "unknown setting"),
    ("num_examples=5&num_train_epochs=nan", "finite"), ("num_examples=5&num_train_epochs=inf", "finite"),
    ("num_examples=5&num_train_epochs=1e400", "finite"), ("num_examples=5&num_train_epochs=-Infinity", "finite"),
    ("num_examples=5&streaming=maybe", "true or false"), ("num_examples=1e400", "whole number"),
    ("num_examples=" + "9" * 40, "digits"), ("num_examples=5&warmup_ratio=NaN", "finite"),
    ("num_examples=5&lr_scheduler_kwargs=%7B%22min_lr_rate%22%3A+NaN%7D", "lr_scheduler_kwargs"),
    ("num_examples=5&learning_rate=inf", "finite"), ("num_examples=5&lr_scheduler_type=magic", "scheduler"),
    ("data_prefix=/etc/passwd", "unknown setting"), ("tokenizer_path=/", "unknown setting"), ("num_examples=5&transformers=%00", "one line"),
])
def test_bad_values_are_a_json_400_worded_for_the_page(base_url, query, words):
    status, body, headers = get(f"{base_url}/api/plan?{query}")
    data = json.loads(body)
    assert status == 400 and words in data["error"] and data["hint"] and headers["Content-Type"].startswith("application/json")
    assert "--" not in data["error"] + data["hint"]


def test_the_time_fields_the_page_offers_reach_the_plan_as_the_clis_options_do(base_url):
    query = f"{SEED001}&params=7B&seq_length=512&gpu=h100-sxm&stack=megatron&activation_checkpointing=full&peak_tflops=500"
    status, body, _ = get(f"{base_url}/api/plan?{query}")
    data = json.loads(body)
    data.pop("web")
    expected = cli_json("plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
                        "--num-train-epochs", "300", "--transformers", "4.49.0", "--params", "7B", "--seq-length", "512", "--gpu", "h100-sxm",
                        "--stack", "megatron", "--activation-checkpointing", "full", "--peak-tflops", "500")
    plain = cli_json("plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
                     "--num-train-epochs", "300", "--transformers", "4.49.0", "--params", "7B", "--seq-length", "512", "--gpu", "h100-sxm")
    assert status == 200 and data == expected and expected["time"] != plain["time"]


def test_a_misspelt_setting_is_refused_with_the_closest_name_the_page_takes(base_url):
    status, body, _ = get(f"{base_url}/api/plan?{SEED001}&stepp_time=4s")
    data = json.loads(body)
    assert status == 400 and "stepp_time" in data["error"] and "step_time" in data["hint"]
    status, body, _ = get(f"{base_url}/api/plan?{SEED001}&zzz=4")
    assert status == 400 and "RunSpec" in json.loads(body)["hint"]


def test_every_answer_carries_the_security_headers_and_no_version(base_url):
    for path in ("/", "/app.js", "/api/plan?num_examples=5", "/api/plan?num_examples=x", "/nothing"):
        _, _, headers = get(base_url + path)
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "default-src 'none'" in headers["Content-Security-Policy"] and "unsafe-inline" not in headers["Content-Security-Policy"]
        assert headers["Cache-Control"]
        assert headers["Server"] == "trainsteps"


def test_the_page_and_its_vendored_chart_library_are_served(base_url):
    status, body, _ = get(f"{base_url}/")
    assert status == 200 and 'src="app.js"' in body and "中文" in body and "<script>" not in body  # no inline script: the CSP allows none
    status, body, _ = get(f"{base_url}/vendor/uPlot.iife.min.js")
    assert status == 200 and "uPlot" in body
    assert "MIT" in get(f"{base_url}/vendor/uPlot.LICENSE")[1]


def test_a_foreign_host_name_is_refused(served):
    port = served.server_address[1]
    for host, expected in (("evil.example", 421), (f"attacker.test:{port}", 421), (f"localhost:{port}", 200), (f"127.0.0.1:{port}", 200)):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.putrequest("GET", "/api/meta", skip_host=True)
        connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == expected and json.loads(response.read())
        connection.close()


def test_listening_on_every_interface_takes_any_host_name_and_a_named_host_adds_itself():
    assert server_module.allowed_hosts_for("0.0.0.0") is None
    assert server_module.allowed_hosts_for("box.lan") == server_module.LOOPBACK | {"box.lan"}


def test_an_unexpected_failure_is_a_json_500_not_a_dropped_connection(base_url, monkeypatch):
    import trainsteps.web.routes as routes

    monkeypatch.setattr(routes, "answer_query", lambda path, query: 1 / 0)
    status, body, _ = get(f"{base_url}/api/solve?unique=1")
    assert status == 500 and "internal error" in json.loads(body)["error"]


def test_bodies_over_the_caps_are_refused_with_a_pointer_to_the_cli(served):
    port = served.server_address[1]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("POST", "/api/explain")
    connection.putheader("Content-Length", str(50 * 1024 * 1024))
    connection.endheaders()  # the body is never sent: the server answers from the length alone
    response = connection.getresponse()
    assert response.status == 413 and "trainsteps explain FILE" in json.loads(response.read())["hint"]
    connection.close()
    status, data = answer_post("/api/explain", json.dumps({"text": "x" * (9 * 1024 * 1024)}).encode())
    assert status == 413 and "trainsteps explain FILE" in data["hint"]
    for raw in (b"not json", b"[1]", b'{"text": NaN}', b"\xff\xfe"):
        status, data = answer_post("/api/explain", raw)
        assert status == 400 and data["error"]


def test_a_malformed_request_line_is_answered_in_json(served):
    with socket.create_connection(served.server_address, timeout=5) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")
        reply = sock.recv(65536).decode("latin-1")
    assert reply.startswith("HTTP/1.") and " 400 " in reply.split("\r\n")[0] and "application/json" in reply


def test_slow_clients_are_cut_off_and_do_not_block_others(monkeypatch):
    monkeypatch.setattr(server_module, "REQUEST_DEADLINE", 1.0)
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        slow = []
        for _ in range(100):  # half-open requests, headers never finished
            sock = socket.create_connection(server.server_address, timeout=10)
            sock.sendall(b"GET /api/plan?num_examples=5 HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            slow.append(sock)
        status, body, _ = get(f"http://127.0.0.1:{server.server_address[1]}/api/plan?num_examples=5")
        assert status == 200  # a well-behaved client is served while they hang
        time.sleep(2.5)
        for sock in slow:  # each was shut down by the server: reading gives end-of-file (or a reset)
            try:
                assert sock.recv(100) == b""
            except ConnectionResetError:
                pass
            sock.close()
        deadline = time.monotonic() + 5
        while server.active and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.active == 0  # their threads are gone
    finally:
        server.shutdown()
        server.server_close()


def test_a_full_house_evicts_the_slowest_half_open_connection(monkeypatch):
    monkeypatch.setattr(server_module, "MAX_CONNECTIONS", 20)
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        held = [socket.create_connection(server.server_address, timeout=10) for _ in range(40)]
        for sock in held:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
        status, _, _ = get(f"http://127.0.0.1:{server.server_address[1]}/api/plan?num_examples=7")
        assert status == 200
        for sock in held:
            sock.close()
    finally:
        server.shutdown()
        server.server_close()


def test_the_backlog_is_large():
    assert server_module.CalculatorServer.request_queue_size >= 64


def test_a_taken_port_is_one_line_and_exit_2():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        result = CliRunner().invoke(cli, ["web", "--port", str(port)])
        assert result.exit_code == 2
        assert f"port {port} is in use" in result.output and "--port 0" in result.output
    finally:
        holder.close()


QUERY_KEYS = ["num_examples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size", "num_train_epochs", "max_steps",
              "streaming", "transformers", "warmup_ratio", "warmup_steps", "logging_steps", "eval_strategy", "eval_steps", "save_steps",
              "dataset_tokens", "seq_length", "even_batches", "resume_from_step", "lr_scheduler_type", "lr_scheduler_kwargs",
              "learning_rate", "framework", "train_iters", "micro_batch_size", "global_batch_size", "rampup_batch_size", "lang", "x"]
VALUES = st.one_of(st.sampled_from(["", "0", "1", "-1", "3", "8", "1047", "nan", "inf", "-inf", "1e400", "1e308", "0.5", "true", "false",
                                    "maybe", "4.49.0", "5.23.0", "x", "steps", "epoch", "cosine", "{}", "megatron", "neox", "1 2 3"]),
                   st.text(max_size=12), st.integers(-10**12, 10**12).map(str), st.floats(allow_nan=True).map(repr))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(QUERY_KEYS), VALUES, max_size=8), st.sampled_from(["/api/plan", "/api/compare", "/api/solve"]))
def test_any_query_is_answered_with_json_200_or_400(query, path):
    from urllib.parse import urlencode

    status, body = answer_query(path, urlencode(query))
    assert status in (200, 400)
    json.dumps(body, allow_nan=False)  # what the server sends must encode
    if status == 400:
        assert body["error"] and "Traceback" not in body["error"]


def test_a_launch_line_alone_is_a_config_request():
    launch = "NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B --dataset data.jsonl --num_train_epochs 3"
    status, data = answer_post("/api/config", json.dumps({"files": [{"name": "config.yaml", "text": ""}],
                                                          "settings": {"launch": launch, "num_examples": 20000}}).encode())
    expected = cli_json("plan", "--launch", launch, "--num-examples", "20000")
    assert status == 200 and data["run"] == expected["run"] and data["banner"] == expected["banner"]
    assert data["web"]["cli"].startswith("trainsteps plan --launch")
    status, data = answer_post("/api/config", json.dumps({"files": [], "settings": {}}).encode())
    assert status == 400 and "config" in data["error"]


JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=False), st.text(max_size=30)),
                           lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                           max_leaves=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.fixed_dictionaries({"text": st.one_of(st.text(max_size=300), JSON_VALUES)}, optional={"settings": st.one_of(
        st.dictionaries(st.sampled_from(["framework", "raw_examples", "seq_length", "global_batch_size", "lang", "x"]), JSON_VALUES, max_size=4),
        JSON_VALUES)}),
    st.fixed_dictionaries({"files": st.one_of(st.lists(st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(["a.yaml", "../../x.yaml", "dataset_info.json", "c:\\\\evil.json", ".hidden", ""]), st.text(max_size=20)),
         "text": st.one_of(st.sampled_from(["per_device_train_batch_size: 4\nnum_train_epochs: 2\n", "{}", "stage: sft\ndataset: x\n", "[1,2"]),
                           st.text(max_size=80))}, optional={"role": st.sampled_from(["data", "config"])}), max_size=4), JSON_VALUES)},
        optional={"settings": st.dictionaries(st.sampled_from(["num_examples", "transformers", "launch", "framework", "lang"]), JSON_VALUES, max_size=3)}),
    JSON_VALUES),
    st.sampled_from(["/api/explain", "/api/config"]))
def test_any_posted_body_is_answered_with_json(body, path):
    status, answer = answer_post(path, json.dumps(body).encode())
    assert status in (200, 400, 413)
    json.dumps(answer, allow_nan=False)
    assert "trainsteps-web-" not in json.dumps(answer)  # no temporary folder leaks into an answer


EX = ROOT / "examples"
RL_REQUESTS = {
    # name: (posted files, settings, the CLI's arguments for the same run)
    "verl-script": ([], {"launch": (EX / "verl" / "gsm8k_grpo.sh").read_text().split("\n", 1)[1], "num_examples": "7473"},
                    ["--launch", (EX / "verl" / "gsm8k_grpo.sh").read_text().split("\n", 1)[1], "--num-examples", "7473"]),
    "verl-fsdp-sft": ([], {"launch": "torchrun --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer data.train_batch_size=256 trainer.total_epochs=3",
                           "num_examples": "7473", "framework_version": "0.6.1"},
                      ["--launch", "torchrun --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer data.train_batch_size=256 trainer.total_epochs=3",
                       "--num-examples", "7473", "--framework-version", "0.6.1"]),
    "openrlhf-script": ([], {"launch": (EX / "openrlhf" / "reinforce_ray.sh").read_text().split("\n", 1)[1], "num_examples": "30000"},
                        ["--launch", (EX / "openrlhf" / "reinforce_ray.sh").read_text().split("\n", 1)[1], "--num-examples", "30000"]),
    "easyr1": ([("config.yaml", EX / "easyr1" / "config.yaml")], {"framework": "easyr1", "num_examples": "7500"},
               ["--framework", "easyr1", "--num-examples", "7500"]),
    "trl-ppo": ([("ppo.yaml", EX / "trl" / "ppo.yaml")], {"framework": "trl-ppo", "num_examples": "5000"},
                ["--framework", "trl-ppo", "--num-examples", "5000"]),
    "trl-grpo": ([("grpo.yaml", EX / "trl" / "grpo.yaml")], {"num_examples": "1000"}, ["--num-examples", "1000"]),
    "trl-kto": ([("kto.yaml", EX / "trl" / "kto.yaml")], {"num_examples": "2000"}, ["--num-examples", "2000"]),
    "unsloth-script": ([("train.py", EX / "trl" / "grpo_unsloth.py")], {"num_examples": "7473"}, ["--num-examples", "7473"]),
    "unsloth-option": ([("grpo.yaml", EX / "trl" / "grpo.yaml")], {"num_examples": "1000", "unsloth": "2026.10.9"},
                       ["--num-examples", "1000", "--unsloth", "2026.10.9"]),
}


@pytest.mark.parametrize("name", sorted(RL_REQUESTS))
def test_every_rl_framework_is_planned_from_the_page_as_the_cli_plans_it(name, tmp_path):
    files, settings, args = RL_REQUESTS[name]
    posted = [{"name": n, "text": p.read_text()} for n, p in files] or [{"name": "config.yaml", "text": ""}]
    status, data = answer_post("/api/config", json.dumps({"files": posted, "settings": settings}).encode())
    assert status == 200, data
    paths = []
    for n, p in files:  # the CLI reads the same file under the same name
        (tmp_path / n).write_text(p.read_text())
        paths.append(str(tmp_path / n))
    expected = cli_json("plan", *paths, *args)
    assert data["run"] == expected["run"]
    assert data["config"]["framework"] == expected["config"]["framework"]


def test_a_launch_script_may_span_lines_but_not_carry_control_characters():
    line = "python3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=256 \\\n    trainer.total_epochs=15"
    status, data = answer_post("/api/config", json.dumps({"files": [], "settings": {"launch": line, "num_examples": "7473"}}).encode())
    assert status == 200 and data["run"]["training_steps"] == 7473 // 256 * 15
    status, data = answer_post("/api/config", json.dumps({"files": [], "settings": {"launch": line + "\x00", "num_examples": "1"}}).encode())
    assert status == 400 and "launch" in data["error"]
    status, data = answer_post("/api/config", json.dumps({"files": [], "settings": {"launch": "x " * 9000, "num_examples": "1"}}).encode())
    assert status == 400 and "16,000" in data["error"]

