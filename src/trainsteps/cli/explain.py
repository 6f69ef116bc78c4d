"""`trainsteps explain`: read a training log, infer what it does not say, explain every number."""

from __future__ import annotations

import sys

import click

from trainsteps.cli.output import FORMAT_OPTION, LANG_OPTION, emit, shown, user_errors
from trainsteps.errors import InputError
from trainsteps.i18n import message

PRETRAIN_LOGS = ("neox", "megatron", "deepspeed", "lightning")


@click.command("explain")
@click.argument("paths", nargs=-1)
@click.option("--text", help="The log pasted as text instead of a PATH.")
@click.option("--raw-examples", type=click.IntRange(min=0), help="Rows of the raw dataset, to tell packing or filtering from the Num examples.")
@click.option("--framework", type=click.Choice(["auto", "hf", *PRETRAIN_LOGS]), default="auto", show_default=True,
              help="Whose log this is; auto reads Trainer banners and falls back to GPT-NeoX / Megatron / DeepSpeed / Lightning lines.")
@click.option("--seq-length", type=click.IntRange(min=1), help="Pretraining logs: tokens per sample, if the log does not print it.")
@click.option("--global-batch-size", type=click.IntRange(min=1), help="Pretraining logs: samples per iteration, if the log does not print it.")
@click.option("--model", "model_path", help="A model's config.json (or its folder): with --gpu, the MFU the log's speed implies.")
@click.option("--params", type=float, help="Model parameters instead of --model, e.g. 7.6e9.")
@click.option("--gpu", help="GPU model for the MFU (e.g. h100-sxm, a100-80g, rtx4090).")
@click.option("--gpus", type=click.IntRange(min=1), help="GPUs in all for the MFU (default: the processes the log implies).")
@click.option("--training", type=click.Choice(["full", "lora", "qlora", "frozen"]), default="full", show_default=True,
              help="What trains, for the FLOPs per token of the MFU.")
@FORMAT_OPTION
@LANG_OPTION
def explain_command(paths: tuple[str, ...], text: str | None, raw_examples: int | None, framework: str, seq_length: int | None,
                    global_batch_size: int | None, model_path: str | None, params: float | None, gpu: str | None,
                    gpus: int | None, training: str, fmt: str, lang: str) -> None:
    """Explain the numbers of a training log (a file, a directory, - for stdin, or --text).

    Several paths are files of one run, read together: a log with its launch script, its
    trainer_state.json or the model card (README.md) the Trainer wrote beside it.

    \b
    Reads transformers Trainer banners of every release (any logger prefix), Unsloth's banner,
    LLaMA-Factory / Axolotl / DeepSpeed lines, trainer_state.json and progress lines; infers the
    processes, the transformers release, the settings and where the run really stopped.
    \b
    Examples:
      trainsteps explain train.log
      trainsteps explain output_dir/                 # *.log, trainer_state.json
      trainsteps explain trainer_log.jsonl README.md run.slurm
      kubectl logs job/sft | trainsteps explain -
      trainsteps explain --text "Num examples = 1,047 ..." --lang zh
      trainsteps explain neox_train.log --global-batch-size 1024    # "total number of samples: ..." lines
    """
    with user_errors(lang):
        path = paths[0] if len(paths) == 1 else (list(paths) if paths else None)
        if path is not None and text is not None:
            raise InputError("explain.error.path_and_text", "explain.hint.path_and_text")
        if path is None and text is None and sys.stdin.isatty():  # nothing piped in: waiting would look like a hang
            raise InputError("explain.error.no_input", "explain.hint.no_input")
        from trainsteps.logs import read_log
        from trainsteps.logs.explain import explain_log, render, to_json
        from trainsteps.logs.reader import each_of, pretrain_collector, rl_collector, stack_collector

        # each collector loads with the first line of its kind (logs/reader.py WhenSeen): a Trainer banner loads none
        rl_lines = rl_collector()  # verl / OpenRLHF / EasyR1 lines and Unsloth's batch notice (logs/rl.py)
        stack_lines = stack_collector()  # AReaL / open-instruct / prime-rl / ROLL step lines (logs/rl_stacks.py)
        pretrain_lines = pretrain_collector()  # GPT-NeoX / Megatron / DeepSpeed / Lightning lines (logs/pretrain.py)
        observations = read_log(path if text is None else None, text,
                                also=each_of(rl_lines.feed, stack_lines.feed, pretrain_lines.feed if framework != "hf" else None))
        rl, stacks, pretrain = rl_lines.collector, stack_lines.collector, pretrain_lines.collector
        pretrain_found = pretrain is not None and pretrain.found_anything()
        progress_only = all(run.kind == "progress" for run in observations.runs)
        if framework == "auto" and progress_only and stacks is not None and stacks.found_anything() and not pretrain_found:
            emit(fmt, stacks.to_dict(lang), "\n".join(f"{i}. {line}" for i, line in enumerate(stacks.explanation(lang), 1)))
            return
        if framework == "auto" and rl is not None and _rl_answers(rl, observations, progress_only) and not pretrain_found:
            _explain_rl(rl, observations, lang, fmt)
            return
        # Megatron's layout lines (a world size with no bar or banner) make a wrapper run: the pretraining reading explains them
        layout_only = pretrain is not None and bool(pretrain.parallel) and all(run.kind in ("progress", "wrapper") for run in observations.runs)
        if framework in PRETRAIN_LOGS or (framework == "auto" and (progress_only or layout_only) and pretrain_found):
            # pretraining lines; iteration lines also give where the run stands and its timing (progress runs)
            _explain_pretrain(pretrain_lines.make(), framework, seq_length, global_batch_size, fmt, lang, observations, raw_examples)
            return
        if not observations.runs:
            from trainsteps.logs.explain import shown_name

            hint = {"stream": "explain.hint.nothing_stream", "neox": "explain.hint.nothing_neox"}.get(observations.topic or "",
                                                                                                       "explain.hint.nothing_all")
            source = ", ".join(paths) if path not in (None, "-") else shown_name("<pasted text>" if text is not None else "-", lang)
            if observations.problems:  # empty, compressed, binary, broken JSON: say that, not what explain reads
                name, msg_id, hint_id, params = observations.problems[0]
                raise InputError(msg_id, hint_id, source=shown_name(name, lang), **params)
            raise InputError("explain.error.nothing", hint, source=source, lines=observations.lines_read)
        hardware = _hardware(model_path, params, gpu, gpus, seq_length, training)
        inferences = explain_log(observations, raw_examples, hardware)
        emit(fmt, to_json(observations, inferences, lang) if shown(fmt, "json") else {},
             render(observations, inferences, lang) if shown(fmt, "human") else "")


def _rl_answers(rl, observations, progress_only: bool) -> bool:
    """The RL reading explains the log: its lines were found and no banner run holds the log. A launch line's run
    (`trainer.n_gpus_per_node=4`, a printed config) joins it only when the driver's own lines (its prefix, its timings)
    show the run; a launch line beside mere RL-looking words is the launch line's run."""
    if not rl.found_anything() or not all(run.kind in ("progress", "wrapper") for run in observations.runs):
        return False
    return progress_only or rl.driver is not None or rl.timing.found()


def _explain_rl(rl, observations, lang: str, fmt: str) -> None:
    """An RL trainer's log: its lines (logs/rl.py), the world its printed config or launch line gives, the answer first."""
    from trainsteps.logs.explain_json import envelope
    from trainsteps.logs.headline import for_rl

    rl.hear(observations.stated)
    world = next((run.wrapper["launcher_world"].value for run in observations.runs if "launcher_world" in run.wrapper), None)
    lines = rl.explanation(lang, world=world)
    answer = for_rl(rl, lang)
    data = rl.to_dict(lang)
    data["explanation"] = lines
    data["world"] = world
    text = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    emit(fmt, envelope("rl", answer, observations, rl=dict(data), legacy=data), text if answer is None else answer + "\n" + text)


def _hardware(model_path, params, gpu, gpus, seq_length, training):
    """--model/--params and --gpu, for the MFU a log implies; None when not asked for."""
    if model_path is None and params is None and gpu is None:
        return None
    if gpu is None or (model_path is None and params is None):
        raise InputError("explain.error.mfu_needs", "explain.hint.mfu_needs")
    from trainsteps.logs.timing import Hardware
    from trainsteps.timing.flops import shape_from_params
    from trainsteps.timing.gpus import find_gpu
    from trainsteps.timing.model_files import read_model_shape

    shape = read_model_shape(model_path) if model_path is not None else shape_from_params(params)
    return Hardware(shape, find_gpu(gpu), gpus, seq_length, training)


def _explain_pretrain(pretrain, framework: str, seq_length: int | None, global_batch_size: int | None, fmt: str, lang: str,
                      observations=None, raw_examples: int | None = None) -> None:
    from trainsteps.logs.explain import explain_log, render_run, run_json
    from trainsteps.logs.pretrain import explain_pretrain

    observed = pretrain.finish()
    if not pretrain.found_anything():
        raise InputError("explain.error.no_pretrain_lines", "explain.hint.no_pretrain_lines", framework=framework)
    flavor = {"neox": "neox"}.get(framework)
    explanation = explain_pretrain(observed, lang, seq_length=seq_length, global_batch_size=global_batch_size, flavor=flavor)
    data = {"framework": framework, "observed": observed, **explanation.to_dict(lang)}
    lines = explanation.lines(lang)
    stated = observations.stated.get("stated_gpus") if observations is not None else None
    if stated is not None and "world" not in observed.get("parallel", {}):
        data["stated_gpus"] = stated.to_dict()
        lines.append(message("explain.pt.stated_gpus", lang, gpus=stated.value, line=stated.line, text=stated.text[:80]))
    text = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    if observations is not None:  # what was read, above what it says (the banner path opens the same way)
        from trainsteps.logs.explain import shown_name

        files = ", ".join(shown_name(f, lang) for f in observations.files) or "-"
        text = message("explain.pt.summary", lang, lines=observations.lines_read, files=files) + "\n" + text
    progress = [inf for inf in explain_log(observations, raw_examples) if inf.run.kind in ("progress", "wrapper")] if observations is not None else []
    if progress:
        data["runs"] = [run_json(inf, lang) for inf in progress]
        for i, inf in enumerate(progress, 1):
            text += "\n\n" + "\n".join(render_run(inf, i, len(progress), lang))
    from trainsteps.logs.explain import answer_of
    from trainsteps.logs.explain_json import envelope

    answer = answer_of(progress, lang)
    pretraining = {k: v for k, v in data.items() if k != "runs"}
    emit(fmt, envelope("pretraining", answer, observations, runs=data.get("runs"), pretraining=pretraining, legacy=data),
         text if answer is None else answer + "\n" + text)
