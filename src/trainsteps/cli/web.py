"""`trainsteps web`: the calculator in a browser, on this machine."""

from __future__ import annotations

import sys

import click


@click.command("web")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (keep it local unless you mean it).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on (0 picks a free one).")
def web_command(host: str, port: int) -> None:
    """Serve the web calculator: a page with every plan setting, en / zh, and a JSON API (/api/plan, /api/compare)."""
    from trainsteps.cli.output import user_errors
    from trainsteps.web.server import make_server

    with user_errors():
        server = _listen(make_server, host, port)
    click.echo(f"trainsteps calculator on http://{host}:{server.server_address[1]}/  (Ctrl+C to stop)")
    sys.stdout.flush()  # the address now, also when stdout is a file or a pipe (scripts read the port from it)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _listen(make_server, host: str, port: int):
    """The server, or one line saying why this machine will not let it listen there."""
    import errno

    from trainsteps.errors import InputError

    try:
        return make_server(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise InputError("web.error.port_in_use", "web.hint.port_in_use", port=port) from None
        raise InputError("web.error.listen", "web.hint.listen", host=host, port=port, detail=exc.strerror or str(exc)) from None
