"""The web calculator's API: settings from a query string (or a posted log / config files) -> the very CLI command
-> the CLI's JSON, plus the CLI's text and the chart data. No rule is restated here: each route runs the click
command the terminal runs (`plan`, `plan --compare-versions`, `solve`, `explain`), captured in-process.

Settings use the names of the JSON `inputs` (RunSpec field names: `num_examples`, `transformers`, ...); a few
pretraining `inputs` names are accepted for the CLI option they mirror (`tensor_model_parallel_size`).
"""

from __future__ import annotations

import math
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

import click

from trainsteps.configs.files import parse_text
from trainsteps.errors import InputError

LANGS = ("en", "zh")
MAX_LOG_BYTES = 8 * 1024 * 1024
"""A pasted or uploaded log larger than this is refused with a pointer to `trainsteps explain FILE`."""
MAX_CONFIG_BYTES = 2 * 1024 * 1024
"""All config files of one request together (YAML, JSON, dataset_info.json, small data files)."""
MAX_CONFIG_FILES = 12
MAX_TEXT_SETTING = 400
MAX_LAUNCH = 16_000
"""A pasted launch script (verl's and OpenRLHF's run a few dozen `key=value \\` lines): split like a shell would, never run."""
MAX_DIGITS = 24

_TRUE, _FALSE = {"1", "true", "on", "yes"}, {"0", "false", "off", "no", ""}
# `inputs` names that differ from the CLI option they set (value: (option name, inverted flag))
_ALIASES = {
    "transformers": ("transformers_version", False), "even_batches": ("no_even_batches", True),
    "dispatch_batches": ("no_dispatch_batches", True), "tensor_model_parallel_size": ("tensor_parallel_size", False),
    "pipeline_model_parallel_size": ("pipeline_parallel_size", False), "expert_model_parallel_size": ("expert_parallel_size", False),
    "split": ("data_split", False), "release": ("megatron_version", False), "code": ("megatron_code", False),
    "gpu": ("gpu_name", False), "set": ("rl_overrides", False), "unsloth": ("unsloth_release", False),
}
# options that read files or directories on the server, or shape the output: never taken from a request
_NEVER = {"configs", "path", "text", "data_prefix", "data_weight", "deepspeed_config", "data_paths", "dataset_split",
          "tokenizer_path", "data_format", "text_field", "template", "dataset_name", "no_special_tokens", "add_eos",
          "cutoff_len", "packing_names", "num_proc", "sample_packing_bin_size", "sample_packing_group_size",
          "sample_packing_sequentially", "threads", "fmt", "lang", "explain", "compare_versions", "timing_from", "model_path"}
# page state, the LR schedule and `families` (a plan that also answers its release families): read by the web layer,
# not passed to the command
PAGE_KEYS = {"lang", "tab", "lr_scheduler_type", "learning_rate", "lr_scheduler_kwargs", "families"}


@dataclass(frozen=True)
class Route:
    command: str
    """`module:attribute` of the click command the CLI runs."""
    extra: tuple[str, ...] = ()
    """Arguments the route always adds (`--compare-versions`)."""


ROUTES = {
    "/api/plan": Route("trainsteps.cli.plan:plan_command"),
    "/api/compare": Route("trainsteps.cli.plan:plan_command", ("--compare-versions",)),
    "/api/solve": Route("trainsteps.cli.solve:solve_command"),
    "/api/explain": Route("trainsteps.cli.explain:explain_command"),
    "/api/config": Route("trainsteps.cli.plan:plan_command"),
}


class PayloadTooLarge(InputError):
    """A log or config above the web's size cap (413)."""


def load_command(route: Route) -> click.Command:
    import importlib

    module, attr = route.command.split(":")
    return getattr(importlib.import_module(module), attr)


def parse_query(query: str) -> dict[str, str]:
    """`a=1&b=2` -> {'a': '1', 'b': '2'}; the last value wins, as in the CLI."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False, max_num_fields=200)
    except ValueError:
        raise InputError("web.error.too_many_fields", "web.hint.too_many_fields") from None
    return dict(pairs)


def language(settings: dict[str, str]) -> str:
    return settings.get("lang") if settings.get("lang") in LANGS else "en"


def argv_for(command: click.Command, settings: dict[str, str]) -> list[str]:
    """The command line the CLI would get for these settings; every value checked first (finite, whole, boolean)."""
    params = _options_of(command)
    argv: list[str] = []
    for key, text in settings.items():
        if key in PAGE_KEYS:
            continue
        name, inverted = _ALIASES.get(key, (key, False))
        param = params.get(name)
        if param is None or name in _NEVER:
            raise _unknown_field(key, params)
        argv += _option(param, key, text.strip(), inverted)
    return argv


def _unknown_field(key: str, params: dict) -> InputError:
    """An unknown setting, with the closest name the command takes where one is close (`stepp_time`: step_time)."""
    import difflib

    takes = sorted({*(name for name in params if name not in _NEVER), *_ALIASES} - {"configs"})
    close = difflib.get_close_matches(key, takes, n=1, cutoff=0.75)
    if close:
        return InputError("web.error.unknown_field", "web.hint.unknown_field_guess", name=key, guess=close[0])
    return InputError("web.error.unknown_field", "web.hint.unknown_field", name=key)


_OPTIONS: dict[tuple[int, int], dict] = {}


def _options_of(command: click.Command) -> dict[str, click.Option]:
    """A command's options by name, gathered once (`plan` has over a hundred; a request names a handful)."""
    key = (id(command), len(command.params))
    if key not in _OPTIONS:
        _OPTIONS[key] = {p.name: p for p in command.params if isinstance(p, click.Option)}
    return _OPTIONS[key]


def _option(param: click.Option, key: str, text: str, inverted: bool) -> list[str]:
    flag = param.opts[0]
    if param.is_flag:
        value = text.lower()
        if value not in _TRUE | _FALSE:
            raise InputError("web.error.not_a_boolean", "web.hint.not_a_boolean", name=key, value=text[:40])
        on = (value in _TRUE) != inverted
        if param.secondary_opts and value != "":  # --greater-is-better/--lower-is-better: false is a choice, not unset
            return [flag] if on else [param.secondary_opts[0]]
        return [flag] if on else []
    if text == "":
        return []  # an empty field is an unset field
    if param.multiple:  # repeated options (`--set KEY=VALUE`): one per line
        lines = [line.strip() for line in text.splitlines() if line.strip()][:50]
        return [part for line in lines for part in (flag, _checked(param, key, line))]
    if param.nargs > 1:
        parts = re.split(r"[\s,]+", text)
        if len(parts) != param.nargs:
            raise InputError("web.error.count", "web.hint.count", name=key, count=param.nargs, value=text[:40])
        return [flag, *(_checked(param, key, part) for part in parts)]
    return [flag, _checked(param, key, text)]


def _checked(param: click.Option, key: str, text: str) -> str:
    kind = param.type
    if isinstance(kind, (click.types.FloatParamType, click.FloatRange)):
        try:
            number = float(text)
        except ValueError:
            raise InputError("web.error.not_a_number", "web.hint.not_a_number", name=key, value=text[:40]) from None
        if not math.isfinite(number) or len(text) > 64:
            raise InputError("web.error.not_finite", "web.hint.not_finite", name=key, value=text[:40])
        return text
    if isinstance(kind, (click.types.IntParamType, click.IntRange)):
        if not re.fullmatch(r"[+-]?\d+", text):
            raise InputError("web.error.not_whole", "web.hint.not_whole", name=key, value=text[:40])
        if len(text.lstrip("+-")) > MAX_DIGITS:
            raise InputError("web.error.too_large", "web.hint.too_large", name=key, digits=MAX_DIGITS)
        return text
    if param.name == "launch":  # a launch script may span lines (`\\` continuations) and tabs
        if len(text) > MAX_LAUNCH or any(ord(c) < 32 and c not in "\n\r\t" for c in text):
            raise InputError("web.error.launch", "web.hint.launch", name=key, limit=f"{MAX_LAUNCH:,}")
        return text
    if len(text) > MAX_TEXT_SETTING or any(ord(c) < 32 for c in text):
        raise InputError("web.error.text", "web.hint.text", name=key, limit=MAX_TEXT_SETTING)
    return text


def run(command: click.Command, argv: list[str]) -> tuple[dict, str]:
    """Run the CLI command in this thread and return what it emitted: (JSON data, human text)."""
    from trainsteps.cli.output import captured

    with captured() as box:
        ctx = parsed(command, argv)
        with ctx:
            command.invoke(ctx)
    if not box:  # every command emits exactly once; anything else is a defect worth a 500
        raise RuntimeError(f"{command.name} emitted nothing")
    return box[-1]


# ---- click's parse, paid once per command --------------------------------------------------------------------------
# `plan` has over a hundred options and a request gives a handful: click builds a parser of every option and works
# out every default on each call (most of a plan's cost in the server). Here the defaults are worked out once, by
# click itself (a parse of no arguments), and each request parses only the options it gives, with click's own parser
# and the same `handle_parse_result`, so values, sources ("given by the user") and errors are click's. A plain option
# (one value of a pure type, no callback) does not depend on the others: what click made of its words is kept, and a
# request whose every option is plain and was seen before is assembled from kept values without a parser.

@dataclass(frozen=True)
class _Defaults:
    params: dict
    sources: dict
    explicit: dict
    by_flag: dict
    """`--num-examples` (every spelling, `--lower-is-better` too) -> its parameter."""
    order: tuple
    """The command's parameters as click lists them (`get_params` builds a new --help option on each call)."""
    arguments: frozenset
    envvars: bool
    """Some option reads an environment variable: click's own full parse then (its sources differ)."""
    plain: frozenset
    """Options whose value depends on their own words only (see `_is_plain`)."""


_DEFAULTS: dict[int, _Defaults | None] = {}
_UNSET = getattr(click.core, "UNSET", object())  # click >= 8.3 marks a value no parameter has set
_PURE_TYPES = (click.types.StringParamType, click.types.IntParamType, click.types.FloatParamType, click.types.BoolParamType,
               click.Choice)
"""Types whose conversion reads nothing but the text: click's own (ranges included) and the checked numbers that
subclass them (cli/numbers.py); not click.Path, which looks at the file system."""
_KEPT_TYPES = (int, float, str, bool, type(None))
_KEPT: dict = {}
"""(option, its type, its words) -> (value, source, default_explicit) as click's parse of those words alone gave them
(the CLI swaps number types for checked ones once: a value kept under another type is not reused)."""
MAX_KEPT = 4096
MAX_KEPT_WORD = 100
"""Characters of the longest value kept (numbers, names, versions); 4,096 entries then hold under 2 MB."""
_NO_ENTRY = object()


def _defaults(command: click.Command) -> _Defaults | None:
    if id(command) not in _DEFAULTS:
        try:
            ctx = command.make_context(f"trainsteps {command.name}", [], **_no_env())
        except click.ClickException:  # a command that needs an argument: parsed in full each time
            _DEFAULTS[id(command)] = None
        else:
            order = tuple(command.get_params(ctx))
            flags = {opt: p for p in order for opt in (*p.opts, *p.secondary_opts) if opt.startswith("-")}
            names = [p.name for p in order]
            params = {name: None if value is _UNSET else value for name, value in ctx.params.items()}  # as a parse leaves them
            _DEFAULTS[id(command)] = _Defaults(params, dict(ctx._parameter_source),
                                               dict(getattr(ctx, "_param_default_explicit", {})), flags, order,
                                               frozenset(p for p in order if isinstance(p, click.Argument)),
                                               any(isinstance(p, click.Option) and p.envvar for p in command.params),
                                               frozenset(p for p in order if _is_plain(p) and names.count(p.name) == 1))
    return _DEFAULTS[id(command)]


def _is_plain(param: click.Parameter) -> bool:
    """An option click turns into a value from its own words alone: one value (or a true/false flag) of a pure type,
    no callback, not eager, no environment variable, not deprecated, and the only parameter of its name (checked by
    the caller: click arbitrates between options that share one)."""
    return (isinstance(param, click.Option) and isinstance(param.type, _PURE_TYPES) and param.nargs == 1 and not param.multiple
            and not param.count and param.callback is None and not param.is_eager and not param.envvar
            and not getattr(param, "deprecated", False) and param.expose_value
            and not getattr(param, "_flag_needs_value", False) and (not param.is_flag or param.is_bool_flag))


def _no_env() -> dict:
    return {"auto_envvar_prefix": None}


def parsed(command: click.Command, argv: list[str]) -> click.Context:
    """The context click's `make_context(argv)` gives, parsing only the options in `argv`."""
    try:
        from click.parser import _OptionParser  # noqa: F401
    except ImportError:  # another click: its own full parse
        return command.make_context(f"trainsteps {command.name}", list(argv))
    defaults = _defaults(command)
    if defaults is None or defaults.envvars:
        return command.make_context(f"trainsteps {command.name}", list(argv))
    return _from_kept(command, defaults, argv) or _click_parse(command, defaults, argv)


def _from_kept(command: click.Command, defaults: _Defaults, argv: list[str]) -> click.Context | None:
    """The context from each plain option's kept value (worked out by click on first sight); None where a word is not
    a plain option or click refuses one (the full parse then says what click says, in its order)."""
    found = []
    at = 0
    while at < len(argv):
        param = defaults.by_flag.get(argv[at])
        if param not in defaults.plain:
            return None
        words = tuple(argv[at:at + (1 if param.is_flag else 2)])
        if len(words) == 1 and not param.is_flag:
            return None  # an option without its value: click's error
        at += len(words)
        kept = _KEPT.get((param, param.type, words)) or _keep(command, defaults, param, words)
        if kept is None:
            return None
        found.append((param.name, kept))  # a repeated option: the last one wins, as in click's parser
    ctx = _fresh_context(command, defaults)
    for name, (value, source, explicit) in found:
        ctx.params[name] = value
        ctx._parameter_source[name] = source
        if explicit is not _NO_ENTRY:
            ctx._param_default_explicit[name] = explicit
    ctx.args = []
    return ctx


def _keep(command: click.Command, defaults: _Defaults, param: click.Option, words: tuple) -> tuple | None:
    """What click's parse of these words alone gives the option: (value, source, default_explicit), kept."""
    try:
        if param.is_flag:  # which constant a flag's spelling stores is click's parser's to say
            ctx = _click_parse(command, defaults, list(words), (param,))
        else:  # click's parser stores the word after the option under the option's name: that step needs no parser
            ctx = _fresh_context(command, defaults, empty=True)
            with ctx.scope(cleanup=False):
                param.handle_parse_result(ctx, {param.name: words[1]}, [])
    except Exception:  # noqa: BLE001 - click's error or the checked numbers': the full parse raises it, in click's order
        return None
    value = ctx.params.get(param.name)
    if not isinstance(value, _KEPT_TYPES):
        return None
    kept = (value, ctx.get_parameter_source(param.name), getattr(ctx, "_param_default_explicit", {}).get(param.name, _NO_ENTRY))
    if len(words[-1]) > MAX_KEPT_WORD:  # a pasted log (`explain --text`), a launch script: used once, never kept
        return kept
    if len(_KEPT) >= MAX_KEPT:  # a bound on memory: every distinct number typed is an entry
        _KEPT.clear()
    _KEPT[(param, param.type, words)] = kept
    return kept


def _fresh_context(command: click.Command, defaults: _Defaults, empty: bool = False) -> click.Context:
    """A context holding every default, as click's parse of no arguments left it; `empty`: none (a parse of one
    option: click gives a given option the same value over its default as over nothing)."""
    ctx = command.context_class(command, info_name=f"trainsteps {command.name}", **command.context_settings)
    if empty:
        return ctx
    ctx.params = dict(defaults.params)
    ctx._parameter_source = dict(defaults.sources)
    if hasattr(ctx, "_param_default_explicit"):
        ctx._param_default_explicit = dict(defaults.explicit)
    return ctx


def _click_parse(command: click.Command, defaults: _Defaults, argv: list[str], only: tuple = ()) -> click.Context:
    """click's parser and `handle_parse_result` over the options `argv` names and the arguments; `only`: over these
    parameters alone (a plain option's words)."""
    from click.core import iter_params_for_processing
    from click.parser import _OptionParser as Parser

    ctx = _fresh_context(command, defaults, empty=bool(only))
    given = defaults.arguments | {defaults.by_flag[word] for word in argv if word in defaults.by_flag}  # (a value spelled
    chosen = list(only) or [p for p in defaults.order if p in given]  # like a flag only adds work)
    with ctx.scope(cleanup=False):
        parser = Parser(ctx)
        for param in chosen:
            param.add_to_parser(parser, ctx)
        opts, args, order = parser.parse_args(args=list(argv))
        for param in iter_params_for_processing(order, chosen):
            _, args = param.handle_parse_result(ctx, opts, args)
        _unset_is_none(ctx)
        if args and not ctx.allow_extra_args:
            ctx.fail(f"Got unexpected extra argument{'s' if len(args) > 1 else ''} ({' '.join(map(str, args))})")
        ctx.args = args
    return ctx


def _unset_is_none(ctx: click.Context) -> None:
    for name, value in ctx.params.items():
        if value is _UNSET:
            ctx.params[name] = None


def page_words(command: click.Command, text: str | None) -> str | None:
    """Error text for the page: CLI options (`--num-train-epochs`) become the page's field names (`num_train_epochs`)."""
    if not text:
        return text
    names = {}
    inverse = {option: key for key, (option, _) in _ALIASES.items()}
    for param in command.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--"):
                names[opt] = inverse.get(param.name, param.name)
    return re.sub(r"--[a-z][a-z0-9-]*", lambda m: names.get(m.group(0), m.group(0)[2:].replace("-", "_")), text)


def usage_error(command: click.Command, exc: click.UsageError) -> tuple[str, str]:
    """A click parsing error, worded with the field name."""
    if isinstance(exc, click.BadParameter) and exc.param is not None:
        inverse = {option: key for key, (option, _) in _ALIASES.items()}
        return f"{inverse.get(exc.param.name, exc.param.name)}: {exc.message}", ""
    return page_words(command, exc.format_message()), ""


def cli_line(command: click.Command, argv: list[str], files: list[str] = ()) -> str:
    """The same request as a command line, for the page to show and copy."""
    shown = [a for a in argv if a not in ("--format", "json", "--explain")]
    return " ".join(["trainsteps", command.name, *map(shlex.quote, files), *map(shlex.quote, shown)])


def is_bare_name(name: str) -> bool:
    """A file's name as a browser gives it: no folder, nothing that could leave the folder it is looked up in."""
    return 0 < len(name) <= 255 and name not in (".", "..") and not any(c in name for c in "/\\\0")


def stdin_line(command: click.Command, argv: list[str], text: str) -> str:
    """A pasted log as a command that runs as pasted: the log on stdin (`trainsteps explain - <<'LOG'`), closed by
    a word that is no line of the log."""
    marker = "LOG"
    lines = set(text.splitlines())
    while marker in lines:
        marker += "_END"
    return f"{cli_line(command, ['-', *argv])} <<'{marker}'\n{text.rstrip(chr(10))}\n{marker}"


# ---- the planners the page offers -----------------------------------------------------------------------------------
FIELD_OF_OPTION = {"transformers_version": "transformers", "no_even_batches": "even_batches", "no_dispatch_batches": "dispatch_batches",
                   "data_split": "split", "gpu_name": "gpu", "rl_overrides": "set", "unsloth_release": "unsloth"}
"""The page's name for a CLI option where they differ (the reverse of _ALIASES, without its synonyms)."""


def planner_fields(command: click.Command) -> list[dict]:
    """Every planner of planners/table.py with the page fields it takes and their kinds: the page builds its framework
    pickers and shows a planner's fields from this, so a planner added to the table appears without a page edit."""
    from trainsteps.planners import table

    params = {p.name: p for p in command.params if isinstance(p, click.Option)}
    kinds = {**dict.fromkeys(table.PRETRAIN_FRAMEWORKS, "pretrain"), **dict.fromkeys(table.STACK_FRAMEWORKS, "stack"),
             **dict.fromkeys((*table.RL_FRAMEWORKS, *getattr(table, "RL_STACKS", ())), "rl"), "hf": "hf", "config": "config"}
    planners = []
    for planner in table.PLANNERS.values():
        names = sorted(n for n in planner.accepts - table.OUTPUT - _NEVER - {"compare_versions", "launch"}
                       if n in params and not n.endswith("_path"))
        # a planner of a kind the page does not know yet: one started by a launch line is planned as the RL trainers
        # are (the config tab), any other from flags as the stacks are (the Pretraining tab)
        kind = kinds.get(planner.name) or ("rl" if "launch" in planner.accepts else "stack")
        planners.append({"name": planner.name, "kind": kind,
                         "files": bool(planner.accepts & {"configs", "deepspeed_config"}), "time": bool(planner.accepts & table.TIME),
                         "fields": {FIELD_OF_OPTION.get(n, n): _field_kind(params[n]) for n in names}})
    return planners


def _field_kind(param: click.Option) -> str | list:
    """How the page asks for an option: bool, int, float, lines (repeated), text, or the list of its choices."""
    if param.is_flag:
        return "bool"
    if param.multiple:
        return "lines"
    if isinstance(param.type, click.Choice):
        return ["", *map(str, param.type.choices)]
    if isinstance(param.type, (click.types.IntParamType, click.IntRange)):
        return "int"
    if isinstance(param.type, (click.types.FloatParamType, click.FloatRange)):
        return "float"
    return "text"


# ---- posted files: a log for explain, config files for plan --------------------------------------------------------

def check_log(text: str) -> None:
    if len(text.encode("utf-8")) > MAX_LOG_BYTES:
        raise PayloadTooLarge("web.error.log_too_large", "web.hint.log_too_large", limit=f"{MAX_LOG_BYTES // (1024 * 1024)} MB")


def write_config_files(files: list[dict], folder: Path, launch_only: bool = False) -> list[Path]:
    """Write posted config files (name + text) into `folder`; a dataset_info.json and data files go where the
    LLaMA-Factory YAML's dataset_dir points. Returns the config paths, in order. Names are reduced to a bare file
    name: nothing is written outside `folder`."""
    if launch_only and (files in (None, []) or isinstance(files, list)
                        and all(isinstance(f, dict) and not str(f.get("text", "")).strip() for f in files)):
        return []  # a launch line alone (`swift sft ...`, `python3 -m verl.trainer.main_ppo ...`) is a whole request
    if not isinstance(files, list) or not files or len(files) > MAX_CONFIG_FILES:
        raise InputError("web.error.no_config", "web.hint.no_config", limit=MAX_CONFIG_FILES)
    total = 0
    configs, data = [], []
    for item in files:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("text"), str):
            raise InputError("web.error.no_config", "web.hint.no_config", limit=MAX_CONFIG_FILES)
        name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(item["name"].replace("\\", "/")).name).lstrip(".") or "config.yaml"
        taken = {n for n, _ in configs + data}
        if name in taken:  # two files of one name: keep both (sft.yaml, 2-sft.yaml)
            name = next(f"{i}-{name}" for i in range(2, MAX_CONFIG_FILES + 2) if f"{i}-{name}" not in taken)
        total += len(item["text"].encode("utf-8"))
        if total > MAX_CONFIG_BYTES:
            raise PayloadTooLarge("web.error.config_too_large", "web.hint.config_too_large", limit=f"{MAX_CONFIG_BYTES // (1024 * 1024)} MB")
        (data if item.get("role") == "data" or name == "dataset_info.json" else configs).append((name, item["text"]))
    if not configs:
        raise InputError("web.error.no_config", "web.hint.no_config", limit=MAX_CONFIG_FILES)
    data_dir = folder / _dataset_dir(configs)
    paths = []
    for name, text in configs:
        paths.append(folder / name)
        paths[-1].write_text(text, encoding="utf-8")
    if data:
        data_dir.mkdir(parents=True, exist_ok=True)
        for name, text in data:
            (data_dir / name).write_text(text, encoding="utf-8")
    return paths


def _dataset_dir(configs: list[tuple[str, str]]) -> str:
    """LLaMA-Factory's dataset_dir of the first YAML that names one (a plain relative folder), else `data`."""
    for _, text in configs:
        try:
            loaded = parse_text(text)
        except InputError:
            continue
        value = loaded.get("dataset_dir") if isinstance(loaded, dict) else None
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*", value) and ".." not in value:
            return value
    return "data"


def temporary_folder() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="trainsteps-web-")


def without_folder(value, folder: Path):
    """The CLI's output with the temporary folder's path removed, so files read as the names the user gave."""
    prefix = str(folder) + "/"
    if isinstance(value, str):
        return value.replace(prefix, "")
    if isinstance(value, list):
        return [without_folder(v, folder) for v in value]
    if isinstance(value, dict):
        return {k: without_folder(v, folder) for k, v in value.items()}
    return value


# ---- the scheduler: what the Trainer builds from lr_scheduler_type / learning_rate / lr_scheduler_kwargs ----------

def lr_settings(settings: dict[str, str]) -> tuple[str, float, dict]:
    import json

    from trainsteps.frameworks.hf.lr_schedule import METRIC_DRIVEN, SCHEDULERS

    name = settings.get("lr_scheduler_type") or "linear"
    if name not in SCHEDULERS + METRIC_DRIVEN:
        raise InputError("web.error.scheduler", "web.hint.scheduler", value=name[:40], names=", ".join(SCHEDULERS + METRIC_DRIVEN))
    text = settings.get("learning_rate") or "5e-5"
    try:
        rate = float(text)
    except ValueError:
        rate = float("nan")
    if not math.isfinite(rate) or rate <= 0:
        raise InputError("web.error.not_finite", "web.hint.not_finite", name="learning_rate", value=text[:40])
    raw = settings.get("lr_scheduler_kwargs") or "{}"
    try:
        kwargs = json.loads(raw, parse_constant=_no_constant)
    except ValueError:
        kwargs = None
    if not isinstance(kwargs, dict) or len(raw) > MAX_TEXT_SETTING or not all(_plain(v) for v in kwargs.values()):
        raise InputError("web.error.kwargs", "web.hint.kwargs", value=raw[:60])
    return name, rate, kwargs


def lr_from_files(files: list[dict]) -> dict[str, str]:
    """lr_scheduler_type / learning_rate / lr_scheduler_kwargs as a posted YAML or JSON config sets them (Axolotl:
    lr_scheduler), so the page draws the schedule the file asks for; settings typed on the page win."""
    import json

    found: dict[str, str] = {}
    for item in files if isinstance(files, list) else []:
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(text, str) or item.get("role") == "data" or len(text) > MAX_CONFIG_BYTES:
            continue
        try:  # the guarded reader: a few hundred bytes of nested aliases would otherwise expand in json.dumps below
            loaded = parse_text(text)
        except InputError:
            continue
        if not isinstance(loaded, dict):
            continue
        name = loaded.get("lr_scheduler_type", loaded.get("lr_scheduler"))
        if isinstance(name, str) and "lr_scheduler_type" not in found:
            found["lr_scheduler_type"] = name
        rate = loaded.get("learning_rate")
        if isinstance(rate, (int, float, str)) and not isinstance(rate, bool) and "learning_rate" not in found:
            found["learning_rate"] = str(rate)
        kwargs = loaded.get("lr_scheduler_kwargs")
        if isinstance(kwargs, dict) and "lr_scheduler_kwargs" not in found:
            found["lr_scheduler_kwargs"] = json.dumps(kwargs)
    return found


def _no_constant(name: str):
    raise ValueError(name)


def _plain(value) -> bool:
    return isinstance(value, str) and len(value) < 20 or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                                           and math.isfinite(value) and abs(value) < 1e15)
