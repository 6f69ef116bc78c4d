"""`trainsteps web`: the calculator in a browser, on this machine."""

from __future__ import annotations

import click


@click.command("web")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (keep it local unless you mean it).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on (0 picks a free one).")
def web_command(host: str, port: int) -> None:
    """Serve the web calculator: a page with every plan setting, en / zh, and a JSON API (/api/plan, /api/compare)."""
    from trainsteps.web.server import make_server

    server = make_server(host, port)
    click.echo(f"trainsteps calculator on http://{host}:{server.server_address[1]}/  (Ctrl+C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
