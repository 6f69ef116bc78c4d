"""Load on `trainsteps web`: requests/s and latency percentiles with 20 concurrent clients, on localhost.

The server runs as the real command (`python -m trainsteps.cli.main web --port 0`, two serving processes) in its own
processes. The load comes from a third process: 20 clients on one asyncio loop, each on one keep-alive connection
(what a browser does), sending the next request when the answer is in; a new connection per request is measured too.
Every request is built as raw bytes before the clock starts, and each row says what one request cost the server's
processes and the load generator in CPU. One thread drives all
clients, so the latency measured is the server's and the machine's, not a convoy of client threads waiting for the
client's own interpreter lock. A baseline server (the standard library's http.server answering a fixed JSON body,
same backlog and threading, in this process) is measured the same way in the same run, so the ratio says what
trainsteps adds. Then the hostile cases: 300 half-open connections (slowloris) held while the pool measures again, and a mix
of hostile values (NaN, inf, 1e400, bad booleans), which must all be JSON 400s.

Run: `.venv/bin/python bench/bench_web.py [--seconds 5] [--clients 20] [--quick]` (`--quick`: the baseline, the
page, the seed link, and distinct plans on two processes and on one; install the `web` extra, orjson, as the
figures in docs/benchmarks.md were). Targets: >= 500 requests/s and p99 < 50 ms
with 20 clients on /api/plan for the seed-001 link and for a different plan every request; 1 MB logs posted for
explain (answered by worker processes) do not hold up the plans; more than the queue holds get a JSON 503.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

SEED001 = dict(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300,
               transformers="4.49.0")
HOSTILE = ["num_train_epochs=nan", "num_train_epochs=inf", "num_train_epochs=1e400", "streaming=maybe", "num_examples=1e400",
           "num_examples=" + "9" * 40, "warmup_ratio=-Infinity", "bogus=1"]


def start_server(processes: int | None = None) -> tuple[subprocess.Popen, int]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    more = ["--processes", str(processes)] if processes else []
    proc = subprocess.Popen([sys.executable, "-m", "trainsteps.cli.main", "web", "--port", "0", *more], stdout=subprocess.PIPE,
                            text=True, env=env)
    line = proc.stdout.readline()
    port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    return proc, port


class _Baseline(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as trainsteps does: the ratio then measures the work, not a delayed-ACK stall
    body = json.dumps({"ok": True, "pad": "x" * 2000}).encode()

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def start_baseline() -> tuple[ThreadingHTTPServer, int]:
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Baseline)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def _log_1mb() -> str:
    """A 1 MB training log: the Trainer's banner, then loss dicts (what a user pastes from a long run)."""
    banner = ("***** Running training *****\n  Num examples = 1,047\n  Num Epochs = 300\n  Instantaneous batch size per device = 10\n"
              "  Total train batch size (w. parallel, distributed & accumulation) = 80\n  Gradient Accumulation steps = 8\n"
              "  Total optimization steps = 3,900\n")
    lines = [f"{{'loss': {0.5 + (i % 97) / 100:.4f}, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': {i / 13:.2f}}}\n"
             for i in range(1, 14000)]
    text = banner + "".join(lines)
    return text[: 1 << 20].rsplit("\n", 1)[0] + "\n"


def _distinct(n: int) -> str:
    """A plan of its own for every n: 100,000 rows and more, one row more each time; the run a load generator
    numbers (n // 10**6) adds a thousandth of an epoch per run, so that each run's plans are new to the server's cache
    and as large as the first run's."""
    run, n = divmod(n, 10**6)
    epochs = {"num_train_epochs": 300 + run / 1000} if run else {}
    return "/api/plan?" + urlencode(dict(SEED001, num_examples=100000 + n, **epochs))


POSTS = {"explain": lambda: json.dumps({"text": _log_1mb()}).encode()}
"""Cases sent as a POST of this JSON body (to /api/explain)."""

CASES = {
    "explain": lambda n: "/api/explain",
    "link": lambda n: "/api/plan?" + urlencode(SEED001),
    "distinct": lambda n: _distinct(n),
    "compare": lambda n: "/api/compare?" + urlencode(SEED001),
    "hostile": lambda n: f"/api/plan?num_examples={n % 97 + 1}&" + HOSTILE[n % len(HOSTILE)],
    "page": lambda n: "/",
    "baseline": lambda n: "/",
}


SERVED_BY = {}
"""port -> the pid of the process serving it, whose CPU time each case reads."""


def cpu_seconds(pid: int, children: bool = True) -> float:
    """User + system CPU of a process and its threads, and of its child processes (the other serving processes; the
    workers for posted logs), from Linux's /proc: a case says what a request costs the server whatever else the
    machine runs."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    if children:
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in open(f"/proc/{pid}/task/{task}/children").read().split():
                try:
                    total += cpu_seconds(int(child))
                except FileNotFoundError:  # ended meanwhile
                    pass
    return total


RUNS = iter(range(1, 10**6))
"""Each load generator numbers its requests from its own offset: no run of distinct plans meets an answer an earlier
run left in the server's cache."""


def load(port: int, case: str, clients: int, seconds: float, keep_alive: bool = True) -> dict:
    """Run the asyncio load generator in its own process for `seconds`; its figures come back as JSON."""
    cmd = [sys.executable, __file__, "--client", case, "--port", str(port), "--clients", str(clients), "--seconds",
           str(seconds), "--offset", str(next(RUNS) * 10**6)] + ([] if keep_alive else ["--new-connections"])
    pid, children = SERVED_BY[port]
    before = cpu_seconds(pid, children)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=seconds + 120)
    figures = json.loads(out.stdout)
    figures["server_cpu_ms"] = (cpu_seconds(pid, children) - before) * 1000 / max(1, figures["requests"])
    return figures


def load_together(port: int, cases: list[tuple[str, int]], seconds: float) -> list[dict]:
    """Several load generators at once (each its own process), e.g. distinct plans while 1 MB logs are posted."""
    procs = [subprocess.Popen([sys.executable, __file__, "--client", case, "--port", str(port), "--clients", str(clients),
                               "--seconds", str(seconds), "--offset", str(next(RUNS) * 10**6)], stdout=subprocess.PIPE, text=True)
             for case, clients in cases]
    return [json.loads(proc.communicate(timeout=seconds + 120)[0]) for proc in procs]


def client_process(case: str, port: int, clients: int, seconds: float, keep_alive: bool, offset: int = 0) -> dict:
    """`clients` connections on one event loop send requests as fast as answers come back. Every answer's status and
    length are checked; every error body and one answer body in 16 are parsed as JSON."""
    import asyncio

    paths = lambda n: CASES[case](offset + n)  # noqa: E731
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    posted = POSTS[case]() if case in POSTS else None

    def request(n: int) -> bytes:
        if posted is None:
            return (f"GET {paths(n)} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    + ("" if keep_alive else "Connection: close\r\n") + "\r\n").encode()
        return (f"POST {paths(n)} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(posted)}\r\n\r\n").encode() + posted

    # every request is built before the clock starts (more than the fastest server answers in `seconds`), so the
    # loop only writes bytes and reads answers: the generator's CPU stays small next to the server's
    ahead = 1 if posted is not None else int(seconds * 6000 / clients) + 8
    prebuilt = [[request(i + k * clients) for k in range(ahead)] for i in range(clients)]

    async def client(i: int, stop: float) -> None:
        reader = writer = None
        n, k = i, 0
        mine = prebuilt[i]
        while time.perf_counter() < stop:
            request_bytes = mine[k] if k < len(mine) else mine[0] if posted is not None else request(n)
            n += clients
            k += 1
            start = time.perf_counter()
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request_bytes)
            head = await reader.readuntil(b"\r\n\r\n")
            fields = head.decode("latin-1").lower().split("\r\n")
            length = next(int(f.split(":", 1)[1]) for f in fields if f.startswith("content-length:"))
            body = await reader.readexactly(length)
            latencies.append(time.perf_counter() - start)
            status = int(fields[0].split()[1])
            statuses[status] = statuses.get(status, 0) + 1
            if case == "explain":
                if status != 200:
                    assert json.loads(body)["error"], body  # a refusal (503 when the queue is full) is JSON with its words
            elif case != "page":
                if status != 200 or n % (16 * clients) < clients:  # every error and 1 answer in 16 are parsed: a
                    json.loads(body)  # 30 kB JSON costs ~0.5 ms, which would be the client's latency, not the server's
            elif status != 200:
                raise AssertionError(f"the page answered {status}")
            if not keep_alive or "connection: close" in fields:
                writer.close()
                reader = writer = None

    async def run() -> float:
        stop = time.perf_counter() + seconds
        began = time.perf_counter()
        await asyncio.gather(*(client(i, stop) for i in range(clients)))
        return time.perf_counter() - began

    cpu = time.process_time()
    elapsed = asyncio.run(run())
    cpu = time.process_time() - cpu
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    return {"requests": len(latencies), "rps": len(latencies) / elapsed, "p50_ms": pick(0.50), "p99_ms": pick(0.99),
            "max_ms": latencies[-1] * 1000, "statuses": statuses, "client_cpu_ms": cpu * 1000 / max(1, len(latencies))}


def thread_load(port: int, paths, clients: int, seconds: float, keep_alive: bool = True) -> dict:
    """The earlier client, kept for comparison: `clients` threads in this process, each on its own connection."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def client(i: int) -> None:
        mine, seen = [], {}
        connection = None
        n = i
        while time.perf_counter() < stop:
            path = paths(n) if callable(paths) else paths
            n += clients
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            start = time.perf_counter()
            connection.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
            response = connection.getresponse()
            body = response.read()
            mine.append(time.perf_counter() - start)
            seen[response.status] = seen.get(response.status, 0) + 1
            json.loads(body)
            if not keep_alive or response.getheader("Connection") == "close":
                connection.close()
                connection = None
        if connection is not None:
            connection.close()
        with lock:
            latencies.extend(mine)
            for k, v in seen.items():
                statuses[k] = statuses.get(k, 0) + v

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    return {"requests": len(latencies), "rps": len(latencies) / elapsed, "p50_ms": pick(0.50), "p99_ms": pick(0.99),
            "max_ms": latencies[-1] * 1000, "statuses": statuses}


def show(name: str, r: dict, baseline: dict | None = None) -> None:
    ratio = f"  ({r['rps'] / baseline['rps']:.2f}x baseline rps)" if baseline else ""
    cpu = f"  CPU/request: server {r['server_cpu_ms']:.2f} ms, load generator {r['client_cpu_ms']:.2f} ms" \
        if "server_cpu_ms" in r and "client_cpu_ms" in r else ""
    print(f"  {name:<58} {r['rps']:>7.0f} req/s  p50 {r['p50_ms']:5.1f} ms  p99 {r['p99_ms']:5.1f} ms  "
          f"max {r['max_ms']:6.1f} ms  {r['statuses']}{ratio}{cpu}")


def slowloris(port: int, count: int) -> list[socket.socket]:
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(b"GET /api/plan?num_examples=5 HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        held.append(sock)
    return held


def processes_rounds(rounds: int, clients: int, seconds: float) -> None:
    """Distinct plans on two servers at once, one of two processes and one of one, measured in turn, so that the
    machine's other work falls on both alike."""
    servers = {}
    try:
        for processes in (2, 1):
            proc, port = start_server(processes)
            servers[processes] = proc, port
            SERVED_BY[port] = (proc.pid, True)
            load(port, "link", clients, 1.0)  # warm up
        print(f"distinct plans, {clients} clients, {seconds:g} s per round, {os.cpu_count()} CPUs")
        for round_number in range(rounds):
            for processes, (_, port) in servers.items():
                r = load(port, "distinct", clients, seconds)
                print(f"  round {round_number + 1}, {processes} process{'es' * (processes > 1)}: {r['rps']:5.0f} req/s  "
                      f"p50 {r['p50_ms']:5.1f} ms  p99 {r['p99_ms']:5.1f} ms  CPU/request: server {r['server_cpu_ms']:.2f} ms  "
                      f"load average {os.getloadavg()[0]:.1f}")
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="only the baseline, the page, the seed link and distinct plans")
    parser.add_argument("--processes-rounds", type=int, default=0, metavar="N",
                        help="only distinct plans, on a server of two processes and one of one, taking turns N times")
    parser.add_argument("--client", choices=sorted(CASES), help=argparse.SUPPRESS)  # the load-generator process
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--new-connections", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--offset", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        print(json.dumps(client_process(args.client, args.port, args.clients, args.seconds, not args.new_connections, args.offset)))
        return
    c, s = args.clients, args.seconds
    if args.processes_rounds:
        return processes_rounds(args.processes_rounds, c, s)
    baseline_server, baseline_port = start_baseline()
    proc, port = start_server()
    SERVED_BY.update({baseline_port: (os.getpid(), False), port: (proc.pid, True)})  # (this process's children are the
    # servers and the load generators, not the baseline)
    try:
        print(f"trainsteps web on 127.0.0.1:{port}; {c} concurrent clients, {s:g} s per case, {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}")
        load(port, "link", c, 1.0)  # warm up
        base = load(baseline_port, "baseline", c, s)
        show("baseline: stdlib http.server, fixed 2 kB JSON (keep-alive)", base)
        show("/ (the page: the server's ceiling, no work per request)", load(port, "page", c, s), base)
        show("/api/plan, seed-001 link (keep-alive; repeat = cached)", load(port, "link", c, s), base)
        if args.quick:
            show("/api/plan, a different plan every request (keep-alive)", load(port, "distinct", c, s), base)
            one, one_port = start_server(1)
            SERVED_BY[one_port] = (one.pid, True)
            try:
                load(one_port, "link", c, 1.0)  # warm up
                show("  the same, served by one process (--processes 1)", load(one_port, "distinct", c, s), base)
            finally:
                one.terminate()
                one.wait(10)
            print(f"load average at the end {os.getloadavg()[0]:.1f}")
            return
        link = "/api/plan?" + urlencode(SEED001)
        show("  the same, 20 client threads in one process (earlier client)", thread_load(port, link, c, s), base)
        show("/api/plan, a different plan every request (keep-alive)", load(port, "distinct", c, s), base)
        show("POST /api/explain, a 1 MB log, 2 clients", load(port, "explain", 2, s), base)
        plans, logs = load_together(port, [("distinct", c), ("explain", 2)], s)
        show("/api/plan, distinct, while 2 clients post 1 MB logs", plans, base)
        show("  the 1 MB logs posted meanwhile", logs, base)
        show(f"POST /api/explain, 1 MB, {c} clients at once (queue of 8: 503s)", load(port, "explain", c, s), base)
        show("/api/plan, seed-001 link, new connection per request", load(port, "link", c, s, keep_alive=False), base)
        show("/api/compare, seed 001 (6 release families)", load(port, "compare", c, s), base)
        r = load(port, "hostile", c, s)
        show("hostile values (NaN, inf, 1e400, bad booleans, ...)", r, base)
        assert set(r["statuses"]) == {"400"}, r["statuses"]
        held = slowloris(port, 300)
        r = load(port, "distinct", c, min(s, 3.0))
        show("/api/plan, distinct, while 300 half-open connections hang", r, base)
        time.sleep(11)  # REQUEST_DEADLINE is 10 s
        closed = 0
        for sock in held:
            sock.settimeout(1)
            try:
                closed += sock.recv(10) == b""
            except (ConnectionResetError, TimeoutError):
                closed += 1
            sock.close()
        print(f"  half-open connections cut off by the server after its deadline: {closed} of {len(held)}")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        proc.terminate()
        proc.wait(10)
        baseline_server.shutdown()


if __name__ == "__main__":
    main()
