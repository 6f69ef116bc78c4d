"""`trainsteps web`: the calculator in a browser, on this machine."""

from __future__ import annotations

import errno
import signal
import sys

import click

from trainsteps.cli.output import user_errors
from trainsteps.errors import InputError


@click.command("web")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The page answers only to loopback names and this one (0.0.0.0: any name).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on (0 picks a free one).")
@click.option("--processes", default=None, type=click.IntRange(1, 64),
              help="Processes serving requests (default 2 where the system can fork, else 1); each uses one core at a time.")
def web_command(host: str, port: int, processes: int | None) -> None:
    """Serve the web calculator: plan, configs, logs, solve, pretraining, with plots and links you can share.

    The page runs the same commands as this CLI (JSON API: /api/plan, /api/compare, /api/solve, POST /api/explain,
    POST /api/config; settings use the JSON `inputs` names). See docs/web.md.
    """
    import os

    from trainsteps.web import pool
    from trainsteps.web.server import PROCESSES, make_server, serve

    with user_errors("en"):
        if processes is None:
            processes = PROCESSES if hasattr(os, "fork") else 1
        elif processes > 1 and not hasattr(os, "fork"):
            raise InputError("web.error.no_fork", "web.hint.no_fork", processes=processes)
        try:  # the workers for posted logs are shared out, so that more processes do not mean more workers
            server = make_server(host, port, workers=max(1, pool.WORKERS // processes))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise InputError("web.error.port_in_use", "web.hint.port_in_use", port=port) from None
            raise InputError("web.error.address", "web.hint.address", host=host, port=port, detail=exc.strerror or str(exc)) from None
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"trainsteps calculator on http://{shown}:{server.server_address[1]}/  (Ctrl+C to stop)")
    sys.stdout.flush()  # the address now, also when stdout is a file or a pipe (scripts read the port from it)
    signal.signal(signal.SIGTERM, _stop)  # `kill`: the same clean stop as Ctrl+C (the worker processes end with it)
    try:
        serve(server, processes)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _stop(signum, frame):
    raise KeyboardInterrupt

