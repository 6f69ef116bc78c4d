"""A small HTTP server for the calculator (standard library only; binds to localhost by default)."""

from __future__ import annotations

import json
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import urlsplit

from trainsteps.errors import TrainstepsError


def _page() -> bytes:
    return resources.files("trainsteps.web").joinpath("page.html").read_bytes()


class Handler(BaseHTTPRequestHandler):
    server_version = "trainsteps"

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        url = urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            return self._send(HTTPStatus.OK, _page(), "text/html; charset=utf-8")
        if url.path in ("/api/plan", "/api/compare"):
            return self._api(url.path, url.query)
        return self._json(HTTPStatus.NOT_FOUND, {"error": "not found", "hint": "use / or /api/plan"})

    def _api(self, path: str, query: str) -> None:
        from trainsteps import plan
        from trainsteps.compare import compare_families
        from trainsteps.web.api import spec_from_query

        lang = "en"
        try:
            spec, lang = spec_from_query(query)
            if path == "/api/plan":
                body = plan(spec).to_dict(lang)
            else:
                body = {"comparison": [row.to_dict(lang) for row in compare_families(spec)]}
        except TrainstepsError as exc:
            text, hint = exc.render(lang)
            return self._json(HTTPStatus.BAD_REQUEST, {"error": text, "hint": hint})
        self._json(HTTPStatus.OK, body)

    def _json(self, status: HTTPStatus, body: dict) -> None:
        self._send(status, json.dumps(body, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet by default
        pass


def make_server(host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), Handler)
