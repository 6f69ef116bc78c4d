"""One function per kind of request: settings in, (HTTP status, JSON body) out. The body is the CLI's own JSON for
the same settings, plus `web`: the CLI's text (rendered by the same report functions, with the derivation), the
equivalent command line and the chart data."""

from __future__ import annotations

import json
from http import HTTPStatus
from pathlib import Path

import click

from trainsteps.configs.files import confined
from trainsteps.errors import TrainstepsError
from trainsteps.web import api
from trainsteps.web.charts import compare_chart, encoded_points, explain_view, schedule_charts, time_figures

_SCHEDULES = ("hf", "neox", "megatron", "lightning")


def answer_query(path: str, query: str) -> tuple[int, dict]:
    """GET /api/plan, /api/compare, /api/solve."""
    route = api.ROUTES[path]
    command = api.load_command(route)
    lang = "en"
    try:
        settings = api.parse_query(query)
        lang = api.language(settings)
        argv = api.argv_for(command, settings) + list(route.extra)
        lr = api.lr_settings(settings) if path == "/api/plan" else None
        status, answer = _answer(command, argv, lang, lr=lr, compare=path == "/api/compare")
        if path == "/api/plan" and settings.get("families") == "1" and status == HTTPStatus.OK and answer.get("framework") == "hf":
            answer["web"]["families"] = _families(command, argv, lang)
        return status, answer
    except TrainstepsError as exc:
        return _refused(command, exc, lang)


def _families(command: click.Command, argv: list[str], lang: str) -> dict | None:
    """The same settings under every release family (`--compare-versions`), answered with the plan it sits beside, so
    one change on the page is one request. None where the comparison refuses them (time options, Unsloth)."""
    try:
        status, answer = _answer(command, argv + ["--compare-versions"], lang, compare=True)
    except TrainstepsError:
        return None
    return answer["web"]["charts"] if status == HTTPStatus.OK else None


def answer_post(path: str, raw: bytes, logs: Path | None = None) -> tuple[int, dict]:
    """POST /api/explain {"text": LOG, "name"?: FILE NAME, "settings": {...}} and /api/config {"files": [{name, text,
    role?}], "settings": {...}}. `logs`: the static site's folder of logs the page wrote there in chunks (any size),
    named by {"log_file": NAME}; the server has none, so it only takes a log as text."""
    route = api.ROUTES[path]
    command = api.load_command(route)
    lang = "en"
    try:
        body = _json_body(raw)
        settings = {str(k): _setting_text(v) for k, v in (body.get("settings") or {}).items()} if isinstance(body.get("settings"), dict) else {}
        lang = api.language(settings)
        if path == "/api/explain":
            return _explain(command, body, settings, lang, logs)
        with api.temporary_folder() as folder:
            folder = Path(folder)
            try:
                return _config(command, body, settings, lang, folder)
            except TrainstepsError as exc:  # a refusal may quote a file's path: name it as the user did
                status, answer = _refused(command, exc, lang)
                return status, api.without_folder(answer, folder)
    except TrainstepsError as exc:
        return _refused(command, exc, lang)


def _explain(command: click.Command, body: dict, settings: dict, lang: str, logs: Path | None) -> tuple[int, dict]:
    """explain the posted text, or (the static site) a log file the page wrote in `logs`; the command line shown is
    one that runs as pasted: the file's name, or the pasted text on stdin."""
    argv = api.argv_for(command, settings)
    shown = argv + ["--lang", lang] * (lang != "en")
    name = body.get("log_file")
    if logs is not None and isinstance(name, str) and api.is_bare_name(name) and (logs / name).is_file():
        status, answer = _answer(command, [str(logs / name), *argv], lang)
        if status == HTTPStatus.OK:
            answer["web"]["cli"] = api.cli_line(command, [name, *shown])
        return status, api.without_folder(answer, logs)
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise api.InputError("web.error.no_log", "web.hint.no_log")
    api.check_log(text)
    named = body.get("name")
    if isinstance(named, str) and api.is_bare_name(named):  # read from a file: explained as that file, by its name
        with api.temporary_folder() as folder:
            (Path(folder) / named).write_text(text, encoding="utf-8")
            return _explain(command, {"log_file": named}, settings, lang, Path(folder))
    status, answer = _answer(command, ["--text", text, *argv], lang)
    if status == HTTPStatus.OK:
        answer["web"]["cli"] = api.stdin_line(command, shown, text)
    return status, answer


def _config(command: click.Command, body: dict, settings: dict, lang: str, folder: Path) -> tuple[int, dict]:
    """POST /api/config: the posted files written to `folder`, then `plan FILES... SETTINGS` as the CLI runs it."""
    paths = api.write_config_files(body.get("files"), folder, launch_only=bool(settings.get("launch", "").strip()))
    try:  # the schedule the file names; one transformers would refuse is not drawn, the plan still is
        lr = api.lr_settings({**api.lr_from_files(body.get("files")), **settings})
    except TrainstepsError:
        lr = api.lr_settings(settings)
    argv = api.argv_for(command, settings)
    if settings.get("framework") == "deepspeed" and paths:  # a DeepSpeed JSON is its --deepspeed-config
        argv += ["--deepspeed-config", str(paths[0])]
    else:
        argv = [str(p) for p in paths] + argv
    with confined(folder):  # data files a posted config names are read only from the posted files
        status, answer = _answer(command, argv, lang, lr=lr, shown_args=[p.name for p in paths] + argv[len(paths):])
    return status, api.without_folder(answer, folder)


def _answer(command: click.Command, argv: list[str], lang: str, lr=None, compare: bool = False,
            shown_args: list[str] | None = None) -> tuple[int, dict]:
    layouts = "--global-batch" in argv  # batch layouts have no derivation: solve refuses --explain there
    explains = _explains(command) and not layouts
    extra = ["--format", "json", "--lang", lang] + (["--explain"] if explains else [])
    try:
        data, text = api.run(command, argv + extra)
    except click.UsageError as exc:
        error, hint = api.usage_error(command, exc)
        return HTTPStatus.BAD_REQUEST, {"error": error, "hint": hint or None}
    web = {"text": text, "cli": api.cli_line(command, (shown_args if shown_args is not None else argv) + ["--lang", lang] * (lang != "en"))}
    if compare:
        web["charts"] = compare_chart(data)
    elif isinstance(data.get("run"), dict) and data.get("framework") in _SCHEDULES:
        web["charts"] = schedule_charts(data, lr)
    if data.get("time"):
        web["time"] = time_figures(data, lang)
    if command.name == "explain":
        web["explain"] = explain_view(data, lang)
    return HTTPStatus.OK, {**data, "web": web}


def _explains(command: click.Command) -> bool:
    """Whether the command takes `--explain` (asked once per command: `plan` has over a hundred parameters)."""
    if command not in _EXPLAINS:
        _EXPLAINS[command] = any(p.name == "explain" for p in command.params)
    return _EXPLAINS[command]


_EXPLAINS: dict = {}
_SLOT = "\x00lr-points\x00"  # no setting can hold it: control characters are refused in every value
_SLOT_JSON = json.dumps(_SLOT).encode()


def encode(body: dict) -> bytes:
    """An answer as the server sends it (compact UTF-8 JSON); a kept LR curve's points go in as written once."""
    web = body.get("web")
    lr = web.get("charts", {}).get("lr") if isinstance(web, dict) and isinstance(web.get("charts"), dict) else None
    points = lr.get("points") if isinstance(lr, dict) else None
    text = encoded_points(points)
    if text is None:
        return _dumps(body)
    if _orjson is not None and _fragment is not None:  # orjson writes the kept text where it stands: no search through the answer's bytes
        lr["points"] = _fragment(text)
        try:
            return _orjson.dumps(body)
        except TypeError:  # an int over 64 bits: written below, by the standard library
            pass
        finally:
            lr["points"] = points
    lr["points"] = _SLOT
    try:
        data = _dumps(body)
    finally:
        lr["points"] = points
    return data.replace(_SLOT_JSON, text.encode(), 1)


def _dumps(body: dict) -> bytes:
    if _orjson is not None:
        try:
            return _orjson.dumps(body)
        except TypeError:  # orjson.JSONEncodeError: an int over 64 bits, a key that is not a string: the standard library writes it
            pass
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


try:  # the `web` extra: writes a 48 kB plan answer in a tenth of the standard library's time (most of it lists of ints)
    import orjson as _orjson
except ImportError:  # the static site's Pyodide, or an install without the extra: the same answers, written by json
    _orjson = None
_fragment = getattr(_orjson, "Fragment", None)
"""orjson's already written JSON (3.9 and later)."""


def _refused(command: click.Command, exc: TrainstepsError, lang: str) -> tuple[int, dict]:
    text, hint = exc.render(lang)
    status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE if isinstance(exc, api.PayloadTooLarge) else HTTPStatus.BAD_REQUEST
    return status, {"error": api.page_words(command, text), "hint": api.page_words(command, hint), "id": exc.msg_id}


def _json_body(raw: bytes) -> dict:
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=api._no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise api.InputError("web.error.body", "web.hint.body") from None
    if not isinstance(body, dict):
        raise api.InputError("web.error.body", "web.hint.body")
    return body


def _setting_text(value) -> str:
    """Posted settings arrive as JSON values; they are checked as the query string's text is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (int, float, str)):
        return str(value)
    raise api.InputError("web.error.body", "web.hint.body")


def meta() -> dict:
    """What the page suggests: every transformers release modelled (newest first), the scheduler names, and every
    planner of the table with the fields it takes."""
    from trainsteps.frameworks.hf.log_lines import all_releases
    from trainsteps.frameworks.hf.lr_schedule import METRIC_DRIVEN, SCHEDULERS
    from trainsteps.frameworks.hf.releases import NEWEST
    from trainsteps.planners import RL_FRAMEWORKS
    from trainsteps.timing.gpus import GPUS
    return {"releases": list(reversed(all_releases())), "newest": str(NEWEST), "schedulers": list(SCHEDULERS + METRIC_DRIVEN),
            "limits": {"log_bytes": api.MAX_LOG_BYTES, "config_bytes": api.MAX_CONFIG_BYTES, "config_files": api.MAX_CONFIG_FILES},
            "gpus": sorted(GPUS), "rl_frameworks": list(RL_FRAMEWORKS),
            "planners": api.planner_fields(api.load_command(api.ROUTES["/api/plan"]))}
