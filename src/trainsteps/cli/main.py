"""Entry point. Commands are imported only when run, so `trainsteps plan` stays light."""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from trainsteps import __version__
from trainsteps.errors import TrainstepsError

# command name -> "module:attribute"; a new command is one line here and one module beside this file.
COMMANDS = {
    "plan": "trainsteps.cli.plan:plan_command",
    "web": "trainsteps.cli.web:web_command",
    "explain": "trainsteps.cli.explain:explain_command",
    "count": "trainsteps.cli.count:count_command",
    "solve": "trainsteps.cli.solve:solve_command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        from trainsteps.cli.numbers import check_numbers

        return check_numbers(getattr(importlib.import_module(module), attr))

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            from trainsteps.cli.suggest import unknown_command

            unknown_command(ctx, name, sorted(COMMANDS))
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="trainsteps")
def cli() -> None:
    """How long a training run really is: steps, epochs, samples and what the framework will print."""


def main(argv: list[str] | None = None) -> None:
    try:
        _main(argv)
    finally:
        if argv is None:
            # The console script's process exits next, and the interpreter's collections at exit walk every object the
            # imports made (about 15 ms of a 100 ms `explain` of a banner); frozen, they are left to the operating
            # system, as the rest of the process is. Only here: a caller that passes argv keeps its process's collector.
            gc.freeze()


def _main(argv: list[str] | None) -> None:
    from trainsteps.cli.output import fail, internal_error

    lang = _lang_from(argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="trainsteps", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # pragma: no cover - click >= 8.2
        click.echo(exc.ctx.get_help())
    except click.NoSuchOption as exc:
        from trainsteps.cli.suggest import usual_names

        usual_names(exc)
        _usage_error(exc, lang)
    except click.UsageError as exc:
        _usage_error(exc, lang)
    except TrainstepsError as exc:  # an option's value refused while click parsed it (trainsteps.numbers)
        if os.environ.get("TRAINSTEPS_DEBUG") == "1":
            raise
        fail(*exc.render(lang), lang=lang)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, no traceback
        if os.environ.get("TRAINSTEPS_DEBUG") == "1":
            raise
        internal_error(exc, lang)


def _usage_error(exc: click.UsageError, lang: str) -> None:
    from trainsteps.cli.output import fail
    from trainsteps.i18n import message

    command = exc.ctx.command_path.split(" ", 1)[-1] if exc.ctx else ""
    fail(exc.format_message(), message("cli.hint.help", lang, command=command if command != "trainsteps" else "").replace("  ", " "), lang)


def _lang_from(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1] if argv[i + 1] in ("en", "zh") else "en"
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1] if arg.split("=", 1)[1] in ("en", "zh") else "en"
    return "en"


if __name__ == "__main__":
    main()
