"""The web server under load: a request's options parsed without click's full parse (the same context click makes),
posted logs and configs answered in worker processes, a bounded queue and a CPU cap per request, each a JSON 503."""

import json
import subprocess
import sys
import textwrap
from urllib.parse import urlencode

import click
import pytest

from trainsteps.web import api
from trainsteps.web.pool import HeavyPool
from trainsteps.web.routes import answer_post

SEED001 = dict(num_examples="1047", per_device_train_batch_size="10", gradient_accumulation_steps="8", num_train_epochs="300",
               transformers="4.49.0")
REQUESTS = [
    ("/api/plan", SEED001),
    ("/api/plan", dict(SEED001, dataloader_drop_last="true", streaming="false", lang="zh")),
    ("/api/plan", dict(SEED001, save_strategy="best", metric_for_best_model="loss", greater_is_better="false")),
    ("/api/plan", dict(num_examples="100000", framework="megatron", rampup_batch_size="32 32 1000", global_batch_size="256",
                       micro_batch_size="4", seq_length="2048", train_iters="500")),
    ("/api/plan", dict(num_examples="1000", framework="verl", set="data.train_batch_size=16\ntrainer.total_epochs=2")),
    ("/api/compare", SEED001),
    ("/api/solve", dict(num_examples="1047", per_device_train_batch_size="10", gradient_accumulation_steps="8", max_steps="3900")),
]


def _context_facts(ctx: click.Context) -> tuple[dict, dict]:
    return dict(ctx.params), {name: ctx.get_parameter_source(name) for name in ctx.params}


@pytest.mark.parametrize(("path", "settings"), REQUESTS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(REQUESTS)])
def test_a_request_parsed_from_its_own_options_gets_the_context_clicks_full_parse_gives(path, settings):
    route = api.ROUTES[path]
    command = api.load_command(route)
    argv = api.argv_for(command, settings) + list(route.extra) + ["--format", "json", "--lang", api.language(settings)]
    fast = api.parsed(command, argv)
    full = command.make_context(f"trainsteps {command.name}", list(argv))
    assert _context_facts(fast) == _context_facts(full)
    assert fast.args == full.args


@pytest.mark.parametrize(("path", "settings"), REQUESTS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(REQUESTS)])
def test_a_request_seen_before_is_assembled_from_kept_values_into_the_context_clicks_full_parse_gives(path, settings):
    route = api.ROUTES[path]
    command = api.load_command(route)
    argv = api.argv_for(command, settings) + list(route.extra) + ["--format", "json", "--lang", api.language(settings)]
    api.parsed(command, argv)  # every plain option's value is kept
    again = api.parsed(command, argv)
    full = command.make_context(f"trainsteps {command.name}", list(argv))
    assert _context_facts(again) == _context_facts(full)
    assert again.args == full.args


def test_a_repeated_option_takes_its_last_value_and_a_bad_value_is_refused_after_good_ones_were_kept():
    command = api.load_command(api.ROUTES["/api/plan"])
    api.parsed(command, ["--num-examples", "7", "--max-steps", "5"])
    repeated = ["--num-examples", "7", "--num-examples", "9", "--lower-is-better", "--greater-is-better"]
    assert _context_facts(api.parsed(command, repeated)) == _context_facts(command.make_context("trainsteps plan", list(repeated)))
    for refused in (["--num-examples", "7", "--max-steps", "five"], ["--num-examples", "7", "--max-steps"]):
        with pytest.raises(Exception) as full:  # click's error, or the checked numbers' once the CLI has run in this process
            command.make_context("trainsteps plan", list(refused))
        with pytest.raises(full.type) as fast:
            api.parsed(command, refused)
        assert str(fast.value) == str(full.value)


def test_only_options_whose_value_depends_on_their_own_words_are_kept():
    command = api.load_command(api.ROUTES["/api/plan"])
    plain = {p.name for p in api._defaults(command).plain}
    assert {"num_examples", "num_train_epochs", "framework", "explain", "greater_is_better"} <= plain
    assert not plain & {"configs", "deepspeed_config", "rl_overrides", "rampup_batch_size", "help"}


def test_a_value_click_refuses_is_refused_in_clicks_words():
    command = api.load_command(api.ROUTES["/api/plan"])
    argv = ["--framework", "no-such-framework"]
    with pytest.raises(click.BadParameter) as fast:
        api.parsed(command, argv)
    with pytest.raises(click.BadParameter) as full:
        command.make_context("trainsteps plan", list(argv))
    assert fast.value.format_message() == full.value.format_message()
    assert api.usage_error(command, fast.value) == api.usage_error(command, full.value)


def test_a_posted_log_is_answered_in_a_worker_with_the_answer_of_the_servers_own_thread():
    log = "***** Running training *****\n  Num examples = 1,047\n  Num Epochs = 300\n  Total optimization steps = 3,900\n"
    raw = json.dumps({"text": log, "settings": {"lang": "zh"}}).encode()
    pool = HeavyPool(workers=1)
    try:
        status, body = pool.answer("/api/explain", raw)
    finally:
        pool.close()
    assert (status, json.loads(body)) == answer_post("/api/explain", raw)


def test_a_full_queue_answers_at_once_with_a_json_503():
    pool = HeavyPool(workers=1, queue=1)
    assert pool._slots.acquire(blocking=False)  # one heavy request is running: the queue is full
    status, body = pool.answer("/api/explain", b'{"text": "x"}')
    assert status == 503
    assert json.loads(body)["id"] == "web.error.busy" and "1 large requests" in json.loads(body)["error"]
    assert pool._executor is None  # refused before any worker was started


def test_a_request_past_its_cpu_seconds_is_stopped_with_a_json_503_and_the_worker_goes_on():
    script = textwrap.dedent("""
        import json, os
        from trainsteps.web import pool, routes
        pool._start_worker(os.getpid())
        real = routes.answer_post
        def spin(path, raw):
            while True:
                pass
        routes.answer_post = spin
        status, body = pool.answer("/api/explain", b"{}", 1)
        print(json.dumps([status, body.decode()]))
        routes.answer_post = real
        status, body = pool.answer("/api/explain", json.dumps({"text": ""}).encode(), 1)
        print(json.dumps([status, body.decode()]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    stopped, after = (json.loads(line) for line in out.stdout.splitlines())
    assert stopped[0] == 503 and json.loads(stopped[1])["id"] == "web.error.cpu_cap"
    assert after[0] == 400 and json.loads(after[1])["id"] == "web.error.no_log"


def test_the_seed_link_query_is_parsed_the_same_with_every_option_given_once():
    """Every option of `plan` that a link can carry, given at its default text, parses as click parses it."""
    command = api.load_command(api.ROUTES["/api/plan"])
    query = urlencode(dict(SEED001, logging_steps="10", eval_strategy="steps", eval_steps="50", warmup_ratio="0.1"))
    argv = api.argv_for(command, api.parse_query(query)) + ["--format", "json", "--explain"]
    assert _context_facts(api.parsed(command, argv)) == _context_facts(command.make_context("trainsteps plan", list(argv)))


def test_an_answer_with_a_kept_lr_curve_is_written_as_the_json_of_the_answer():
    from trainsteps.frameworks.hf.lr_schedule import LrSchedule
    from trainsteps.web.routes import answer_query, encode

    query = urlencode(dict(SEED001, lr_scheduler_type="cosine", warmup_ratio="0.1"))
    for _ in range(2):  # computed, then kept
        status, body = answer_query("/api/plan", query)
        written = json.loads(encode(body))
        assert written == json.loads(json.dumps(body))
    run, points = written["run"], written["web"]["charts"]["lr"]["points"]
    schedule = LrSchedule("cosine", run["warmup_steps"], run["max_steps"], 5e-5, {})
    assert [rate for _, rate in points] == pytest.approx([schedule.rate(step) for step, _ in points], rel=1e-9)


@pytest.mark.parametrize(("path", "settings"), [("/api/plan", dict(SEED001, lr_scheduler_type="cosine", warmup_ratio="0.1")),
                                                ("/api/plan", dict(SEED001, num_examples="100003", lang="zh")),
                                                ("/api/compare", SEED001)], ids=["lr-curve", "zh", "compare"])
def test_an_answer_written_by_orjson_reads_as_the_one_the_standard_library_writes(path, settings, monkeypatch):
    pytest.importorskip("orjson")  # the `web` extra
    from trainsteps.web import routes

    status, body = routes.answer_query(path, urlencode(settings))
    fast = routes.encode(body)
    monkeypatch.setattr(routes, "_orjson", None)
    assert json.loads(fast) == json.loads(routes.encode(body))
    assert status == 200 and fast.startswith(b'{"')


def test_a_value_orjson_cannot_write_is_written_by_the_standard_library():
    pytest.importorskip("orjson")
    from trainsteps.web.routes import encode

    assert encode({"count": 10**30, 7: "key"}) == b'{"count":1000000000000000000000000000000,"7":"key"}'


def test_computed_answers_take_their_turns_in_the_order_they_came():
    import threading
    import time

    from trainsteps.web.server import Turns

    turns, served = Turns(), []

    def ask(number: int) -> None:
        with turns:
            served.append(number)

    threads = []
    with turns:  # the first turn is held while the others queue, one after the other
        for number in range(8):
            threads.append(threading.Thread(target=ask, args=(number,)))
            threads[-1].start()
            while len(turns._waiting) <= number:
                time.sleep(0.001)
    for thread in threads:
        thread.join(5)
    assert served == list(range(8))
    with turns:  # free again
        pass


def _children(pid: int) -> set[int]:
    import os

    return {int(child) for task in os.listdir(f"/proc/{pid}/task") for child in open(f"/proc/{pid}/task/{task}/children").read().split()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("stop", ["terminate", "kill"])
def test_the_page_is_served_by_two_processes_and_the_second_ends_with_the_first(stop):
    import time
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "trainsteps.cli.main", "web", "--port", "0", "--processes", "2"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split("http://127.0.0.1:")[1].split("/")[0])
        for _ in range(100):  # the routes are warmed, then the second process forked, after the address is printed
            forked = _children(server.pid)
            if forked:
                break
            time.sleep(0.1)
        assert len(forked) == 1  # the workers for posted logs start on the first posted log
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/plan?" + urlencode(SEED001), timeout=30) as answer:
            assert json.loads(answer.read())["run"]["optimizer_steps"] == 3900
    finally:
        getattr(server, stop)()  # SIGTERM: the first stops the second; SIGKILL: the second sees it is gone
        server.wait(10)
    child = forked.pop()
    for _ in range(50):
        try:
            open(f"/proc/{child}/stat")
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the second serving process {child} outlived the first")


def test_more_processes_than_one_where_the_system_cannot_fork_is_one_line_and_exit_2(monkeypatch):
    import os

    from click.testing import CliRunner

    from trainsteps.cli.main import cli

    monkeypatch.delattr(os, "fork")
    result = CliRunner().invoke(cli, ["web", "--port", "0", "--processes", "2"])
    assert result.exit_code == 2 and "--processes 2" in result.output and "--processes 1" in result.output


def test_a_computed_answer_that_fails_hands_its_turn_to_the_next(monkeypatch):
    import threading
    import urllib.error
    import urllib.request

    from trainsteps.web import routes
    from trainsteps.web.server import make_server

    server = make_server("127.0.0.1", 0, workers=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/api/plan?"
    try:
        answer = routes.answer_query
        monkeypatch.setattr(routes, "answer_query", lambda path, query: 1 / 0)
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(base + urlencode(dict(SEED001, num_examples="1048")), timeout=10)
        assert failed.value.code == 500
        monkeypatch.setattr(routes, "answer_query", answer)
        with urllib.request.urlopen(base + urlencode(SEED001), timeout=10) as response:
            assert json.loads(response.read())["run"]["optimizer_steps"] == 3900
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("ends", "per_epoch", "total"), [
    ([14, 28, 42], 105, 315),  # the last epoch ends at the last step: not an epoch point
    ([14, 28, 42], 105, 300),  # a fraction of an epoch
    ([14, 28], 105, 1000),  # fewer ends than multiples below the total
    ([], 10, 100), ([5], 7, 7), ([5, 9], 7, 8),
    (list(range(3, 3 * 2000, 3)), 11, 11 * 1500),  # more ends than the chart draws
    ({"count": 5000, "first": 4, "last": 20000, "period": [4]}, 9, 9 * 4999),  # the compact form
    ([14, 28, 42], 105.0, 300.0),  # numbers that are not ints
])
def test_the_samples_chart_pairs_epoch_ends_with_the_samples_fed_as_the_position_rule_says(ends, per_epoch, total):
    from trainsteps.schedule import indexed_steps
    from trainsteps.web.charts import MAX_TICKS, _epoch_points

    by_position = [(step, (i + 1) * per_epoch) for i, step in indexed_steps(ends, MAX_TICKS) if (i + 1) * per_epoch < total]
    assert _epoch_points(ends, per_epoch, total) == by_position


def test_a_kept_lr_curve_is_written_to_the_same_bytes_by_orjson_s_fragment_and_by_the_slot_it_replaces(monkeypatch):
    from trainsteps.web import routes

    query = urlencode(dict(SEED001, lr_scheduler_type="cosine", warmup_ratio="0.1", num_examples="1048"))
    routes.answer_query("/api/plan", query)  # the curve is computed, then kept
    body = routes.answer_query("/api/plan", query)[1]
    written = routes.encode(body)
    monkeypatch.setattr(routes, "_fragment", None)
    assert routes.encode(body) == written
    assert json.loads(written) == json.loads(json.dumps(body))


def test_values_kept_under_click_s_number_types_are_not_reused_once_the_cli_checks_its_numbers():
    from trainsteps.cli.numbers import check_numbers

    command = api.load_command(api.ROUTES["/api/plan"])
    argv = ["--num-examples", "1047", "--num-train-epochs", "3.5"]
    api.parsed(command, argv)
    check_numbers(command)  # what running any CLI command in this process does to `plan`
    for words in (argv, ["--num-examples", "1047", "--max-steps", "five"], ["--num-examples", "１０４７"]):
        try:
            full = _context_facts(command.make_context("trainsteps plan", list(words)))
        except Exception as exc:  # noqa: BLE001 - the same error, whichever it is
            with pytest.raises(type(exc)) as fast:
                api.parsed(command, words)
            assert str(fast.value) == str(exc)
        else:
            assert _context_facts(api.parsed(command, words)) == full
            assert _context_facts(api.parsed(command, words)) == full  # kept, then read back


def test_a_long_value_such_as_a_pasted_log_is_parsed_but_never_kept():
    command = api.load_command(api.ROUTES["/api/explain"])
    text = "***** Running training *****\n" + "x" * 5000
    argv = ["--text", text, "--format", "json"]
    assert api.parsed(command, argv).params["text"] == text
    assert not any(text in key[2] for key in api._KEPT)
    assert any(key[2] == ("--format", "json") for key in api._KEPT)
