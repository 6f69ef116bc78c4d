"""The Hugging Face Trainer planned from flags (`trainsteps plan --num-examples ...`), and its release families side
by side (`--compare-versions`)."""

from __future__ import annotations

from functools import cache

from trainsteps.errors import InputError
from trainsteps.planners.table import Answer

_RENAMED = {"transformers_version": ("transformers", lambda value: value),
            "no_even_batches": ("even_batches", lambda value: not value),
            "no_dispatch_batches": ("dispatch_batches", lambda value: False if value else None)}
"""Settings whose RunSpec field has another name or sense: setting -> (field, value of the field)."""


def spec_fields(settings: dict, names) -> dict:
    """RunSpec field -> value for the named settings (the one place a setting's name becomes a field's): what the
    flags plan builds its RunSpec from, and what a config's flags override."""
    slots = _spec_slots()
    fields = {}
    for name in names:
        if name in _RENAMED:
            field, convert = _RENAMED[name]
            fields[field] = convert(settings.get(name))
        elif name in slots and name != "world_size":
            fields[name] = settings.get(name)
    return fields


@cache
def _spec_slots() -> frozenset:
    """RunSpec's field names as a set (its `__slots__` is a tuple; `plan` has over a hundred settings)."""
    from trainsteps.spec import RunSpec

    return frozenset(RunSpec.__slots__)


def plan_flags(request, counted) -> Answer:
    """`plan --num-examples N ...`: one release, or every release family with `--compare-versions`."""
    settings, notes = with_unsloth_defaults(request)
    if counted is not None and counted.num_examples is not None:
        settings["num_examples"] = counted.num_examples
    spec = spec_from_settings(settings)
    if request.gave("compare_versions"):
        from trainsteps.compare import compare_families, render_comparison

        rows = compare_families(spec)
        return Answer({"comparison": [row.to_dict(request.lang) for row in rows]}, render_comparison(rows, request.lang),
                      notes=_notes(counted, notes))
    from trainsteps.frameworks.hf import plan
    from trainsteps.report import render_schedule

    schedule = plan(spec)
    attach_known_tokens(schedule, spec, counted, request.lang)
    human = answer_first(schedule, request.lang, render_schedule(schedule, request.lang, request.explain), counted)
    return Answer(with_tokens_note(schedule.to_dict(request.lang), counted), human, notes=_notes(counted, notes))


def _notes(counted, notes: list) -> list:
    return ([counted.note] if counted is not None and counted.note else []) + notes


def with_unsloth_defaults(request) -> tuple[dict, list]:
    """The settings with Unsloth's rewritten defaults for those not given (`--unsloth RELEASE`), and a note per change."""
    settings = dict(request.settings)
    release = settings.get("unsloth_release")
    if not release:
        return settings, []
    from trainsteps.frameworks import unsloth
    from trainsteps.i18n import message

    if not unsloth.known(release):
        raise InputError("unsloth.error.release", "unsloth.hint.release", release=release, oldest=unsloth.NEWEST)
    from trainsteps.frameworks.hf.releases import major_of

    notes = []
    for name, value, plain in unsloth.rewritten_defaults(release, set(request.given), major_of(settings.get("transformers_version"))):
        if name in settings:
            settings[name] = value
            notes.append(message("unsloth.note.default", request.lang, release=release, key=name, value=value,
                                 framework="transformers", plain=plain))
    return settings, notes


def spec_from_settings(settings: dict):
    """A RunSpec from the plan settings (the world size from `--world-size` or `--gpus` x `--nodes`)."""
    from trainsteps.spec import RunSpec
    from trainsteps.world import world_size

    world = world_size(settings.get("world_size"), settings.get("gpus"), settings.get("nodes"))
    epochs = settings.get("num_train_epochs")
    if settings.get("streaming") and (settings.get("max_steps") or -1) > 0 and settings.get("num_examples") is None \
            and settings.get("dataset_tokens") is None:
        raise InputError("stream.error.no_size", "stream.hint.no_size")
    fields = spec_fields(settings, [name for name in settings if name != "num_train_epochs"])
    return RunSpec(world_size=1 if world is None else world, num_train_epochs=3.0 if epochs is None else epochs, **fields)


def attach_known_tokens(schedule, spec, counted, lang: str) -> None:
    """Tokens per step / epoch / run whenever the data's tokens are known: counted with `--data` (and a tokenizer),
    or every row `--seq-length` tokens (packed rows, `--dataset-tokens` streams)."""
    profile = counted.token_profile if counted is not None else None
    if profile is None and not spec.seq_length:
        return  # tokens unknown: the token module is not loaded
    from trainsteps import tokens

    if profile is None:
        rows = spec.num_examples or (spec.dataset_tokens // spec.seq_length if spec.dataset_tokens else None)
        if rows:
            profile = tokens.fixed(rows, spec.seq_length)
    if profile is not None and schedule.run.samples_seen is not None:
        tokens.attach(schedule, profile, lang)


def with_tokens_note(data: dict, counted) -> dict:
    note = counted.tokens_unknown if counted is not None else None
    return {**data, "tokens_unknown": note} if note else data


def answer_first(schedule, lang: str, body: str, counted, wrapper: str | None = None, extra: str | None = None,
                 packed: bool = False) -> str:
    """The one-line answer, then the report (and, when tokens could not be counted, why). `packed`: the loader's rows
    are packed although no count said so (Axolotl's multipack sampler)."""
    from trainsteps.answer import plan_line

    head = plan_line(schedule, lang, packed=packed or bool(counted is not None and counted.packed), wrapper=wrapper)
    if extra:
        head += " · " + extra
    note = counted.tokens_unknown if counted is not None else None
    return head + ("\n" + note if note else "") + "\n\n" + body
