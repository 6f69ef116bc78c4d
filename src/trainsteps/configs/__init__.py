"""Importers for the files users already have: training YAML/JSON of each framework, DeepSpeed and accelerate
configs, a checkpoint's trainer_state.json and a launch command line. One module per format.

`import_run(paths, launch=..., flags=...)` reads them all, merges them with provenance (flags override files,
disagreeing files are reported), lets the framework's wrapper rules count the training rows, and returns an
`ImportedRun` whose `spec` feeds the Trainer engine.
"""

from __future__ import annotations

import pathlib
from contextlib import contextmanager
from dataclasses import dataclass, field

from trainsteps.configs.files import ConfigFile, find_local, read_config
from trainsteps.configs.settings import Settings, to_number
from trainsteps.derivation import Derivation
from trainsteps.errors import InputError, TrainstepsError
from trainsteps.spec import RunSpec
from trainsteps.versions import Version

MAIN_KINDS = ("llamafactory", "axolotl", "trl", "swift", "hf_args")
FRAMEWORK_OF = {"llamafactory": "llamafactory", "axolotl": "axolotl", "trl": "trl", "swift": "swift", "hf_args": "hf"}


@dataclass(slots=True)
class ImportedRun:
    """Everything read from the user's files, ready for the Trainer engine."""

    framework: str
    """hf, llamafactory, axolotl, trl or swift."""
    framework_version: str | None
    """Release of the wrapper the rules model."""
    spec: RunSpec
    """Settings for the Trainer engine."""
    settings: Settings
    """Every value with its origin, conflicts, overridden and ignored keys."""
    files: list[str]
    """The files read, with their detected kind."""
    derivation: Derivation
    """How the wrapper reached `num_examples` (and max_steps, where it sets it)."""
    estimate: tuple[int, int] | None = None
    """(low, high) of `num_examples` when it depends on unknown token lengths."""
    notes: list[tuple[str, str, dict]] = field(default_factory=list)
    """(code, message id, params) of wrapper behaviours worth a warning."""
    state_max_steps: int | None = None
    """max_steps recorded in a checkpoint's trainer_state.json, to check against the plan."""
    steps_range: tuple[int, int] | None = None
    """(low, high) of a max_steps the wrapper computes from unknown token lengths (Axolotl)."""
    banner_num_examples: int | None = None
    """`Num examples` the banner prints when the engine is given `loader_rows` instead (GRPO, ms-swift)."""
    token_profile: object | None = None
    """`tokens.TokenProfile` of the rows the Trainer sees, when their tokens were counted with a tokenizer."""
    eval_examples: int | None = None
    """Rows of the evaluation set the config names (`eval_dataset`), when they could be read."""


def detect_kind(cfg: ConfigFile) -> str:
    from trainsteps.configs import axolotl, deepspeed, hf_args, llamafactory, swift, trl

    data = cfg.data
    if cfg.script is not None:
        return cfg.kind
    if hf_args.looks_like_trainer_state(data):
        return "trainer_state"
    if "compute_environment" in data or ("distributed_type" in data and "num_processes" in data):
        return "accelerate"
    if deepspeed.looks_like_deepspeed(data):
        return "deepspeed"
    if axolotl.looks_like_axolotl(data):
        return "axolotl"
    if llamafactory.looks_like_llamafactory(data):
        return "llamafactory"
    if swift.looks_like_swift(data):
        return "swift"
    if trl.looks_like_trl(data):
        return "trl"
    if hf_args.looks_like_training_arguments(data):
        return "hf_args"
    raise InputError("configs.error.unknown_kind", "configs.hint.unknown_kind", path=str(cfg.path), keys=", ".join(list(data)[:6]))


TOKENIZED = ("llamafactory", "trl", "axolotl", "swift")
"""Frameworks whose configs `plan CONFIG --tokenizer` counts through their own preprocessing."""


def import_run(paths: list[str], *, launch: str | None = None, flags: dict | None = None, kind: str | None = None,
               framework_version: str | None = None, lengths_provider=None, flag_names: dict | None = None,
               unsloth: str | None = None) -> ImportedRun:
    """Read config files (+ a launch line) and apply `flags` (RunSpec field -> value the user typed) on top;
    `lengths_provider(framework)` gives the token counter of a framework in TOKENIZED (or None);
    `flag_names` gives the option a field came from when it is not `--field-name` (e.g. --gpus); `unsloth` is the
    Unsloth release of `--unsloth` (a script that imports unsloth needs none)."""
    from trainsteps.configs import launch as launch_mod

    flags = dict(flags or {})
    settings = Settings()
    files: list[ConfigFile] = []
    launched = launch_mod.parse_launch(launch) if launch else None
    for path in list(paths) + [p for p in (launched.configs if launched else ()) if pathlib.Path(p).is_file()]:
        if any(pathlib.Path(path).resolve() == f.path.resolve() for f in files):
            continue
        cfg = read_config(path)
        cfg.kind = detect_kind(cfg) if not (kind and not files) else kind
        files.append(cfg)
    main = next((f for f in files if f.kind in MAIN_KINDS), None)
    if main is None and launch:
        from trainsteps.configs.swift import from_command_line

        swift_args = from_command_line(launch)
        if swift_args is not None:  # the `swift sft --key value ...` line is the config
            main = ConfigFile(pathlib.Path("launch line"), swift_args, {}, "swift")
            files.insert(0, main)
    framework = FRAMEWORK_OF[main.kind] if main else "hf"
    reader = _main_reader(framework)
    if main is not None:
        reader.read(main, settings)
        if framework == "trl" and launch:
            _trl_command(launch, settings)
    _read_deepspeed_key(main, files, settings)
    for cfg in files:
        if cfg is not main:
            _read_aux(cfg, settings)
    if launched and launched.world_size is not None:
        settings.put("world_size", launched.world_size, f"launch: {launch}")
    for key, value in flags.items():
        settings.force(key, value, (flag_names or {}).get(key) or "--" + key.replace("_", "-"))
    unsloth_notes = _unsloth(main, framework, settings, unsloth)
    version = framework_version or reader.NEWEST_VERSION
    try:
        if framework_version is not None:
            Version.parse(framework_version)
    except ValueError:
        raise InputError("configs.error.framework_version", "configs.hint.framework_version", version=framework_version,
                         framework=framework) from None
    if main is not None and hasattr(reader, "pin_transformers"):  # the one place a wrapper's default release is decided
        reader.pin_transformers(settings, version)
    outcome = None
    if main is not None and ("num_examples" not in flags or framework in ("trl", "swift", "axolotl")):
        with blamed_on(settings):
            provider = lengths_provider(framework) if lengths_provider is not None and framework in TOKENIZED else None
            outcome = (reader.outcome(main, settings, version, provider) if framework in TOKENIZED
                       else reader.outcome(main, settings, version))
    run = _finish(framework, version, settings, files, outcome)
    run.notes[:0] = unsloth_notes
    return run


TRL_COMMANDS = {"kto": ("trl.kto", True), "grpo": ("trl.grpo", True), "rloo": ("trl.rloo", True), "dpo": ("trl.trainer", "dpo"),
                "orpo": ("trl.trainer", "orpo"), "cpo": ("trl.trainer", "cpo"), "reward": ("trl.trainer", "reward")}
"""`trl <command> --config x.yaml`: the command names the trainer, which the YAML alone may not (a KTO file without
desirable/undesirable weights still has its pairs unpaired into two rows each)."""


def _trl_command(launch: str, settings: Settings) -> None:
    import shlex

    from trainsteps.configs.launch import join_continued_lines

    try:
        words = shlex.split(join_continued_lines(launch), comments=True)
    except ValueError:
        return
    for first, command in zip(words, words[1:], strict=False):
        if first.rsplit("/", 1)[-1] == "trl" and command in TRL_COMMANDS:
            key, value = TRL_COMMANDS[command]
            settings.put(key, value, f"launch: trl {command}")
            if command == "rloo":
                settings.put("trl.grpo", True, "launch: trl rloo")  # RLOOTrainer samples as GRPOTrainer does
            return


def _unsloth(main: ConfigFile | None, framework: str, settings: Settings, release: str | None) -> list:
    """Unsloth's rewritten TRL config defaults, put in for the settings nobody set (each said in a note), or why
    they do not apply. The GRPO batch override is applied by the TRL reader once the batch is known."""
    from trainsteps.frameworks import unsloth

    script = (main.script if main is not None else None) or {}
    if release is not None and not unsloth.known(release):
        raise InputError("unsloth.error.release", "unsloth.hint.release", release=release, oldest=unsloth.NEWEST)
    notes: list = []
    if script.get("not_read"):
        notes.append(("SCRIPT_NOT_READ", "script.note.not_read", {"path": main.path.name, "call": script["call"],
                                                                 "keys": ", ".join(script["not_read"])}))
    if framework == "llamafactory" and (release or main.data.get("use_unsloth") is True):
        return [*notes, ("UNSLOTH_LF", "unsloth.note.lf", {})]
    if not (release or script.get("unsloth")):
        return notes
    if framework != "trl":
        return [*notes, ("UNSLOTH_NOT_TRL", "unsloth.note.not_trl", {"call": script.get("call", "TrainingArguments")})]
    if script.get("unsloth") and not script.get("unsloth_patched"):
        return [*notes, ("UNSLOTH_IMPORT_ORDER", "unsloth.note.import_order", {
            "call": script["call"], "line": script["trl_import_line"], "unsloth_line": script["unsloth_line"]})]
    if release is None:
        release = unsloth.NEWEST
        notes.append(("UNSLOTH_RELEASE_ASSUMED", "unsloth.note.assumed", {"path": main.path.name, "line": script["unsloth_line"],
                                                                          "release": release}))
    settings.put("unsloth.release", release, "--unsloth" if not script.get("unsloth") else f"{main.path.name}:{script['unsloth_line']}")
    given = {key.removeprefix("trl.") for key in settings.values}
    if given & {"warmup_ratio", "warmup_steps"}:
        given.add("warmup")
    from trainsteps.frameworks.hf.releases import major_of

    major = major_of(settings.get("transformers"))
    for name, value, plain in unsloth.rewritten_defaults(release, given, major):
        settings.put(name, value, f"Unsloth {release} default")
        notes.append(("UNSLOTH_DEFAULT", "unsloth.note.default", {"release": release, "key": name, "value": value,
                                                                  "framework": "TRL", "plain": plain}))
    return notes


_SETTING_OF_ERROR = {"input.no_length_of_training": "num_train_epochs", "hf.error.warmup_ratio_removed": "warmup_ratio"}  # errors about one setting without a `name`


@contextmanager
def blamed_on(settings: Settings):
    """An error about one setting names the file and line it was read from (`lf.yaml:7: ...`), not only its name."""
    try:
        yield
    except TrainstepsError as exc:
        key = exc.params.get("setting") or exc.params.get("name") or _SETTING_OF_ERROR.get(exc.msg_id, "")
        origin = settings.origin(key)
        if origin and not origin.startswith(("--", "default")) and exc.origin is None:
            exc.origin = origin
        raise


def _main_reader(framework: str):
    import importlib

    module = {"hf": "hf_reader", "llamafactory": "llamafactory", "axolotl": "axolotl", "trl": "trl", "swift": "swift"}[framework]
    return importlib.import_module(f"trainsteps.configs.{module}")


def _read_deepspeed_key(main: ConfigFile | None, files: list[ConfigFile], settings: Settings) -> None:
    """`deepspeed: ds_config.json` in the training config: merge that file too, if it can be found."""
    name = settings.get("deepspeed_file")
    if not name or not isinstance(name, str) or main is None:
        return
    candidate = find_local(name, (pathlib.Path.cwd(), main.path.parent, main.path.parent.parent))
    if candidate is not None:
        if not any(candidate.resolve() == f.path.resolve() for f in files):
            cfg = read_config(candidate)
            cfg.kind = "deepspeed"
            files.append(cfg)  # read with the other auxiliary files
        return
    settings.ignored.append(("deepspeed", settings.origin("deepspeed_file") + " (file not found)"))


def _read_aux(cfg: ConfigFile, settings: Settings) -> None:
    from trainsteps.configs import deepspeed, hf_args, launch

    if cfg.kind == "deepspeed":
        deepspeed.read_deepspeed(cfg, settings)
    elif cfg.kind == "accelerate":
        launch.read_accelerate(cfg, settings)
    elif cfg.kind == "trainer_state":
        hf_args.read_trainer_state(cfg, settings)
    else:  # a second main config: its step keys may conflict with the first
        hf_args.read_hf_file(cfg, settings)


def _finish(framework, version, settings: Settings, files, outcome) -> ImportedRun:
    fields = {name: settings.get(name) for name in RunSpec.field_names() if settings.get(name) is not None}  # `key: null` = unset
    estimate = None
    derivation = outcome.derivation if outcome else Derivation()
    banner_n = None
    if outcome is not None and outcome.num_examples is not None:
        fields["num_examples"] = outcome.num_examples.value
        if not outcome.num_examples.exact:
            estimate = (outcome.num_examples.low, outcome.num_examples.high)
        if outcome.loader_rows is not None:
            banner_n, fields["num_examples"] = outcome.num_examples.value, outcome.loader_rows
    if outcome is not None and outcome.max_steps is not None and "max_steps" not in settings.values:
        fields["max_steps"] = outcome.max_steps
    for name, value in getattr(_main_reader(framework), "DEFAULTS", {}).items():
        fields.setdefault(name, value)
    fields.setdefault("world_size", 1)
    with blamed_on(settings):
        spec = RunSpec(**_coerce(fields))
    _check_deepspeed_batch(settings, spec)
    ds_total = settings.get("deepspeed_train_batch_size")
    notes = list(outcome.notes) if outcome else []
    if ds_total is not None and ds_total != spec.per_device_train_batch_size * spec.gradient_accumulation_steps * spec.world_size:
        notes.append(("DS_TRAIN_BATCH_SIZE", "configs.note.ds_train_batch", {
            "total": ds_total, "bs": spec.per_device_train_batch_size, "ga": spec.gradient_accumulation_steps, "world": spec.world_size,
            "origin": settings.origin("deepspeed_train_batch_size")}))
    if "world_size" not in settings.values:
        notes.append(("CONFIG_WORLD_ASSUMED", "configs.note.world_assumed", {}))
    return ImportedRun(framework, version, spec, settings, [f"{f.path} ({f.kind})" for f in files], derivation, estimate, notes,
                       settings.get("state_max_steps"), outcome.max_steps_range if outcome else None, banner_n,
                       outcome.token_profile if outcome else None, outcome.eval_examples if outcome else None)


def _check_deepspeed_batch(settings: Settings, spec: RunSpec) -> None:
    """A DeepSpeed file whose batch numbers disagree with the Trainer's stops the run (HfTrainerDeepSpeedConfig), as
    `--framework deepspeed` says; train_batch_size is only checked when the number of processes is known."""
    from trainsteps.frameworks.deepspeed import HF_MISMATCH_FOOTER, HF_MISMATCH_HEADER, resolve_hf_batch
    from trainsteps.frameworks.framework_error import FrameworkRuleError

    keys = ["train_micro_batch_size_per_gpu", "gradient_accumulation_steps"]
    if "world_size" in settings.values:
        keys.append("train_batch_size")
    config = {key: settings.get(f"deepspeed_{key}") for key in keys if settings.get(f"deepspeed_{key}") is not None}
    if not config:
        return
    _, mismatches = resolve_hf_batch(config, spec.per_device_train_batch_size, spec.gradient_accumulation_steps, spec.world_size)
    if mismatches:
        text = HF_MISMATCH_HEADER + "\n" + "\n".join(mismatches) + "\n" + HF_MISMATCH_FOOTER
        raise FrameworkRuleError("ds.error.hf_mismatch", "ds.hint.hf_mismatch", framework_error=text, mismatches="; ".join(mismatches))


_INT_FIELDS = ("per_device_train_batch_size", "gradient_accumulation_steps", "world_size", "max_steps", "num_examples", "resume_from_step")
_FLOAT_FIELDS = ("num_train_epochs", "logging_steps", "save_steps", "eval_steps", "warmup_ratio", "warmup_steps", "eval_delay")


def _coerce(fields: dict) -> dict:
    """YAML gives `3.0e-5`-style strings and ints where floats are meant; bring each value to its field's type."""
    out = dict(fields)
    for name in _INT_FIELDS:
        value = out.get(name)
        if isinstance(value, str) or (isinstance(value, float) and value.is_integer()):
            out[name] = to_number(value, int, name)
    for name in _FLOAT_FIELDS:
        value = out.get(name)
        if isinstance(value, str):
            out[name] = to_number(value, float, name)
    for name in ("dataloader_drop_last", "logging_first_step", "streaming", "split_batches", "even_batches", "greater_is_better"):
        if isinstance(out.get(name), str):
            out[name] = out[name].strip().lower() in ("true", "1", "yes")
    return out
