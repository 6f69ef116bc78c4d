"""The calculator's HTTP server (standard library only; binds to localhost by default).

Every answer is JSON or one of the packaged files; a bad value is a JSON 400, anything unexpected a JSON 500 (the
connection is never just dropped). Hardening: a listen backlog of 128, a deadline per request (a client that
trickles its headers is cut off), a cap on connections served at once, the Host header checked against the names
this server answers to (DNS rebinding), API requests from other sites' pages refused (`Origin`, `Sec-Fetch-Site`),
POST bodies only as `application/json`, answers cached up to CACHE_BYTES, strict security headers and no version in
`Server:`. Posted logs and configs are answered by worker processes (web/pool.py), so a large explain never holds
this process's interpreter while plans and the page are served. Under load (`serve`): several processes share the
listening socket and balance their connections, and computed answers take turns in the order they came (`Turns`).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections import OrderedDict, deque
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import urlsplit

REQUEST_DEADLINE = 10.0
"""Seconds a connection may take to deliver one request (line, headers and body), idle keep-alive time included."""
IDLE_TIMEOUT = 5.0
"""Seconds one socket read may wait."""
MAX_CONNECTIONS = 512
"""Connections served at once. When all are taken, the one that has waited longest for its request is cut off to
make room (a crowd of half-open connections cannot lock others out); only if none is waiting does a JSON 503 go out."""
MAX_BODY = 10 * 1024 * 1024
"""Largest request body (a pasted log plus its JSON envelope); larger is a 413 without reading it."""
CACHE_SIZE = 512
"""GET answers kept (the engine is pure: the same query gives the same bytes)."""
CACHE_BYTES = 64 * 1024 * 1024
"""Bytes of answers kept at most; an answer over an eighth of it is never kept (a 99 MB Lightning plan)."""
SAME_SITE = {"same-origin", "none"}
"""`Sec-Fetch-Site` values of the page's own requests (`none`: typed in the address bar)."""
LOOPBACK = {"localhost", "127.0.0.1", "::1"}

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
STATIC = {
    "/": ("page.html", "text/html; charset=utf-8"),
    "/index.html": ("page.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/vendor/uPlot.iife.min.js": ("vendor/uPlot.iife.min.js", "text/javascript; charset=utf-8"),
    "/vendor/uPlot.min.css": ("vendor/uPlot.min.css", "text/css; charset=utf-8"),
    "/vendor/uPlot.LICENSE": ("vendor/uPlot.LICENSE", "text/plain; charset=utf-8"),
}


def _static_files() -> dict[str, tuple[bytes, str]]:
    root = resources.files("trainsteps.web")
    return {path: (root.joinpath(name).read_bytes(), kind) for path, (name, kind) in STATIC.items()}


class Handler(BaseHTTPRequestHandler):
    server_version = "trainsteps"
    protocol_version = "HTTP/1.1"  # keep-alive: the page's requests reuse one connection
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall on keep-alive connections)
    timeout = IDLE_TIMEOUT
    server: CalculatorServer

    def version_string(self) -> str:
        return self.server_version  # no Python or trainsteps version in `Server:`

    def handle_one_request(self) -> None:
        self.server.watch(self.connection)  # the reaper cuts this connection off if the request is not in by the deadline
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError, OSError):
            self.close_connection = True
        finally:
            self.server.unwatch(self.connection)

    # ---- routes ----------------------------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self._post)

    def _guarded(self, action) -> None:
        if self.command == "GET":
            self.server.unwatch(self.connection)  # the request is in; a POST body is still to come
        try:
            if not self._host_allowed():
                return self._json(HTTPStatus.MISDIRECTED_REQUEST, {"error": "this server does not answer to that Host name",
                                                                   "hint": "open it as http://127.0.0.1:PORT/ or start it with --host NAME"})
            if len(self.headers.get_all("Content-Length") or []) > 1 or "Transfer-Encoding" in self.headers:
                self.close_connection = True  # which length is meant is ambiguous: the body is never read
                return self._json(HTTPStatus.BAD_REQUEST, {"error": "the request has more than one Content-Length, or a Transfer-Encoding",
                                                           "hint": "send one Content-Length and a plain body"})
            if self.command == "GET" and self.headers.get("Content-Length", "0") != "0":
                self.close_connection = True  # a GET body is never read, so it cannot be taken for a second request
            if urlsplit(self.path).path.startswith("/api/") and self._cross_site():
                return self._json(HTTPStatus.FORBIDDEN, {"error": "this server answers only its own page",
                                                         "hint": "open the calculator at this server's address; another site cannot use it"})
            action()
        except Exception as exc:  # noqa: BLE001 - the last line of defence: a JSON 500, never a dropped connection
            if os.environ.get("TRAINSTEPS_DEBUG") == "1":
                import traceback

                traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {type(exc).__name__}",
                                                          "hint": "this is a defect in trainsteps; the same settings on the "
                                                                  "command line with TRAINSTEPS_DEBUG=1 show where"})

    def _get(self) -> None:
        url = urlsplit(self.path)
        static = self.server.files.get(url.path)
        if static is not None:
            body, kind = static
            cache = "no-cache" if url.path in ("/", "/index.html") else "public, max-age=300"
            return self._send(HTTPStatus.OK, body, kind, cache)
        if url.path in ("/api/plan", "/api/compare", "/api/solve"):
            return self._cached(url.path, url.query)
        if url.path == "/api/meta":
            from trainsteps.web.routes import meta

            return self._json(HTTPStatus.OK, meta())
        if url.path in ("/api/explain", "/api/config"):
            return self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{url.path} takes a POST with a JSON body",
                                                              "hint": "the page sends it; see docs/web.md"})
        self._json(HTTPStatus.NOT_FOUND, {"error": f"nothing at {url.path[:100]}", "hint": "open / or use /api/plan"})

    def _cached(self, path: str, query: str) -> None:
        key = (path, query)
        hit = self.server.cache_get(key)
        if hit is None:
            from trainsteps.web.routes import answer_query

            with self.server.turns:
                hit = self._encode(*answer_query(path, query))
            if hit[0] == HTTPStatus.OK:
                self.server.cache_put(key, hit)
        self._send(hit[0], hit[1], "application/json; charset=utf-8", "no-store")

    def _post(self) -> None:
        from trainsteps.web.routes import answer_post

        path = urlsplit(self.path).path
        if path not in ("/api/explain", "/api/config"):
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"nothing to POST at {path[:100]}", "hint": "use /api/explain or /api/config"})
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True
            return self._json(HTTPStatus.LENGTH_REQUIRED, {"error": "the request has no Content-Length", "hint": "send the body with its length"})
        if int(length) > MAX_BODY:
            self.close_connection = True  # the body is not read: closing is the only way to stay in sync
            return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {
                "error": f"the request is {int(length):,} bytes; the page takes at most {MAX_BODY // (1024 * 1024)} MB",
                "hint": "read large logs with the command line: trainsteps explain FILE (it streams any size)"})
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":  # a form or text/plain POST is what another site's page can send without asking
            self.close_connection = True
            return self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "the body must be JSON (Content-Type: application/json)",
                                                                  "hint": "the page sends it; see docs/web.md"})
        raw = self.rfile.read(int(length))
        self.server.unwatch(self.connection)
        if self.server.heavy is not None:  # in a worker process: this interpreter stays free for other requests
            status, data = self.server.heavy.answer(path, raw)
            return self._send(status, data, "application/json; charset=utf-8", "no-store")
        status, body = answer_post(path, raw)
        self._json(status, body)

    # ---- checks and output -----------------------------------------------------------------------------------------
    def _host_allowed(self) -> bool:
        allowed = self.server.allowed_hosts
        if allowed is None:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            name, _, port = host[1:].partition("]")
            port = port.removeprefix(":")
        elif host.count(":") == 1:
            name, port = host.split(":")
        else:
            name, port = host, ""
        return name in allowed and (port == "" or port.isdigit())  # `localhost:80@evil.example` is no port

    def _cross_site(self) -> bool:
        """A request another site's page made: its browser says so in `Sec-Fetch-Site`, or sends an `Origin` (`null`
        for a form or a sandboxed frame) that is not this server's. Such a page cannot read the answer, but it could
        make this server do the work; clients other than browsers send neither header."""
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site.strip().lower() not in SAME_SITE:
            return True
        origin = self.headers.get("Origin")
        if origin is None:
            return False
        parts = urlsplit(origin.strip().lower())
        return parts.scheme not in ("http", "https") or parts.netloc != (self.headers.get("Host") or "").strip().lower()

    @staticmethod
    def _encode(status: int, body: dict) -> tuple[int, bytes]:
        from trainsteps.web.routes import encode

        return status, encode(body)

    def _json(self, status: int, body: dict) -> None:
        status, data = self._encode(status, body)
        self._send(status, data, "application/json; charset=utf-8", "no-store")

    def _send(self, status: int, body: bytes, kind: str, cache: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Malformed requests (bad request line, headers too long, unknown method) answer in JSON too."""
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.0"  # an unparseable line counts as HTTP/0.9, which has no headers: answer as 1.0
        if not hasattr(self, "command"):
            self.command = None
        try:
            self._json(code, {"error": message or HTTPStatus(code).phrase, "hint": explain or "send a plain HTTP/1.1 GET or POST"})
        except OSError:
            pass

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet by default
        if os.environ.get("TRAINSTEPS_WEB_LOG") == "1":
            super().log_message(format, *args)


class Turns:
    """Answers computed one at a time, in the order their requests came. The interpreter lock runs one thread at a
    time anyway, but hands over in no order (a thread may wait through many others' turns): in turns, the slowest
    of 20 plans asked at once waits for the 19 before it, not for however many the lock served first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()
        self._busy = False

    def __enter__(self) -> None:
        with self._lock:
            if not self._busy:
                self._busy = True
                return
            mine = threading.Event()
            self._waiting.append(mine)
        mine.wait()  # set by the thread before, which hands its turn over (the queue stays busy)

    def __exit__(self, *exc) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._busy = False


class CalculatorServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, address, allowed_hosts: set[str] | None, workers: int = 0):
        from trainsteps.web.pool import HeavyPool

        self.allowed_hosts = allowed_hosts
        self.heavy = HeavyPool(workers) if workers > 0 else None
        """Posted logs and configs run in this pool of worker processes (web/pool.py); None: in the request's thread."""
        self.files = _static_files()
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.turns = Turns()
        """Computed answers (not the cached ones, not the page's files) wait here for their turn."""
        self._cache: OrderedDict = OrderedDict()
        self._cached_bytes = 0
        self._closed = threading.Event()
        self.active = 0
        """Connections being served now (each holds a thread)."""
        self._reaper: threading.Thread | None = None
        self._counts: memoryview | None = None
        self._index = 0
        super().__init__(address, Handler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        if self._reaper is None:  # started here, not in __init__: `serve` forks before any thread runs
            self._reaper = threading.Thread(target=self._reap, name="trainsteps-web-reaper", daemon=True)
            self._reaper.start()
        super().serve_forever(poll_interval)

    # connections that take too long to send a request are shut down (slowloris)
    def watch(self, connection: socket.socket) -> None:
        with self._lock:
            self._deadlines[connection] = time.monotonic() + REQUEST_DEADLINE

    def unwatch(self, connection: socket.socket) -> None:
        with self._lock:
            self._deadlines.pop(connection, None)

    def _reap(self) -> None:
        while not self._closed.wait(0.5):
            now = time.monotonic()
            with self._lock:
                late = [c for c, deadline in self._deadlines.items() if deadline < now]
                for connection in late:
                    del self._deadlines[connection]
            for connection in late:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _evict_slowest(self) -> bool:
        """Shut down the connection that has waited longest for its request; False when none is waiting."""
        with self._lock:
            if not self._deadlines:
                return False
            connection = min(self._deadlines, key=self._deadlines.get)
            del self._deadlines[connection]
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return True

    # at most MAX_CONNECTIONS threads: a full house evicts the slowest request, else the newcomer gets a 503
    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False) and not (self._evict_slowest() and self._slots.acquire(timeout=1.0)):
            try:
                body = b'{"error":"too many connections","hint":"try again in a moment"}'
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
                                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        with self._lock:
            self.active += 1
            self._share_active()
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.unwatch(request)
            with self._lock:
                self.active -= 1
                self._share_active()
            self._slots.release()

    # several processes (`serve`): each says how many connections it serves, and one serving more than another leaves
    # a new connection to it for a moment (keep-alive connections stay where they land: 13 and 7 of 20 would make
    # the 13 wait twice as long)
    def share_with(self, counts: memoryview, index: int) -> None:
        self._counts, self._index = counts, index
        self.socket.setblocking(False)  # a connection another process took is no connection to wait for here

    def _share_active(self) -> None:
        if self._counts is not None:
            self._counts[self._index] = self.active

    def get_request(self):
        if self._counts is not None and self._counts[self._index] > min(self._counts):
            time.sleep(BALANCE_WAIT)
        return super().get_request()  # a BlockingIOError when another process took it: serve_forever goes on

    def server_close(self) -> None:
        self._closed.set()
        if self.heavy is not None:
            self.heavy.close()
        super().server_close()

    def handle_error(self, request, client_address) -> None:
        if os.environ.get("TRAINSTEPS_DEBUG") == "1":
            super().handle_error(request, client_address)

    def cache_get(self, key):
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
            return hit

    def cache_put(self, key, value) -> None:
        size = len(value[1])
        if size > CACHE_BYTES // 8:
            return
        with self._lock:
            old = self._cache.pop(key, None)
            self._cached_bytes += size - (len(old[1]) if old is not None else 0)
            self._cache[key] = value
            while len(self._cache) > CACHE_SIZE or self._cached_bytes > CACHE_BYTES:
                _, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped[1])


def allowed_hosts_for(host: str) -> set[str] | None:
    """Loopback names always; the --host name too; None (any Host) when listening on every interface."""
    if host in ("0.0.0.0", "::", ""):
        return None
    return LOOPBACK | {host.strip("[]").lower()}


class _CalculatorServer6(CalculatorServer):
    address_family = socket.AF_INET6


BALANCE_WAIT = 0.003
"""Seconds a process serving more connections than another waits before it takes a new one."""
PROCESSES = 2
"""Processes serving requests where the system can fork (`trainsteps web --processes`): each has its own interpreter
lock, so plans asked at once are computed on more than one core."""


def serve(server: CalculatorServer, processes: int = 1) -> None:
    """`serve_forever` in `processes` processes that share the listening socket: this one, and others forked before
    any thread starts (the routes imported and warmed first, so they are shared, not imported again). A forked
    process ends with this one, however this one ends. Each process has its own threads, connection cap, answer cache
    and pool of workers for posted logs."""
    children = []
    if processes > 1 and hasattr(os, "fork"):
        import gc
        import mmap

        _warm()
        gc.freeze()  # what is imported now lives as long as the server: the collector skips it, and pages stay shared
        counts = memoryview(mmap.mmap(-1, 4 * processes)).cast("i")  # shared with the forked processes
        server.share_with(counts, 0)
        parent = os.getpid()
        for index in range(1, processes):
            pid = os.fork()
            if pid == 0:
                server.share_with(counts, index)
                _serve_forked(server, parent)
            children.append(pid)
    try:
        server.serve_forever()
    finally:
        for pid in children:
            _end(pid)


def _warm() -> None:
    from trainsteps.web import api, routes

    for path in ("/api/plan", "/api/compare", "/api/solve"):
        api.load_command(api.ROUTES[path])
    routes.answer_query("/api/plan", "num_examples=1")  # click's defaults for plan, worked out once (web/api.parsed)


def _end_with(parent: int) -> None:
    """A forked process ends when the first one does, however that ended (killed: no time to stop the others). It is
    then another process's child: a test of the parent's pid alone would see a killed parent not yet reaped."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _serve_forked(server: CalculatorServer, parent: int) -> None:
    code = 0
    try:
        threading.Thread(target=_end_with, args=(parent,), name="trainsteps-web-parent-watch", daemon=True).start()
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl+C reaches every process of the terminal's group; SIGTERM comes from the first one
        pass
    except BaseException:  # noqa: BLE001 - a forked process never returns into its parent's code
        code = 1
    finally:
        try:
            server.server_close()
        finally:
            os._exit(code)


def _end(pid: int, grace: float = 5.0) -> None:
    """Stop a forked serving process: SIGTERM (it closes as Ctrl+C does), SIGKILL if it has not ended in `grace` s."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
        ends = time.monotonic() + grace
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > ends:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.02)
    except (ProcessLookupError, ChildProcessError):
        pass


def make_server(host: str = "127.0.0.1", port: int = 8000, workers: int | None = None) -> CalculatorServer:
    """`workers`: processes for posted logs and configs (web/pool.py; default pool.WORKERS, 0: the request's thread)."""
    from trainsteps.web import pool

    kind = _CalculatorServer6 if ":" in host else CalculatorServer
    return kind((host, port), allowed_hosts_for(host), pool.WORKERS if workers is None else workers)
