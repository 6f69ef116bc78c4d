"""`trainsteps explain`: read a training log, infer what it does not say, explain every number."""

from __future__ import annotations

import click

from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, user_errors
from trainsteps.errors import InputError


@click.command("explain")
@click.argument("path", required=False)
@click.option("--text", help="The log pasted as text instead of a PATH.")
@click.option("--raw-examples", type=click.IntRange(min=0), help="Rows of the raw dataset, to tell packing or filtering from the Num examples.")
@FORMAT_OPTION
@LANG_OPTION
def explain_command(path: str | None, text: str | None, raw_examples: int | None, fmt: str, lang: str) -> None:
    """Explain the numbers of a training log (a file, a directory, - for stdin, or --text).

    \b
    Reads transformers Trainer banners of every release (any logger prefix), Unsloth's banner,
    LLaMA-Factory / Axolotl / DeepSpeed lines, trainer_state.json and progress lines; infers the
    processes, the transformers release, the settings and where the run really stopped.
    \b
    Examples:
      trainsteps explain train.log
      trainsteps explain output_dir/                 # *.log, trainer_state.json
      kubectl logs job/sft | trainsteps explain -
      trainsteps explain --text "Num examples = 1,047 ..." --lang zh
    """
    with user_errors(lang):
        if path is not None and text is not None:
            raise InputError("explain.error.path_and_text", "explain.hint.path_and_text")
        from trainsteps.logs import read_log
        from trainsteps.logs.explain import explain_log, render, to_json

        observations = read_log(path if text is None else None, text)
        if not observations.runs:
            raise InputError("explain.error.nothing", "explain.hint.nothing", source=path or ("--text" if text is not None else "-"),
                             lines=observations.lines_read)
        inferences = explain_log(observations, raw_examples)
        emit(fmt, to_json(observations, inferences, lang), render(observations, inferences, lang))
