"""The 2026 training stacks planned from their own files and from flags: torchtitan (`plan job.toml`,
`plan --framework torchtitan`), NeMo Automodel (`plan --framework automodel recipe.yaml`) and LLaMA-Factory v1
(`plan --framework llamafactory-v1 sft.yaml`)."""

from __future__ import annotations

from trainsteps.errors import InputError
from trainsteps.planners.table import Answer, option_name

_FLAGS = {  # plan option -> torchtitan setting
    "micro_batch_size": "local_batch_size", "global_batch_size": "global_batch_size", "seq_length": "seq_len",
    "max_steps": "steps", "warmup_steps": "warmup_steps", "resume_from_step": "resume_from_step",
    "train_tokens": "dataset_tokens", "num_examples": "documents", "framework_version": "release",
}


def _layered(request, read_file, read_overrides, flags: dict, whole: tuple = ()) -> tuple[dict, dict]:
    """A stack's settings and where each came from: its own files, then its `--set` overrides, then the plan's flags
    (`flags`: option -> setting), which win; the settings in `whole` are whole numbers."""
    settings, origins = {}, {}
    for found, where in [*(read_file(path) for path in request.configs), read_overrides(request.settings.get("rl_overrides"))]:
        settings.update(found)
        origins.update(where)
    _apply_flags(request, flags, whole, settings, origins)
    return settings, origins


def _apply_flags(request, flags: dict, whole: tuple, settings: dict, origins: dict) -> None:
    for option, name in flags.items():
        if request.gave(option):
            value = request.settings[option]
            settings[name] = str(value) if name == "release" else _whole(value, option) if name in whole else value
            origins[name] = option_name(option)


def plan_torchtitan(request, counted) -> Answer:
    """torchtitan: its .toml (0.2.2), `--set section.key=value` overrides, then the flags, which win."""
    from trainsteps.configs.torchtitan import read_overrides, read_toml
    from trainsteps.frameworks.torchtitan import CONFIG_FILES, NEWEST, TitanSpec, newest_reading
    from trainsteps.frameworks.torchtitan import plan_torchtitan as plan
    from trainsteps.report_pretrain import render_torchtitan

    opts = request.settings
    settings, origins = _layered(request, _toml(read_toml), read_overrides, _FLAGS, whole=("warmup_steps",))
    # a .toml pins the newest release that reads one; no file: the newest modelled
    release = _release(settings.pop("release", newest_reading("toml") if request.configs else NEWEST))
    if request.configs and CONFIG_FILES.at(release) != "toml":
        raise InputError("tt.error.toml_release", "tt.hint.toml_release", release=release)
    if request.gave("save_interval"):  # giving an interval asks for checkpoints
        settings.update(checkpoint_interval=opts["save_interval"], checkpoint_enable=True)
    if request.gave("eval_interval"):
        settings.update(validation_freq=opts["eval_interval"], validation_enable=True)
    named = settings.pop("model_name", None), settings.pop("model_flavor", None)
    # the flavor is the time model's only: read it where a GPU asks for FLOPs and no --model or --params says the model
    wants_shape = (opts.get("gpu_name") or opts.get("peak_tflops") is not None) and not (opts.get("model_path") or opts.get("params"))
    model = _titan_model(*named, origins) if wants_shape else None
    degrees = {name: settings.pop(name, default) for name, default in (("dp_replicate", 1), ("dp_shard", -1), ("tp", 1), ("pp", 1), ("cp", 1))}
    for option, name in (("tensor_parallel_size", "tp"), ("pipeline_parallel_size", "pp"), ("context_parallel_size", "cp")):
        if request.gave(option):
            degrees[name] = opts[option]
    spec = TitanSpec(dp=_dp(request, degrees), release=release, **settings)
    schedule = plan(spec)
    data = schedule.to_dict(request.lang)
    data["inputs"]["world_size"] = spec.dp * degrees["tp"] * degrees["pp"] * degrees["cp"]  # every GPU, for the time model
    data["inputs"]["from"] = origins
    if model:
        data["inputs"]["model_config"] = model  # the time model's shape when no --model or --params is given
    return Answer(data, render_torchtitan(schedule, request.lang, request.explain))


def _titan_model(name: str | None, flavor: str | None, origins: dict) -> dict | None:
    """The config.json fields of the .toml's `[model] name` and `flavor` (torchtitan's defaults: llama3, debugmodel,
    where only one is given), with where they came from; None when the file names neither."""
    from trainsteps.frameworks.torchtitan_models import flavor_config

    if name is None and flavor is None:
        return None
    config, source = flavor_config(name or "llama3", flavor or "debugmodel")
    given = origins.get("model_flavor") or origins.get("model_name")
    return {"config": config, "source": f"{given}: {source}" if given else source}


def _toml(read_toml):
    """torchtitan reads .toml job configs only."""
    def read(path):
        if not str(path).lower().endswith(".toml"):
            raise InputError("tt.error.not_toml", "tt.hint.not_toml", path=str(path)[:200])
        return read_toml(path)

    return read


def _whole(value, option: str) -> int:
    """torchtitan's warmup_steps is an int (the Trainer's --warmup-steps option also takes a float)."""
    if float(value) != int(value):
        raise InputError("tt.error.value", "tt.hint.value", name=option_name(option), value=value)
    return int(value)


def _release(text: str) -> str:
    from trainsteps.frameworks.torchtitan import WINDOWS

    return _release_from(text, WINDOWS.entries[0][0], "tt")


def _release_from(text: str, oldest, prefix: str) -> str:
    """A release as `Version` prints it; unparsable or older than the oldest modelled is refused (`<prefix>.error.release`)."""
    from trainsteps.versions import Version

    try:
        version = Version.parse(str(text).lstrip("v"))
    except (ValueError, TypeError):
        version = None
    if version is None or version < oldest:
        raise InputError(f"{prefix}.error.release", f"{prefix}.hint.release", release=str(text)[:40])
    return str(version)


def _dp(request, degrees: dict) -> int:
    """The data-parallel degree: replicate x shard, where shard -1 takes what tp, pp, cp and replicate leave of the world."""
    from trainsteps.world import world_or_one

    opts = request.settings
    model = degrees["tp"] * degrees["pp"] * degrees["cp"] * degrees["dp_replicate"]
    world_given = any(request.gave(name) for name in ("world_size", "gpus", "nodes"))
    if degrees["dp_shard"] != -1 and not world_given:
        return degrees["dp_replicate"] * degrees["dp_shard"]
    world = world_or_one(opts.get("world_size"), opts.get("gpus"), opts.get("nodes"))
    shard = degrees["dp_shard"] if degrees["dp_shard"] != -1 else world // model
    if shard < 1 or model * shard != world:
        raise InputError("tt.error.world", "tt.hint.world", world=world, tp=degrees["tp"], pp=degrees["pp"], cp=degrees["cp"],
                         replicate=degrees["dp_replicate"], shard=degrees["dp_shard"])
    return degrees["dp_replicate"] * shard


_AUTOMODEL_FLAGS = {  # plan option -> Automodel setting
    "num_examples": "num_examples", "micro_batch_size": "local_batch_size", "global_batch_size": "global_batch_size",
    "max_steps": "max_steps", "save_interval": "ckpt_every_steps", "eval_interval": "val_every_steps",
    "warmup_steps": "lr_warmup_steps", "framework_version": "release",
}


def plan_automodel(request, counted) -> Answer:
    """NeMo Automodel: its recipe YAML, `--set section.key=value` overrides, then the flags, which win."""
    from trainsteps.configs.automodel import read_overrides, read_yaml
    from trainsteps.frameworks.automodel import NEWEST, AutomodelSpec
    from trainsteps.frameworks.automodel import plan_automodel as plan
    from trainsteps.report_pretrain import render_automodel

    opts = request.settings
    flags = {**_AUTOMODEL_FLAGS, "num_train_epochs": "num_epochs"}
    settings, origins = _layered(request, read_yaml, read_overrides, flags, whole=("lr_warmup_steps", "num_epochs"))
    if "num_examples" not in settings:
        raise InputError("am.error.no_examples", "am.hint.no_examples")
    release = _checked_release(settings.pop("release", NEWEST))
    degrees = {name: settings.pop(name, None) or 1 for name in ("tp", "cp", "pp")}
    for option, name in (("tensor_parallel_size", "tp"), ("pipeline_parallel_size", "pp"), ("context_parallel_size", "cp")):
        if request.gave(option):
            degrees[name] = opts[option]
    spec = AutomodelSpec(dp=_automodel_dp(request, degrees), release=release, num_epochs_given="num_epochs" in settings, **settings)
    schedule = plan(spec)
    data = schedule.to_dict(request.lang)
    data["inputs"]["world_size"] = spec.dp * degrees["tp"] * degrees["cp"] * degrees["pp"]  # every GPU, for the time model
    data["inputs"]["from"] = origins
    return Answer(data, render_automodel(schedule, request.lang, request.explain))


def _checked_release(text: str) -> str:
    from trainsteps.frameworks.automodel import VALIDATE_ON_CHECKPOINT_SETTING

    return _release_from(text, VALIDATE_ON_CHECKPOINT_SETTING.entries[0][0], "am")


def _automodel_dp(request, degrees: dict) -> int:
    from trainsteps.world import world_or_one

    opts = request.settings
    world = world_or_one(opts.get("world_size"), opts.get("gpus"), opts.get("nodes"))
    model = degrees["tp"] * degrees["cp"] * degrees["pp"]
    if world % model:
        raise InputError("am.error.world", "am.hint.world", world=world, tp=degrees["tp"], cp=degrees["cp"], pp=degrees["pp"])
    return world // model


_LF_V1_KEYS = ("micro_batch_size", "global_batch_size", "num_train_epochs", "max_steps", "save_steps", "save_epochs", "cutoff_len",
               "batching_workers")
"""The v1 TrainingArguments that decide steps and the start-up line."""


def plan_lf_v1(request, counted) -> Answer:
    """LLaMA-Factory v1: its YAML, then the flags, which win."""
    from trainsteps.configs.files import read_config
    from trainsteps.frameworks.lf_v1 import LfV1Spec
    from trainsteps.frameworks.lf_v1 import plan_lf_v1 as plan
    from trainsteps.report_pretrain import render_automodel

    opts = request.settings
    settings, origins = {}, {}
    paths, launched_world = list(request.configs), None
    if request.launch:  # `USE_V1=1 NPROC_PER_NODE=4 llamafactory-cli sft sft.yaml`
        from trainsteps.configs.launch import parse_launch

        launch = parse_launch(request.launch)
        paths += [path for path in launch.configs if path not in paths]
        launched_world = launch.world_size
    for path in paths:
        config = read_config(path)
        strategy = config.data.get("batching_strategy", "normal")
        if strategy not in (None, "normal"):
            raise InputError("lfv1.error.strategy", "lfv1.hint.strategy", strategy=str(strategy)[:40])
        for key in _LF_V1_KEYS:
            if key in config.data:
                settings[key] = config.data[key]
                origins[key] = config.where(key)
    flags = {name: name for name in ("num_examples", "micro_batch_size", "global_batch_size", "max_steps", "save_steps",
                                     "cutoff_len", "num_train_epochs", "unsupervised_rows")}
    flags["framework_version"] = "release"
    _apply_flags(request, flags, ("save_steps", "num_train_epochs"), settings, origins)
    if "num_examples" not in settings:
        raise InputError("lfv1.error.no_examples", "lfv1.hint.no_examples")
    from trainsteps.world import world_or_one

    world_given = any(request.gave(name) for name in ("world_size", "gpus", "nodes"))
    dp = launched_world if launched_world and not world_given else world_or_one(opts.get("world_size"), opts.get("gpus"), opts.get("nodes"))
    if "release" in settings:
        settings["release"] = settings["release"].removeprefix("v")
    spec = LfV1Spec(dp=dp, **settings)
    schedule = plan(spec)
    data = schedule.to_dict(request.lang)
    data["inputs"]["from"] = origins
    return Answer(data, render_automodel(schedule, request.lang, request.explain))


_LITGPT_FLAGS = {  # plan option -> litgpt setting
    "num_examples": "num_examples", "global_batch_size": "global_batch_size", "micro_batch_size": "micro_batch_size",
    "num_train_epochs": "epochs", "max_steps": "max_steps", "train_tokens": "max_tokens", "seq_length": "max_seq_length",
    "warmup_steps": "lr_warmup_steps", "warmup_ratio": "lr_warmup_fraction", "save_interval": "save_interval",
    "eval_interval": "eval_interval", "gpus": "devices", "nodes": "num_nodes", "framework_version": "release",
}


def plan_litgpt(request, counted) -> Answer:
    """litgpt: its launch line and config YAML, `--set train.key=value`, then the flags, which win; `--train-tokens`
    without a launch line or YAML that names the script plans `litgpt pretrain`."""
    from trainsteps.configs.litgpt import read_launch, read_overrides, read_yaml
    from trainsteps.frameworks.litgpt import NEWEST, NODES_IN_ACCUMULATION, LitgptSpec
    from trainsteps.frameworks.litgpt import plan_litgpt as plan
    from trainsteps.report_pretrain import render_litgpt

    settings, origins, paths = {}, {}, list(request.configs)
    launched = ({}, {})
    if request.launch:
        configs, *launched = read_launch(request.launch)
        paths += [path for path in configs if path not in paths]
    for found, where in [*(read_yaml(path) for path in paths), tuple(launched), read_overrides(request.settings.get("rl_overrides"))]:
        settings.update(found)
        origins.update(where)
    _apply_flags(request, _LITGPT_FLAGS, (), settings, origins)
    for name in ("epochs", "lr_warmup_steps", "max_tokens"):  # whole numbers given as floats (3e12); others are refused by the rules
        if isinstance(settings.get(name), float) and settings[name].is_integer():
            settings[name] = int(settings[name])
    if request.gave("world_size"):  # devices per node: the world over the nodes
        settings["devices"] = max(1, request.settings["world_size"] // settings.get("num_nodes", 1))
        origins["devices"] = option_name("world_size")
    if "script" not in settings and "max_tokens" in settings:
        settings["script"] = "pretrain"
    release = _release_from(settings.pop("release", NEWEST), NODES_IN_ACCUMULATION.entries[0][0], "lg")
    given = frozenset(name for name in settings if name != "script")
    schedule = plan(LitgptSpec(release=release, given=given, **settings))
    data = schedule.to_dict(request.lang)
    data["inputs"]["from"] = origins
    return Answer(data, render_litgpt(schedule, request.lang, request.explain))


_BRIDGE_FLAGS = {  # plan option -> Megatron-Bridge setting
    "num_examples": "num_examples", "global_batch_size": "global_batch_size", "micro_batch_size": "micro_batch_size",
    "train_iters": "train_iters", "train_samples": "train_samples", "num_train_epochs": "num_epochs", "eval_interval": "eval_interval",
    "eval_iters": "eval_iters", "eval_global_batch_size": "eval_global_batch_size", "save_interval": "save_interval",
    "lr_warmup_iters": "lr_warmup_iters", "warmup_ratio": "lr_warmup_fraction", "rampup_batch_size": "rampup_batch_size",
    "framework_version": "release",
}


def plan_megatron_bridge(request, counted) -> Answer:
    """Megatron-Bridge: its ConfigContainer YAML and launch line, `--set section.key=value`, then the flags, which win."""
    from trainsteps.configs.megatron_bridge import read_launch, read_overrides, read_yaml
    from trainsteps.frameworks.megatron_bridge import NEWEST, NUM_EPOCHS, BridgeSpec
    from trainsteps.frameworks.megatron_bridge import plan_megatron_bridge as plan
    from trainsteps.report_pretrain import render_megatron_bridge

    opts = request.settings
    settings, origins, paths, launched, launched_world = {}, {}, list(request.configs), ({}, {}), None
    if request.launch:
        configs, *launched, launched_world = read_launch(request.launch)
        paths += [path for path in configs if path not in paths]
    for found, where in [*(read_yaml(path) for path in paths), tuple(launched), read_overrides(opts.get("rl_overrides"))]:
        settings.update(found)
        origins.update(where)
    _apply_flags(request, _BRIDGE_FLAGS, (), settings, origins)
    if isinstance(settings.get("num_epochs"), float) and settings["num_epochs"].is_integer():
        settings["num_epochs"] = int(settings["num_epochs"])
    if "num_examples" not in settings:
        raise InputError("mb.error.no_examples", "mb.hint.no_examples")
    if "global_batch_size" not in settings:
        raise InputError("mb.error.no_global_batch", "mb.hint.no_global_batch")
    release = _release_from(settings.pop("release", NEWEST), NUM_EPOCHS.entries[0][0], "mb")
    degrees, world = _model_parallel(request, settings, launched_world)
    model = degrees["tp"] * degrees["pp"] * degrees["cp"]
    if settings.get("rampup_batch_size") is not None:
        settings["rampup_batch_size"] = tuple(settings["rampup_batch_size"])
    schedule = plan(BridgeSpec(dp=world // model, release=release, **settings))
    data = schedule.to_dict(request.lang)
    data["inputs"].update(world_size=world, tp=degrees["tp"], pp=degrees["pp"], cp=degrees["cp"])  # every GPU, for the time model
    data["inputs"]["from"] = origins
    return Answer(data, render_megatron_bridge(schedule, request.lang, request.explain))


_SWIFT_MEGATRON_FLAGS = {  # plan option -> ms-swift Megatron setting
    "num_examples": "num_examples", "micro_batch_size": "micro_batch_size", "global_batch_size": "global_batch_size",
    "num_train_epochs": "epochs", "train_iters": "train_iters", "save_strategy": "save_strategy", "save_interval": "save_interval",
    "eval_interval": "eval_interval", "framework_version": "release", "streaming": "streaming",
}


def plan_swift_megatron(request, counted) -> Answer:
    """ms-swift `megatron sft/pt/rlhf`: its args.json or launch line, then the flags, which win."""
    from trainsteps.configs.swift_megatron import read_file, read_launch
    from trainsteps.frameworks.swift_megatron import NEWEST, OPTION_NAMES, SwiftMegatronSpec
    from trainsteps.frameworks.swift_megatron import plan_swift_megatron as plan
    from trainsteps.report_pretrain import render_swift_megatron

    opts = request.settings
    settings, origins, launched_world = {}, {}, None
    for found, where in (read_file(path) for path in request.configs):
        settings.update(found)
        origins.update(where)
    if request.launch:
        found, where, launched_world = read_launch(request.launch)
        settings.update(found)
        origins.update(where)
    release = _release_from(str(opts["framework_version"]) if request.gave("framework_version") else NEWEST, OPTION_NAMES.entries[0][0], "swm")
    origins["release"] = option_name("framework_version") if request.gave("framework_version") else "newest"
    epochs_name, save_name, eval_name = OPTION_NAMES.at(release)
    for name, wanted, setting in (("num_train_epochs", epochs_name, "epochs"), ("max_epochs", epochs_name, "epochs"),
                                  ("save_steps", save_name, "save_interval"), ("save_interval", save_name, "save_interval"),
                                  ("eval_steps", eval_name, "eval_interval"), ("eval_interval", eval_name, "eval_interval")):
        if name in settings:
            if name != wanted:
                raise InputError("swm.error.renamed", "swm.hint.renamed", name=name, wanted=wanted, release=release)
            settings[setting] = settings.pop(name)
            origins[setting] = origins.pop(name)
    _apply_flags(request, {k: v for k, v in _SWIFT_MEGATRON_FLAGS.items() if k != "framework_version"}, (), settings, origins)
    if isinstance(settings.get("epochs"), float) and settings["epochs"].is_integer():  # MegatronArguments: an int
        settings["epochs"] = int(settings["epochs"])
    if "num_examples" not in settings:
        raise InputError("swm.error.no_examples", "swm.hint.no_examples")
    degrees, world = _model_parallel(request, settings, launched_world)
    model = degrees["tp"] * degrees["pp"] * degrees["cp"]
    schedule = plan(SwiftMegatronSpec(dp=world // model, release=release, **settings))
    data = schedule.to_dict(request.lang)
    data["inputs"].update(world_size=world, tp=degrees["tp"], pp=degrees["pp"], cp=degrees["cp"])  # every GPU, for the time model
    data["inputs"]["from"] = origins
    return Answer(data, render_swift_megatron(schedule, request.lang, request.explain))


def _model_parallel(request, settings: dict, launched_world: int | None) -> tuple[dict, int]:
    """The tp/pp/cp degrees (a flag wins over the file) and every GPU of the run (given flags win over the launch
    line); one line when the world does not divide by the model-parallel size."""
    from trainsteps.world import world_or_one

    opts = request.settings
    degrees = {name: settings.pop(name, None) or 1 for name in ("tp", "pp", "cp")}
    for option, name in (("tensor_parallel_size", "tp"), ("pipeline_parallel_size", "pp"), ("context_parallel_size", "cp")):
        if request.gave(option):
            degrees[name] = opts[option]
    world_given = any(request.gave(name) for name in ("world_size", "gpus", "nodes"))
    world = launched_world if launched_world and not world_given else world_or_one(opts.get("world_size"), opts.get("gpus"), opts.get("nodes"))
    if world % (degrees["tp"] * degrees["pp"] * degrees["cp"]):
        raise InputError("mb.error.world", "mb.hint.world", world=world, tp=degrees["tp"], pp=degrees["pp"], cp=degrees["cp"])
    return degrees, world
