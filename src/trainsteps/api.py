"""The Python API with the command line's reach: each function runs the same request as its command and returns the
JSON records that `--format json` prints (documented in docs/json.md). Settings are keyword arguments named as the
command's options (`--num-examples` is `num_examples=`); a misspelt one gets the command line's did-you-mean.

    >>> import trainsteps
    >>> trainsteps.plan_config("examples/llamafactory/sft_lora.yaml")["run"]["optimizer_steps"]
    4200
"""

from __future__ import annotations

from trainsteps.errors import InputError

_COMMANDS = {"plan": "trainsteps.cli.plan:plan_command", "solve": "trainsteps.cli.solve:solve_command",
             "explain": "trainsteps.cli.explain:explain_command", "count": "trainsteps.cli.count:count_command"}


def plan_config(*paths: str, launch: str | None = None, lang: str = "en", **settings) -> dict:
    """Plan from config files (and a launch line) as `trainsteps plan CONFIG...` does; settings override the files.

    `plan_config("sft_lora.yaml", num_examples=5000)`; an RL trainer's YAML with `framework="verl"`. With no path, any
    framework's plan from settings alone: `plan_config(framework="megatron", micro_batch_size=1, ...)`."""
    if launch is not None:
        settings["launch"] = launch
    return _run("plan", [str(p) for p in paths], settings, lang)


def estimate_time(*paths: str, lang: str = "en", **settings) -> dict:
    """The `time` record of a plan: `estimate_time(num_examples=1047, ..., step_time=4)` or with `gpu=` and `params=`."""
    data = _run("plan", [str(p) for p in paths], settings, lang)
    if "time" not in data:
        raise InputError("time.error.no_rate", "time.hint.no_rate")
    return data["time"]


def solve(lang: str = "en", **settings) -> dict:
    """`trainsteps solve`: the max_steps for a target (`epochs=`, `examples=`, `tokens=`), what a `max_steps` covers, batch
    layouts for a `global_batch`, or the max_steps that fit a `time_budget`."""
    return _run("solve", [], settings, lang)


def explain(*paths: str, text: str | None = None, lang: str = "en", **settings) -> dict:
    """`trainsteps explain`: what a training log (files of one run, or `text=`) says and implies."""
    if text is not None:
        settings["text"] = text
    return _run("explain", [str(p) for p in paths], settings, lang)


def count(*paths: str, lang: str = "en", **settings) -> dict:
    """`trainsteps count`: rows, tokens and packed rows of a dataset (`tokenizer=` a tokenizer.json or model folder)."""
    if not paths:
        raise InputError("api.error.no_paths", "api.hint.no_paths", command="count")
    return _run("count", [str(p) for p in paths], settings, lang)


def render(schedule, lang: str = "en", explain: bool = False) -> str:
    """The report `trainsteps plan` prints for a `Schedule` of `trainsteps.plan()`."""
    from trainsteps.report import render_schedule

    return render_schedule(schedule, lang, explain)


def _run(name: str, arguments: list[str], settings: dict, lang: str) -> dict:
    import importlib

    import click

    from trainsteps.cli.numbers import check_numbers
    from trainsteps.cli.output import captured

    module, attribute = _COMMANDS[name].split(":")
    command = check_numbers(getattr(importlib.import_module(module), attribute))
    argv = [*arguments, *_argv(command, name, settings), "--format", "json", "--lang", lang]
    try:
        with captured() as box:
            command.main(args=argv, prog_name=f"trainsteps {name}", standalone_mode=False)
    except click.UsageError as exc:
        raise InputError("api.error.usage", "api.hint.usage", command=name, detail=exc.format_message()) from None
    return box[-1][0]


def _argv(command, name: str, settings: dict) -> list[str]:
    """Keyword settings as the command's own options (`num_examples=1047` -> `--num-examples 1047`)."""
    params = {}
    for param in command.params:  # by the option's name (`transformers`, `data`, `gpu`) and by the parameter's
        if getattr(param, "opts", None) and param.opts[0].startswith("--"):
            params[param.opts[0][2:].replace("-", "_")] = params[param.name] = param
    argv: list[str] = []
    for key, value in settings.items():
        param = params.get(key)
        if param is None or key in ("fmt", "lang"):
            from trainsteps.names import closest

            guess = closest(str(key), [k for k in params if k not in ("fmt", "lang")])
            raise InputError("api.error.unknown_keyword", "api.hint.unknown_keyword" if guess else "api.hint.keywords",
                             command=name, name=str(key)[:60], guess=guess)
        if value is None:
            continue
        if getattr(param, "is_flag", False) and not param.secondary_opts:
            if value:
                argv.append(param.opts[0])
            continue
        if getattr(param, "is_flag", False):  # --greater-is-better/--lower-is-better
            argv.append(param.opts[0] if value else param.secondary_opts[0])
            continue
        values = value if isinstance(value, (list, tuple)) and (param.multiple or (param.nargs or 1) > 1) else [value]
        if param.multiple:
            for item in values:
                argv += [param.opts[0], *(str(v) for v in (item if isinstance(item, (list, tuple)) else [item]))]
        else:
            argv += [param.opts[0], *(str(v) for v in values)]
    return argv
