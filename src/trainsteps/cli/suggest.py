"""Did-you-mean for options and commands, from the names people type (other tools' flags, HF's underscores)."""

from __future__ import annotations

import difflib

import click

from trainsteps.names import NO_EFFECT, USUAL, USUAL_COMMANDS


def usual_names(exc: click.NoSuchOption) -> None:
    """Put the options the user most likely meant in `exc.possibilities`, before click's spelling matches."""
    typed = exc.option_name.split("=", 1)[0]
    have = _option_names(exc.ctx)
    dashed = "--" + typed.lstrip("-").replace("_", "-").lower()
    wanted = [dashed] if dashed != typed and dashed in have else []
    wanted += [name for name in USUAL.get(dashed, ()) if name in have and name != typed]
    if dashed in NO_EFFECT:
        exc.message = f"No such option '{typed}': it does not change the number of steps, samples or epochs, so trainsteps does not take it"
        exc.possibilities = []
        return
    if wanted:
        exc.possibilities = wanted[:1]  # the likeliest one only: click would list several in alphabetical order
    elif exc.possibilities:
        exc.possibilities = difflib.get_close_matches(dashed, list(have), n=3, cutoff=0.6) or list(exc.possibilities)[:3]


def unknown_command(ctx: click.Context, name: str, commands: list[str]) -> None:
    guess = USUAL_COMMANDS.get(name.lower()) or next(iter(difflib.get_close_matches(name.lower(), commands, n=1, cutoff=0.5)), None)
    listed = ", ".join(commands)
    text = f"No such command '{name}'." + (f" Did you mean '{guess}'?" if guess else f" The commands are {listed}.")
    raise click.UsageError(text, ctx)


def _option_names(ctx: click.Context | None) -> set[str]:
    if ctx is None:
        return set()
    return {opt for param in ctx.command.params for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
            if opt.startswith("--")}
