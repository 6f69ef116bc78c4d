"""`trainsteps plan` for RL trainers: verl, OpenRLHF, EasyR1 and TRL PPO (`--framework NAME` or a launch line).

`rl_plan(command)` adds the RL options to `plan` and puts a dispatcher in front of its callback: a run is RL when
`--framework` names an RL trainer or `--launch` starts one (`python3 -m verl.trainer.main_ppo ...`). Every other run
goes on to the Hugging Face / pretraining paths unchanged.
"""

from __future__ import annotations

import click

from trainsteps.errors import InputError

RL_FRAMEWORKS = ("verl", "openrlhf", "easyr1", "trl-ppo")

_OPTIONS = [
    click.option("--chat-template", "chat_template_path", type=click.Path(dir_okay=False),
                 help="[verl] tokenizer_config.json or .jinja with the chat template used by filter_overlong_prompts "
                      "(default: tokenizer_config.json beside --tokenizer)."),
    click.option("--unsloth", "unsloth_release", help="The run uses Unsloth (release, e.g. 2026.10.9): its rewritten TRL "
                 "defaults apply to the settings you did not give (per-device batch 4, accumulation 2, warmup 0.1, ...)."),
    click.option("--set", "rl_overrides", multiple=True, metavar="KEY=VALUE",
                 help="[verl/openrlhf/easyr1] One more setting, as on the launch line (data.train_batch_size=256)."),
]


def rl_plan(command: click.Command) -> click.Command:
    holder = click.command("holder")(lambda **kwargs: None)
    for option in _OPTIONS:
        holder = option(holder)
    command.params += holder.params
    callback = command.callback

    def dispatch(**kwargs):
        from trainsteps.cli.output import user_errors

        with user_errors(kwargs.get("lang", "en")):
            framework = _framework(kwargs)
        if framework is None:
            kwargs.pop("chat_template_path", None)
            if kwargs.pop("rl_overrides", None):  # its tag names easyr1, which the generic tag check does not read
                with user_errors(kwargs.get("lang", "en")):
                    raise InputError("cli.error.option_framework", "cli.hint.option_framework", option="--set",
                                     frameworks=", ".join(RL_FRAMEWORKS[:3]), framework=kwargs.get("framework", "hf"))
            release = kwargs.pop("unsloth_release", None)
            if release and (kwargs.get("configs") or kwargs.get("launch")):  # applied by the config reader
                click.get_current_context().meta["trainsteps.unsloth"] = release
            elif release:
                with user_errors(kwargs.get("lang", "en")):
                    _unsloth_defaults(release, kwargs)
            return callback(**kwargs)
        from trainsteps.cli.plan_pretrain import check_framework_options

        with user_errors(kwargs.get("lang", "en")):
            check_framework_options(click.get_current_context(), framework)
            return run_rl(framework, kwargs)

    command.callback = dispatch
    return command


def _unsloth_defaults(release: str, kwargs: dict) -> None:
    """Unsloth's rewritten defaults for the options not typed; each change is said on stderr (the plan is on stdout)."""
    from trainsteps.frameworks import unsloth
    from trainsteps.i18n import message

    if not unsloth.known(release):
        raise InputError("unsloth.error.release", "unsloth.hint.release", release=release, oldest=unsloth.NEWEST)
    ctx = click.get_current_context()
    typed = {name for name in kwargs if (src := ctx.get_parameter_source(name)) is not None and src.name == "COMMANDLINE"}
    major = int((kwargs.get("transformers_version") or "5").lstrip("v").split(".")[0] or 5)
    lang = kwargs.get("lang", "en")
    for name, value, plain in unsloth.rewritten_defaults(release, typed, major):
        if name in kwargs:
            kwargs[name] = value
            click.echo(message("unsloth.note.default", lang, release=release, key=name, value=value, framework="transformers",
                               plain=plain), err=True)


def _framework(kwargs: dict) -> str | None:
    if kwargs.get("framework") in RL_FRAMEWORKS:
        return kwargs["framework"]
    launch = kwargs.get("launch") or ""
    if any(word in launch for word in ("verl.trainer", "main_dapo", "openrlhf.cli")):
        from trainsteps.configs.rl_launch import read_launch

        return read_launch(launch).framework
    return None


def run_rl(framework: str, kw: dict) -> None:
    from trainsteps.cli.output import emit
    from trainsteps.configs.rl_launch import RLConfig, read_launch, read_yaml

    config = RLConfig(framework=framework if kw.get("framework") in RL_FRAMEWORKS else None)
    for word in kw.get("rl_overrides") or ():
        read_launch_word(config, word)
    if kw.get("launch"):
        config = read_launch(kw["launch"], config)
    for path in kw.get("configs") or ():
        config = read_yaml(path, config)
    for name in _config_names(kw.get("launch") or ""):
        config = read_yaml(name, config)
    framework = config.framework or framework
    lang, fmt, explain = kw.get("lang", "en"), kw.get("fmt", "human"), kw.get("explain", False)
    if framework == "verl":
        plan = _verl(config, kw)
    else:
        from trainsteps.cli.plan_rl_others import plan_other

        plan = plan_other(framework, config, kw)
    from trainsteps.report_rl import render_rl

    data = plan.to_dict(lang)
    data["config"] = {"framework": plan.framework, "entry": config.entry, "files": list(kw.get("configs") or ()),
                      "settings": {k: {"value": v, "from": config.origins.get(k)} for k, v in config.values.items()}}
    emit(fmt, data, render_rl(plan, lang, explain))


def read_launch_word(config, word: str) -> None:
    from trainsteps.configs.rl_launch import _put

    if "=" not in word:
        raise InputError("rl.error.set", "rl.hint.set", value=word)
    key, value = word.split("=", 1)
    _put(config, key.strip().lstrip("+"), value, "--set")


def _config_names(line: str) -> list[str]:
    """Hydra's `--config-path DIR --config-name NAME` on the line: the user's YAML, when it is a local file."""
    import os
    import shlex

    from trainsteps.configs.launch import join_continued_lines

    try:
        words = shlex.split(join_continued_lines(line), comments=True)
    except ValueError:
        return []
    opts = {}
    for i, word in enumerate(words):
        for name in ("--config-path", "--config-name", "--config_path", "--config_name", "config"):
            if word.startswith(name + "="):
                opts[name.replace("_", "-")] = word.split("=", 1)[1]
            elif word == name and i + 1 < len(words):
                opts[name.replace("_", "-")] = words[i + 1]
    if "config" in opts:  # EasyR1: config=examples/config.yaml
        return [opts["config"]] if os.path.isfile(opts["config"]) else []
    if "--config-name" not in opts:
        return []
    name = opts["--config-name"]
    name = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
    path = os.path.join(opts.get("--config-path", "."), name)
    return [path] if os.path.isfile(path) else []


def _verl(config, kw: dict):
    from trainsteps.configs import rl_data
    from trainsteps.configs.rl import train_files, typed, verl_spec
    from trainsteps.frameworks import verl

    version = kw.get("framework_version") or verl.NEWEST
    files = list(kw.get("data_paths") or ()) or train_files(config)
    if config.entry in ("verl.trainer.sft_trainer", "verl.trainer.fsdp_sft_trainer"):  # one optimizer step per batch
        rows = kw.get("num_examples") if kw.get("num_examples") is not None else (rl_data.count_rows(files) if files else None)
        if rows is None:
            raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
        fsdp = config.entry.endswith("fsdp_sft_trainer")
        freqs = {k: config.values.get(f"trainer.{k}", -1) for k in ("save_freq", "test_freq")}
        ratio = typed(config, "optim.lr_warmup_steps_ratio", float)
        if ratio is None:
            ratio = typed(config, "optim.warmup_steps_ratio", float)  # the name before 0.6
        torchrun = (typed(config, "nproc_per_node", int) or 0) * (typed(config, "nnodes", int) or 1)
        spec = verl.VerlSFTSpec(rows=rows, train_batch_size=typed(config, "data.train_batch_size", int) or 256,
                                total_epochs=typed(config, "trainer.total_epochs", int) or 4,
                                total_training_steps=typed(config, "trainer.total_training_steps", int),
                                n_gpus=_gpus(kw) or torchrun or (typed(config, "trainer.n_gpus_per_node", int) or 8) * (typed(config, "trainer.nnodes", int) or 1),
                                lr_warmup_steps_ratio=ratio if ratio is not None else (0.1 if fsdp else 0.0), version=version,
                                trainer="fsdp_sft_trainer" if fsdp else "sft_trainer",
                                **{k: v if v == "after_each_epoch" else int(v) for k, v in freqs.items()})
        try:
            return verl.plan_verl_sft(spec)
        except ValueError as exc:
            raise InputError("rl.error.settings", "rl.hint.settings", detail=str(exc)) from None
    prompts = kw.get("num_examples")
    filtered = None
    spec = verl_spec(config, prompts or 0, version=version, gpus=_gpus(kw))
    filtering = verl.FILTER_DEFAULT.at(version) if spec.filter_overlong_prompts is None else spec.filter_overlong_prompts
    if prompts is None:
        if not files:
            raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
        if kw.get("tokenizer_path") and filtering:
            rows = rl_data.prompt_rows(files)
            prompts = len(rows)
            kept_rows = rows[: verl.prompts_after_max_samples(len(rows), spec.train_max_samples, version)]
            prompt_key = typed(config, "data.prompt_key", str) or "prompt"
            lengths = rl_data.prompt_lengths(kept_rows, kw["tokenizer_path"], kw.get("chat_template_path"), prompt_key)
            filtered = rl_data.kept_after_filter(lengths, spec.max_prompt_length)
        else:
            prompts = rl_data.count_rows(files)
    elif kw.get("tokenizer_path"):
        raise InputError("rl.error.tokenizer_without_data", "rl.hint.tokenizer_without_data")
    spec.prompts, spec.prompts_filtered = prompts, filtered
    try:
        return verl.plan_verl(spec)
    except ValueError as exc:
        raise InputError("rl.error.settings", "rl.hint.settings", detail=str(exc)) from None


def _gpus(kw: dict) -> int | None:
    if kw.get("world_size") is not None:
        return kw["world_size"]
    if kw.get("gpus") is not None:
        return kw["gpus"] * (kw.get("nodes") or 1)
    return None
