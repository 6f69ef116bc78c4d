"""Heavy requests (a posted log for explain, posted config files) run in worker processes, not in the server's.

A 1 MB log takes explain a large fraction of a second of CPU; run in a server thread it would hold the interpreter
lock, and every other request (plans, the page) would wait behind it. Here each such request goes to a small pool of
worker processes (started on first use, with trainsteps imported once), so the server's own interpreter stays free
for the light requests. The pool is bounded: at most QUEUE requests are running or waiting, and the next one is
answered at once with a JSON 503 rather than queued without end. Each request may use at most CPU_SECONDS of CPU in
its worker: past that it is stopped with a JSON 503 that says so, and the worker goes on serving.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from http import HTTPStatus

WORKERS = 2
"""Worker processes (the machines this runs on have a few cores; the server's own process serves the rest)."""
QUEUE = 8
"""Heavy requests running or waiting at once; the next one gets a 503."""
CPU_SECONDS = 20
"""CPU seconds one heavy request may use in its worker."""


class CpuCapReached(Exception):
    """Raised in a worker when a request has used its CPU seconds."""


def _on_cpu_cap(signum, frame):  # SIGXCPU: the soft limit set for this request was reached
    raise CpuCapReached


def _start_worker(server_pid: int) -> None:
    signal.signal(signal.SIGXCPU, _on_cpu_cap)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops its workers
    threading.Thread(target=_end_with, args=(server_pid,), name="trainsteps-worker-watch", daemon=True).start()


def _end_with(server_pid: int) -> None:
    """A worker ends when the server's process does, however that ended (a kill leaves no time to stop the pool)."""
    while True:
        time.sleep(1.0)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # the pid was taken by another user's process: the server is gone
            os._exit(0)


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def answer(path: str, raw: bytes, cpu_seconds: int) -> tuple[int, bytes]:
    """Runs in a worker: the route's answer, already encoded (the JSON is made here, not in the server)."""
    from trainsteps.web.routes import answer_post

    # Only the soft limit moves (a lowered hard limit could not be raised again): past it the kernel sends SIGXCPU every
    # second, and the handler stops the request at the next Python instruction.
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    cap = int(_cpu_used()) + cpu_seconds + 1
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
        try:
            status, body = answer_post(path, raw)
        finally:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except CpuCapReached:
        return HTTPStatus.SERVICE_UNAVAILABLE, encode(refusal("web.error.cpu_cap", "web.hint.cpu_cap", seconds=cpu_seconds))
    return status, encode(body)


def encode(body: dict) -> bytes:
    from trainsteps.web.routes import encode as encode_answer

    return encode_answer(body)


def refusal(error: str, hint: str, **params) -> dict:
    from trainsteps.i18n import message

    return {"error": message(error, "en", **params), "hint": message(hint, "en", **params), "id": error}


class HeavyPool:
    """The bounded pool of worker processes (see the module docstring)."""

    def __init__(self, workers: int = WORKERS, queue: int = QUEUE, cpu_seconds: int = CPU_SECONDS):
        self.workers, self.queue, self.cpu_seconds = workers, queue, cpu_seconds
        self._slots = threading.BoundedSemaphore(queue)
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None:
                methods = multiprocessing.get_all_start_methods()
                context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
                if context.get_start_method() == "forkserver":
                    context.set_forkserver_preload(["trainsteps.web.routes"])
                self._executor = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker,
                                                     initargs=(os.getpid(),))
            return self._executor

    def _restart(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)

    def answer(self, path: str, raw: bytes) -> tuple[int, bytes]:
        if not self._slots.acquire(blocking=False):
            return HTTPStatus.SERVICE_UNAVAILABLE, encode(refusal("web.error.busy", "web.hint.busy", queue=self.queue))
        try:
            executor = self._pool()
            try:
                return executor.submit(answer, path, raw, self.cpu_seconds).result()
            except BrokenProcessPool:  # a worker ended (killed, out of memory): a fresh pool serves the next request
                self._restart(executor)
                return HTTPStatus.SERVICE_UNAVAILABLE, encode(refusal("web.error.cpu_cap", "web.hint.cpu_cap",
                                                                      seconds=self.cpu_seconds))
        finally:
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
