"""From what a log says to the settings that produced it (pure: no I/O).

The search runs the plan engine (`trainsteps.plan`) on candidate settings — each release family x
drop_last x (epochs | max_steps | stream) — and keeps those whose banner prints exactly the observed
numbers and whose loop ends where the log shows it ended. Line numbers of the logger prefix,
banner lines present and the level of the max_steps notice narrow the releases first
(`frameworks/hf/log_lines.py`). What is left is reported as exact values, ranges or contradictions.
"""

from __future__ import annotations

import math

from trainsteps.derivation import format_value
from trainsteps.errors import TrainstepsError
from trainsteps.frameworks.hf.log_lines import all_releases
from trainsteps.frameworks.hf.releases import FAMILIES
from trainsteps.logs.infer_release import family_of, newest_of, release_evidence, releases_known, summarize
from trainsteps.logs.infer_world import decide_world_size, launcher_facts, where
from trainsteps.logs.inference import (
    EPOCH_TOLERANCE,
    MAX_REPEAT,
    MAXSIZE,
    REPLAY_EPOCHS,
    Contradiction,
    Finding,
    Hypothesis,
    Inference,
    Known,
)
from trainsteps.logs.observed import RunObservation
from trainsteps.record import replace
from trainsteps.schedule import Schedule
from trainsteps.spec import RunSpec
from trainsteps.validate import check_fields
from trainsteps.versions import Version

__all__ = ["infer", "Inference", "Finding", "Hypothesis", "Contradiction", "Known", "MAXSIZE", "family_of", "releases_known",
           "summarize", "launcher_facts", "where", "EPOCH_TOLERANCE", "MAX_REPEAT", "REPLAY_EPOCHS"]



def infer(run: RunObservation, raw_examples: int | None = None) -> Inference:
    _REPLAYS.clear()
    inf = Inference(run=run)
    if run.kind == "trainer_state":
        _infer_state(inf)
        _ending(inf)
        return inf
    if run.kind == "paddlenlp":
        inf.facts.append(Finding("explain.fact.paddlenlp", {"line": run.header_line or run.first_line or 1}, code="LOG_NOT_TRANSFORMERS"))
        _ending(inf)
        return inf
    decide_world_size(inf)
    release_evidence(inf)
    if run.kind == "progress":
        from trainsteps.logs.infer_progress import infer_progress

        infer_progress(inf)
        _ending(inf)
        return inf
    _search(inf)
    _settings(inf)
    _preprocessing(inf, raw_examples)
    _wrappers(inf)
    _ending(inf)
    return inf


def _ending(inf: Inference) -> None:
    """How the run ended as the log shows it: crashed or interrupted at step k of n, finished, or still running."""
    from trainsteps.logs.infer_progress import ending

    launcher_facts(inf)
    ending(inf)


# ---------------------------------------------------------------- the search

def _search(inf: Inference) -> None:
    run = inf.run
    n, bs, ga = run.value("num_examples"), run.value("per_device_batch"), run.value("grad_accum")
    epochs, max_steps = run.value("num_epochs"), run.value("max_steps")
    if bs is None or bs < 1:
        if run.kind != "wrapper":
            inf.facts.append(Finding("explain.fact.no_batch", {}))
        return
    ga = ga or 1
    world = inf.world_size or 1
    stream = epochs == MAXSIZE
    if stream:
        modes = ["stream"]
    elif run.max_steps_notice_seen or _axolotl_set_max_steps(run):
        modes = ["max_steps"]
    elif run.other_trainer_lines:
        modes = ["epochs"]
    else:
        modes = ["epochs", "max_steps"]
    if max_steps is None:
        inf.facts.append(Finding("explain.fact.cut_banner", {}))
    if n is None and not stream:
        _search_unknown_n(inf, bs, ga, world, epochs, max_steps, modes)
        return
    candidates = []
    for _, family in FAMILIES.entries:
        allowed = [r for r in inf.releases if family_of(r) is family]
        version = allowed[-1] if allowed else newest_of(family)
        for drop_last in (False,) if stream else (False, True):
            for mode in modes:
                hyp = _hypothesis(inf, family, version, allowed, drop_last, mode, n, bs, ga, world, epochs, max_steps)
                if hyp is not None:
                    candidates.append(hyp)
    if modes == ["epochs"] and not any(h.consistent and h.allowed for h in candidates) and max_steps:
        for _, family in FAMILIES.entries:
            allowed = [r for r in inf.releases if family_of(r) is family]
            version = allowed[-1] if allowed else newest_of(family)
            for drop_last in (False, True):
                hyp = _hypothesis(inf, family, version, allowed, drop_last, "max_steps", n, bs, ga, world, epochs, max_steps)
                if hyp is not None:
                    candidates.append(hyp)
    _rank(inf, candidates)
    if not inf.hypotheses and world > 1 and bs % world == 0 and not stream:
        # accelerate split_batches: each loader batch is cut across the processes
        for _, family in FAMILIES.entries:
            allowed = [r for r in inf.releases if family_of(r) is family]
            version = allowed[-1] if allowed else newest_of(family)
            for drop_last in (False, True):
                for mode in modes:
                    hyp = _hypothesis(inf, family, version, allowed, drop_last, mode, n, bs, ga, world, epochs, max_steps, split=True)
                    if hyp is not None:
                        candidates.append(hyp)
        _rank(inf, candidates)
    if not inf.hypotheses and _axolotl_set_max_steps(run) and epochs and max_steps:
        # Axolotl packs in its sampler: the Trainer's loader length comes from packed batches, not from Num examples.
        low = math.ceil(max_steps / epochs)
        high = math.ceil(max_steps / (epochs - 1)) - 1 if epochs > 1 else None
        inf.facts.append(Finding("explain.fact.axolotl_packed", {"low": low, "high": "..." if high is None else f"{high:,}",
                                                                 "m": max_steps, "epochs": epochs}))
        inf.inferred["max_steps"] = Known(exact=max_steps)
        return
    if not inf.hypotheses:
        _contradiction(inf, candidates, n, bs, ga, world, epochs, max_steps)


# The engine's replays of one inference by their settings: the search asks for the same settings again (a family's
# probe, drop_last that changes nothing, the contrast), about a third of its calls on a banner. Cleared by each
# infer(), so it holds one run's schedules only. The settings are first brought to their types as the engine's
# first step does (`check_fields`: `500` -> `500.0`), so that equal values are equal settings; whatever else the
# engine writes back into them is kept with the schedule and written again on a replay.
_REPLAYS: dict[tuple, tuple[Schedule | None, tuple]] = {}


def _plan(spec: RunSpec) -> Schedule | None:
    try:
        check_fields(spec)
    except (TrainstepsError, ValueError, OverflowError, MemoryError):
        return None
    values = spec._record_values(spec)
    replay = _REPLAYS.get(values)
    if replay is None:
        _REPLAYS[values] = replay = (_engine(spec), spec._record_values(spec))
    elif replay[1] != values or tuple(map(type, replay[1])) != tuple(map(type, values)):
        for name, value in zip(spec.__match_args__, replay[1], strict=True):
            setattr(spec, name, value)
    return replay[0]


def _engine(spec: RunSpec) -> Schedule | None:
    from trainsteps.frameworks.hf import plan

    try:
        return plan(spec)
    except (TrainstepsError, ValueError, OverflowError, MemoryError):
        return None


def _hypothesis(inf, family, version, allowed, drop_last, mode, n, bs, ga, world, epochs, max_steps, split=False) -> Hypothesis | None:
    run = inf.run
    base = RunSpec(num_examples=n, per_device_train_batch_size=bs, gradient_accumulation_steps=ga, world_size=world,
                   dataloader_drop_last=drop_last, transformers=version, resume_from_step=run.resume_global_step,
                   save_strategy="no", logging_strategy="no", split_batches=split)
    epochs_known = None
    if mode == "stream":
        if not max_steps:
            return None
        spec = replace(base, num_examples=None, streaming=True, max_steps=max_steps)
    elif mode == "max_steps":
        if not max_steps:
            return None
        spec = replace(base, max_steps=max_steps)
    else:
        if epochs is not None and epochs > REPLAY_EPOCHS and max_steps and not _steps_fit(n, bs, ga, world, epochs, max_steps):
            return None  # no rounding prints these steps: replaying thousands of epochs would only confirm it
        if epochs is not None and epochs > 2 * 10**5:  # replaying more epochs than this takes seconds
            return None
        first = float(epochs) if epochs else None
        if first is None:
            if not max_steps:
                return None
            probe = _plan(replace(base, num_train_epochs=1.0))
            if probe is None:
                return None
            first = max_steps / _nupe(probe)
        spec = replace(base, num_train_epochs=first)
        schedule = _plan(spec)
        if schedule is None:
            return None
        nupe = _nupe(schedule)
        if max_steps and schedule.run.max_steps != max_steps:
            fraction = max_steps / nupe
            if epochs and math.ceil(fraction) != epochs:
                return _finish(inf, family, version, allowed, drop_last, mode, spec, schedule, None)
            spec = replace(base, num_train_epochs=fraction)
        m = max_steps or schedule.run.max_steps
        low, high = (m - 1) / nupe, m / nupe
        if epochs:
            low, high = max(low, epochs - 1), min(high, epochs)
        epochs_known = Known(exact=spec.num_train_epochs) if low == high else Known(low=round(low, 6), high=round(high, 6), low_open=True)
    schedule = _plan(spec)
    if schedule is None:
        return None
    return _finish(inf, family, version, allowed, drop_last, mode, spec, schedule, epochs_known)


def _nupe(schedule: Schedule) -> int:
    d = schedule.derivation
    return d["num_update_steps_per_epoch"].value if "num_update_steps_per_epoch" in d else schedule.run.max_steps


def _finish(inf, family, version, allowed, drop_last, mode, spec, schedule, epochs_known) -> Hypothesis:
    hyp = Hypothesis(family, version, allowed, drop_last, mode, spec, schedule, epochs_known, allowed=bool(allowed))
    run = inf.run
    printed = {"num_examples": "Num examples", "num_epochs": "Num Epochs", "total_batch": TOTAL,
               "max_steps": "Total optimization steps"}
    for key, label in printed.items():
        seen = run.value(key)
        if seen is None:
            continue
        if key == "total_batch" and inf.world_size is None:
            continue
        if _int(schedule.banner.get(label)) != seen:
            hyp.mismatches.append(key)
    upe = run.value("update_steps_per_epoch")
    if upe is not None and upe != _nupe(schedule):
        hyp.mismatches.append("update_steps_per_epoch")
    hyp.progress_mismatch = _progress_check(run, schedule)
    return hyp


TOTAL = "Total train batch size (w. parallel, distributed & accumulation)"


def _int(text: str | None) -> int | None:
    return None if text is None else int(text.replace(",", ""))


def _progress_check(run: RunObservation, schedule: Schedule):
    facts = schedule.run
    if run.last_step is not None:
        step = run.last_step.value
        if step > facts.optimizer_steps or (run.finished and step != facts.optimizer_steps):
            return ("step", step, facts.optimizer_steps)
    if run.last_epoch is not None and facts.epochs_completed is not None:
        epoch = run.last_epoch.value
        if epoch > facts.epochs_completed + EPOCH_TOLERANCE:
            return ("epoch", epoch, facts.epochs_completed)
        if run.finished and abs(epoch - facts.epochs_completed) > EPOCH_TOLERANCE:
            return ("epoch", epoch, facts.epochs_completed)
    return None


def tier(h: Hypothesis) -> int:
    """0: whole epochs (or a stream); 1: max_steps set; 2: fractional epochs. Lower is more common."""
    if h.mode in ("max_steps", "stream"):
        return 1
    if h.mode == "epochs" and not float(h.spec.num_train_epochs).is_integer():
        return 2
    return 0


def _rank(inf: Inference, candidates: list[Hypothesis]) -> None:
    good = [h for h in candidates if h.consistent and h.allowed]
    newest_first = {family.name: -i for i, (_, family) in enumerate(FAMILIES.entries)}
    # the most common settings first; among releases the log cannot tell apart, the newest (most used today)
    good.sort(key=lambda h: (tier(h), h.drop_last, h.spec.split_batches, newest_first[h.family.name]))
    inf.hypotheses = good
    inf.rejected = [h for h in candidates if not (h.consistent and h.allowed)]
    if good:
        ruled_out = [h for h in inf.rejected if h.allowed and not h.mismatches and h.progress_mismatch
                     and (h.drop_last, h.mode) == (good[0].drop_last, good[0].mode) and h.family not in {g.family for g in good}]
        inf.evidence = [e for e in inf.evidence if e.msg_id != "explain.ev.progress"]
        for h in ruled_out:
            what, seen, predicted = h.progress_mismatch
            reading = inf.run.last_step if what == "step" else inf.run.last_epoch
            inf.evidence.append(Finding("explain.ev.progress", {"what": what, "seen": format_value(seen), "line": reading.line if reading else "?",
                                                                "family": h.family.name, "predicted": format_value(predicted)}))


def _axolotl_set_max_steps(run: RunObservation) -> bool:
    estimate = run.wrapper.get("axolotl_total_num_steps") or run.wrapper.get("axolotl_max_steps")
    return estimate is not None and estimate.value == run.value("max_steps")


# ---------------------------------------------------------------- dataset size unknown

def _search_unknown_n(inf, bs, ga, world, epochs, max_steps, modes) -> None:
    """No `Num examples`: the range of dataset sizes that print the same steps, per family."""
    if not max_steps or not epochs:
        inf.facts.append(Finding("explain.fact.too_little", {}))
        return
    ranges = []
    for _, family in FAMILIES.entries:
        allowed = [r for r in inf.releases if family_of(r) is family]
        if not allowed:
            continue
        for drop_last in (False, True):
            for mode in modes:
                found = _n_range(family, allowed[-1], bs, ga, world, epochs, max_steps, drop_last, mode)
                if found:
                    ranges.append((family, allowed, drop_last, mode, found))
    if not ranges:
        inf.contradictions.append(Contradiction(Finding("explain.contra.no_n", {"steps": max_steps, "epochs": epochs})))
        return
    for family, allowed, drop_last, mode, (low, high, schedule) in ranges:
        spec = schedule.inputs
        hyp = Hypothesis(family, allowed[-1], allowed, drop_last, mode, RunSpec(**spec), schedule,
                         Known(exact=float(epochs)) if mode == "epochs" else None)
        hyp.progress_mismatch = _progress_check(inf.run, schedule)
        if hyp.consistent:
            inf.hypotheses.append(hyp)
        inf.facts.append(Finding("explain.fact.n_range", {"low": low, "high": high, "family": family.name,
                                                          "drop_last": drop_last, "mode": "max_steps" if mode == "max_steps" else "num_train_epochs"}))
    inf.hypotheses.sort(key=lambda h: (h.mode == "max_steps", h.drop_last))
    lows = [r[4][0] for r in ranges]
    highs = [r[4][1] for r in ranges]
    inf.inferred["num_examples"] = Known(low=min(lows), high=max(highs))


def _n_range(family, version, bs, ga, world, epochs, max_steps, drop_last, mode):
    if mode == "epochs":
        if max_steps % epochs:
            return None
        nupes = [max_steps // epochs]
    else:
        low = math.ceil(max_steps / epochs)
        high = math.ceil(max_steps / (epochs - 1)) - 1 if epochs > 1 else low + 10**6
        nupes = [low, high] if high >= low else []
    if not nupes:
        return None
    per = bs * world
    if family.rounding == "floor":
        l_low, l_high = nupes[0] * ga if nupes[0] > 1 else 1, nupes[-1] * ga + ga - 1
    else:
        l_low, l_high = (nupes[0] - 1) * ga + 1, nupes[-1] * ga
    if drop_last:
        n_low, n_high = l_low * per, (l_high + 1) * per - 1
    else:
        n_low, n_high = (l_low - 1) * per + 1, l_high * per
    spec = RunSpec(per_device_train_batch_size=bs, gradient_accumulation_steps=ga, world_size=world, dataloader_drop_last=drop_last,
                   transformers=version, save_strategy="no", logging_strategy="no",
                   num_train_epochs=float(epochs), max_steps=max_steps if mode == "max_steps" else -1)
    checked = [_plan(replace(spec, num_examples=n)) for n in (n_low, n_high)]
    if any(s is None or s.run.max_steps != max_steps or s.banner.get("Num Epochs") != f"{epochs:,}" for s in checked):
        return None
    return n_low, n_high, checked[0]


# ---------------------------------------------------------------- contradictions

def _contradiction(inf, candidates, n, bs, ga, world, epochs, max_steps) -> None:
    arithmetic = [h for h in candidates if h.consistent]
    if arithmetic:
        families = sorted({h.family.name for h in arithmetic})
        inf.contradictions.append(Contradiction(
            Finding("explain.contra.evidence", {"releases": summarize(inf.releases), "families": ", ".join(families)}),
            [Finding("explain.expl.patched_trainer"), Finding("explain.expl.mixed_log")]))
        return
    near = [h for h in candidates if h.allowed and not h.mismatches and h.progress_mismatch]
    if near:
        what, seen, predicted = near[0].progress_mismatch
        inf.contradictions.append(Contradiction(
            Finding("explain.contra.progress", {"what": what, "seen": format_value(seen), "predicted": format_value(predicted),
                                                "families": ", ".join(sorted({h.family.name for h in near}))}),
            [Finding("explain.expl.interrupted"), Finding("explain.expl.resumed"), Finding("explain.expl.patched_trainer")]))
        return
    shown = ", ".join(f"{k}" for k in sorted({k for h in candidates if h.allowed for k in h.mismatches})) or "-"
    main = Finding("explain.contra.no_rule", {"keys": shown, "steps": format_value(max_steps) if max_steps else "?"})
    explanations = []
    if any(r.note for r in inf.run.banner.values()):
        explanations.append(Finding("explain.expl.damaged"))
    if n and max_steps and world > 1:
        alt = _try(inf, n, bs, ga, 1, epochs, max_steps)
        if alt:
            explanations.append(Finding("explain.expl.unsharded", {"world": world, "family": alt}))
    if n and max_steps:
        printed = inf.run.settings.get("num_generations")
        ks = list(range(2, MAX_REPEAT + 1))
        if printed is not None and isinstance(printed.value, int) and printed.value > 1:
            ks.insert(0, printed.value)
        for k in ks:
            alt = _try(inf, n * k, bs, ga, world, epochs, max_steps)
            if alt:
                if printed is not None and k == printed.value:
                    explanations.insert(0, Finding("explain.expl.repeated_printed", {"k": k, "n": n * k, "family": alt, "line": printed.line}))
                else:
                    explanations.append(Finding("explain.expl.repeated", {"k": k, "n": n * k, "family": alt}))
                break
    explanations.append(Finding("explain.expl.custom_trainer"))
    inf.contradictions.append(Contradiction(main, explanations))


def _could_print(n, bs, ga, world, epochs, max_steps, drop_last: bool | None = None) -> bool:
    """Cheap arithmetic filter before asking the engine: can any rounding give max_steps at all?"""
    from trainsteps.frameworks.hf.loader import ceil_div

    if not n or not bs or not world:
        return True
    loader_lengths = {ceil_div(ceil_div(n, bs), world), ceil_div(ceil_div(n, world), bs)}  # accelerate, DistributedSampler
    if drop_last is not False:
        loader_lengths |= {max(n // bs // world, 0), max(n // world // bs, 0), ceil_div(n // bs, world)}
    for length in loader_lengths:
        for nupe in (max(length // ga, 1), max(ceil_div(length, ga), 1)):
            if math.ceil(float(epochs or 1) * nupe) == max_steps:
                return True
    return False


def _steps_fit(n, bs, ga, world, epochs, max_steps) -> bool:
    """Closed form: can any loader length (any sharding, drop_last or not) and rounding give max_steps within
    num_train_epochs in (epochs - 1, epochs]? Lets the search skip replays that cannot match."""
    from trainsteps.frameworks.hf.loader import ceil_div

    if not n or not bs or not world:
        return True
    lengths = {ceil_div(ceil_div(n, bs), world), ceil_div(ceil_div(n, world), bs), n // bs // world, n // world // bs,
               ceil_div(n // bs, world)}
    for length in lengths:
        for nupe in {max(length // ga, 1), max(ceil_div(length, ga), 1)}:
            if (epochs - 1) * nupe < max_steps <= epochs * nupe:
                return True
    return False


def _try(inf, n, bs, ga, world, epochs, max_steps) -> str | None:
    """The first family whose rules reproduce max_steps from these settings (epochs mode, then max_steps mode)."""
    if not _could_print(n, bs, ga, world, epochs, max_steps):
        return None
    for _, family in FAMILIES.entries:
        allowed = [r for r in inf.releases if family_of(r) is family]
        if not allowed:
            continue
        spec = RunSpec(num_examples=n, per_device_train_batch_size=bs, gradient_accumulation_steps=ga, world_size=world,
                       num_train_epochs=float(epochs or 1), transformers=allowed[-1], save_strategy="no", logging_strategy="no")
        schedule = _plan(spec)
        if schedule is not None and schedule.run.max_steps == max_steps:
            return family.name
    return None


# ---------------------------------------------------------------- summary of the settings

def _settings(inf: Inference) -> None:
    run, out = inf.run, inf.inferred
    for key, name in (("per_device_batch", "per_device_train_batch_size"), ("grad_accum", "gradient_accumulation_steps")):
        if run.value(key) is not None:
            out[name] = Known(exact=run.value(key))
    if inf.world_size is not None:
        out["world_size"] = Known(exact=inf.world_size)
    stream = run.value("num_epochs") == MAXSIZE
    empty_loader = stream and any(Version.parse(r) >= Version(4, 49, 0) for r in inf.releases)
    out["streaming"] = Known(choices=[True, False]) if empty_loader else Known(exact=stream)
    if empty_loader:
        inf.facts.append(Finding("explain.fact.empty_loader", {"rows": (run.value("per_device_batch") or 1) * (inf.world_size or 1)}))
    if run.value("num_examples") is not None and not stream:
        out["num_examples"] = Known(exact=run.value("num_examples"))
    if run.resume_global_step is not None:
        out["resume_from_step"] = Known(exact=run.resume_global_step)
    hyps = inf.hypotheses
    if not hyps:
        if inf.releases and len(inf.releases) < len(all_releases()) and any(e.msg_id in ("explain.ev.lines", "explain.ev.printed_version",
                                                                                           "explain.ev.printed_version_family") for e in inf.evidence):
            out["transformers"] = releases_known(inf.releases)
        return
    if not stream:
        modes = {h.mode for h in hyps}
        m = run.value("max_steps")
        if m is None:
            pass
        elif modes == {"epochs"}:
            out["max_steps"] = Known(exact=-1)
        elif modes == {"max_steps"}:
            out["max_steps"] = Known(exact=m)
        else:
            out["max_steps"] = Known(choices=[-1, m])
        epoch_ranges = [h.epochs for h in hyps if h.mode == "epochs" and h.epochs is not None]
        if epoch_ranges:
            out["num_train_epochs"] = _union(epoch_ranges)
        drops = sorted({h.drop_last for h in hyps})
        out["dataloader_drop_last"] = Known(exact=drops[0]) if len(drops) == 1 else Known(choices=drops)
        splits = sorted({h.spec.split_batches for h in hyps})
        out["split_batches"] = Known(exact=splits[0]) if len(splits) == 1 else Known(choices=splits)
    else:
        out["max_steps"] = Known(exact=run.value("max_steps"))
    releases = sorted({r for h in hyps for r in h.releases}, key=Version.parse)
    out["transformers"] = releases_known(releases)
    first = tier(hyps[0])
    primary = [h for h in hyps if (tier(h), h.drop_last, h.spec.split_batches) == (first, hyps[0].drop_last, hyps[0].spec.split_batches)]
    main = sorted({r for h in primary for r in h.releases}, key=Version.parse)
    facts = [Finding("explain.fact.releases_" + ("epochs", "max_steps", "fraction")[first],
                     {"releases": summarize(main), "families": _families(primary), "drop_last": hyps[0].drop_last})]
    others = [h for h in hyps if h.family.name not in {p.family.name for p in primary}]
    if others:
        extra = sorted({r for h in others for r in h.releases}, key=Version.parse)
        facts.append(Finding("explain.fact.releases_other", {"releases": summarize(extra), "families": _families(others)}))
    inf.facts[:0] = facts


def _families(hyps: list[Hypothesis]) -> str:
    names: list[str] = []
    for h in hyps:
        if h.family.name not in names:
            names.append(h.family.name)
    return ", ".join(names)


def _union(ranges: list[Known]) -> Known:
    exact = [k.exact for k in ranges if k.is_exact]
    lows = [k.low for k in ranges if not k.is_exact] + exact
    highs = [k.high for k in ranges if not k.is_exact] + exact
    if len(set(lows + highs)) == 1:
        return Known(exact=lows[0])
    low = min(lows)
    return Known(low=low, high=max(highs), low_open=all(k.low_open for k in ranges if not k.is_exact and k.low == low))


# ---------------------------------------------------------------- packing, wrappers, trainer_state

def _preprocessing(inf: Inference, raw: int | None) -> None:
    run = inf.run
    n = run.value("num_examples")
    source = "user"
    if raw is None:
        for key in ("raw_examples", "raw_examples_converted"):
            if key in run.wrapper:
                raw, source = run.wrapper[key].value, key
                break
    if raw is None or n is None or run.value("num_epochs") == MAXSIZE:
        return
    params = {"raw": raw, "n": n, "line": run.wrapper[source].line if source in run.wrapper else None}
    if n < raw:
        packing = "packing_bar" in run.wrapper
        params["ratio"] = f"{raw / n:.2f}" if n else "-"
        inf.facts.append(Finding("explain.fact.packed" if packing else "explain.fact.fewer_rows", params, code="LOG_FEWER_EXAMPLES"))
    elif n > raw:
        inf.facts.append(Finding("explain.fact.more_rows", params, code="LOG_MORE_EXAMPLES"))
    else:
        inf.facts.append(Finding("explain.fact.same_rows", params))


def _wrappers(inf: Inference) -> None:
    run = inf.run
    if run.value("num_epochs") == MAXSIZE:
        total, m, n = run.value("total_batch"), run.value("max_steps"), run.value("num_examples")
        inf.facts.append(Finding("explain.fact.stream", {"m": m or 0, "total": total or 0, "n": n or 0}, code="LOG_STREAMING"))
    estimate = run.wrapper.get("axolotl_total_num_steps")
    if estimate is not None:
        same = estimate.value == run.value("max_steps")
        inf.facts.append(Finding("explain.fact.axolotl_used" if same else "explain.fact.axolotl_estimate",
                                 {"steps": estimate.value, "line": estimate.line, "m": run.value("max_steps") or 0},
                                 code="LOG_WRAPPER_ESTIMATE"))


def _infer_state(inf: Inference) -> None:
    run, out = inf.run, inf.inferred
    m, epochs, bs = run.value("max_steps"), run.value("num_epochs"), run.value("per_device_batch")
    if bs is not None:
        out["per_device_train_batch_size"] = Known(exact=bs)
    if m is not None:
        out["max_steps"] = Known(choices=[-1, m])
    if epochs is not None and epochs != MAXSIZE:
        out["num_train_epochs"] = Known(low=max(epochs - 1, 0), high=epochs, low_open=True)
        if m:
            high = math.ceil(m / (epochs - 1)) - 1 if epochs > 1 else m
            formula, numbers = ("ceil(M / E) .. ceil(M / (E - 1)) - 1", f"ceil({m} / {epochs}) .. ceil({m} / {epochs - 1}) - 1") \
                if epochs > 1 else ("ceil(M / E) .. M", f"ceil({m} / {epochs}) .. {m}")
            inf.derivation.add("num_update_steps_per_epoch", Known(low=math.ceil(m / epochs), high=high).text(), formula, numbers,
                               "explain.why.state_nupe")
    step, epoch = run.last_step, run.last_epoch
    if step is not None and m and step.value < m:
        inf.facts.append(Finding("explain.fact.state_short", {"step": step.value, "max_steps": m,
                                                              "epoch": format_value(epoch.value) if epoch else "?"},
                                 code="LOG_STOPPED_EARLY"))
    elif step is not None and m and epoch is not None and epochs and epoch.value < epochs - 1e-9 and epochs != MAXSIZE:
        inf.facts.append(Finding("explain.fact.state_epoch_short", {"epoch": format_value(epoch.value), "epochs": epochs, "m": m},
                                 code="HF_PLAN_LOOP_MISMATCH"))
    estimate = run.wrapper.get("state_steps_per_epoch")
    if estimate is not None:
        inf.facts.append(Finding("explain.fact.state_nupe", {"value": format_value(estimate.value)}))
