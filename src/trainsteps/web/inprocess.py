"""The page's requests answered without HTTP: the static site's Web Worker (Pyodide in the browser) hands `answer` what
the page would have sent `trainsteps web`, and gets back the server's status and JSON text. The answers come from the
same route functions (web/routes.py), so the static page and the served page show the same numbers and words."""

from __future__ import annotations

import json
from collections import OrderedDict
from http import HTTPStatus

from trainsteps.web.api import ROUTES

GET_PATHS = ("/api/plan", "/api/compare", "/api/solve")
POST_PATHS = ("/api/explain", "/api/config")
CACHE_SIZE = 256
"""GET answers kept: the engine is pure, and the page asks the same plan again when a link is reopened or a tab revisited."""

BROWSER_CONFIG_BYTES = 64 * 1024 * 1024
"""Config and data files together that the page in a browser takes. They never leave the browser, so the server's cap
(made for what a server accepts from anyone) gives way to what a tab's memory holds comfortably. Logs keep the
server's cap: a pasted log is read line by line (`explain --text`), which in Pyodide took 22 s for 8 MB on a busy 2-core machine."""

LOG_FOLDER = "/tmp/trainsteps-logs"
"""Where the static site's worker writes a log file the page reads in slices (File.slice, any size): explain reads it
from there as the CLI reads a file, and its name stays the user's."""

_cache: OrderedDict[tuple[str, str], list] = OrderedDict()


def use_browser_limits() -> None:
    """Called by the static site's worker once, before any request (never by the server)."""
    from trainsteps.web import api

    api.MAX_CONFIG_BYTES = BROWSER_CONFIG_BYTES


def answer(method: str, path: str, query: str = "", body: str = "") -> list:
    """[HTTP status, JSON text], as the server would answer the same request."""
    try:
        if path == "/api/meta":
            from trainsteps.web.routes import meta

            return _encoded(HTTPStatus.OK, meta())
        if method == "GET" and path in GET_PATHS:
            return _cached(path, query)
        if method == "POST" and path in POST_PATHS:
            from pathlib import Path

            from trainsteps.web.routes import answer_post

            return _encoded(*answer_post(path, body.encode("utf-8"), logs=Path(LOG_FOLDER)))
        return _encoded(HTTPStatus.NOT_FOUND, {"error": f"nothing at {method} {path[:100]}", "hint": f"one of {', '.join(ROUTES)}"})
    except ModuleNotFoundError as exc:  # numpy (LLaMA-Factory's mixing), tokenizers: not in the browser's wheels
        from trainsteps.errors import InputError

        text, hint = InputError("web.error.needs_module", "web.hint.needs_module", module=exc.name).render(_language(query, body))
        return _encoded(HTTPStatus.BAD_REQUEST, {"error": text, "hint": hint, "id": "web.error.needs_module"})
    except Exception as exc:  # noqa: BLE001 - the page gets the server's JSON 500, never a worker that stops answering
        return _encoded(HTTPStatus.INTERNAL_SERVER_ERROR, {
            "error": f"internal error: {type(exc).__name__}",
            "hint": "this is a defect in trainsteps; the same settings on the command line with TRAINSTEPS_DEBUG=1 show where"})


def _language(query: str, body: str) -> str:
    from trainsteps.web.api import language, parse_query

    try:
        settings = json.loads(body).get("settings") if body else parse_query(query)
        return language(settings if isinstance(settings, dict) else {})
    except Exception:  # noqa: BLE001 - a body that cannot be read is answered in English
        return "en"


def _cached(path: str, query: str) -> list:
    from trainsteps.web.routes import answer_query

    key = (path, query)
    hit = _cache.get(key)
    if hit is None:
        hit = _encoded(*answer_query(path, query))
        if hit[0] == HTTPStatus.OK:
            _cache[key] = hit
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    return hit


def _encoded(status: int, body: dict) -> list:
    return [int(status), json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))]
