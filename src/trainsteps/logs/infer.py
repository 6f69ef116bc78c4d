"""From what a log says to the settings that produced it (pure: no I/O).

The search runs the plan engine (`trainsteps.plan`) on candidate settings — each release family x
drop_last x (epochs | max_steps | stream) — and keeps those whose banner prints exactly the observed
numbers and whose loop ends where the log shows it ended. Line numbers of the logger prefix,
banner lines present and the level of the max_steps notice narrow the releases first
(`frameworks/hf/log_lines.py`). What is left is reported as exact values, ranges or contradictions.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trainsteps.derivation import Derivation, format_value
from trainsteps.errors import TrainstepsError
from trainsteps.frameworks.hf.log_lines import all_releases, releases_for_lines
from trainsteps.frameworks.hf.release_dates import RELEASE_DATES
from trainsteps.frameworks.hf.releases import FAMILIES, OLDEST, Family
from trainsteps.logs.observed import Reading, RunObservation
from trainsteps.schedule import Schedule
from trainsteps.spec import RunSpec
from trainsteps.versions import Version

MAXSIZE = sys.maxsize
EPOCH_TOLERANCE = 0.0051  # progress lines print state.epoch rounded to 2 decimals in many releases
MAX_REPEAT = 64
REPLAY_EPOCHS = 2000
"""Above this many epochs a candidate is replayed only if the closed-form step count can print the banner's steps."""


@dataclass(slots=True)
class Known:
    """A setting as far as the log determines it: exact, a range, or one of a few values."""

    exact: Any = None
    low: Any = None
    high: Any = None
    choices: list | None = None
    low_open: bool = False
    """The range excludes `low` (e.g. epochs in (299.92, 300])."""

    @property
    def is_exact(self) -> bool:
        return self.choices is None and self.low is None and self.high is None

    def to_json(self):
        if self.choices is not None:
            return {"one_of": self.choices}
        if self.low is not None or self.high is not None:
            out = {"min": self.low, "max": self.high}
            if self.low_open:
                out["min_exclusive"] = True
            return out
        return self.exact

    def contains(self, value) -> bool:
        if self.choices is not None:
            return value in self.choices
        if self.low is not None or self.high is not None:
            if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
                return False
            return self.high is None or value <= self.high
        return value == self.exact

    def text(self) -> str:
        if self.choices is not None:
            return " | ".join(format_value(c) for c in self.choices)
        if self.low is not None or self.high is not None:
            left = "(" if self.low_open else "["
            return f"{left}{format_value(self.low) if self.low is not None else ''}, {format_value(self.high) if self.high is not None else '...'}]"
        return format_value(self.exact)


@dataclass(slots=True)
class Hypothesis:
    """One way the run could have been set up, checked against the log by running the engine."""

    family: Family
    version: str
    """The release the engine modelled (newest one the evidence allows within the family)."""
    releases: list[str]
    """Releases of this family the evidence allows."""
    drop_last: bool
    mode: str
    """`epochs` (num_train_epochs set), `max_steps` (max_steps > 0) or `stream` (no length)."""
    spec: RunSpec
    schedule: Schedule
    epochs: Known | None = None
    """num_train_epochs values that print the same banner (epochs mode)."""
    mismatches: list[str] = field(default_factory=list)
    """Observed keys the engine prints differently."""
    progress_mismatch: tuple[str, Any, Any] | None = None
    """(what, observed, predicted) when the loop would not stop where the log shows it stopped."""
    allowed: bool = True
    """The release evidence (line numbers, layout) allows this family."""

    @property
    def consistent(self) -> bool:
        return not self.mismatches and self.progress_mismatch is None


@dataclass(slots=True)
class Finding:
    """A sentence of the explanation: message id and its parameters."""

    msg_id: str
    params: dict = field(default_factory=dict)
    code: str | None = None


@dataclass(slots=True)
class Contradiction:
    what: Finding
    explanations: list[Finding] = field(default_factory=list)
    """Fitting explanations, most likely first."""


@dataclass(slots=True)
class Inference:
    run: RunObservation
    world_size: int | None = None
    releases: list[str] = field(default_factory=list)
    """Releases the non-arithmetic evidence allows (line numbers, banner layout, notice level)."""
    evidence: list[Finding] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    """Consistent hypotheses, best first."""
    rejected: list[Hypothesis] = field(default_factory=list)
    inferred: dict[str, Known] = field(default_factory=dict)
    facts: list[Finding] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    derivation: Derivation = field(default_factory=Derivation)
    stopped: str | None = None
    """`crashed` or `interrupted` when the log shows the run did not end on its own (kept for older readers: see status)."""
    status: str = "unknown"
    """How the run ended as the log shows it: `finished`, `crashed`, `interrupted`, `running` or `unknown`."""
    planned_end_step: int | None = None
    """The optimizer step the run was set to reach: the engine's last step for the inferred release (a loop that stops
    before max_steps included), else the planned total the log prints."""
    end_step: int | None = None
    """The optimizer step where the run ended: the crash, the interrupt or the finish as the log shows it (the
    engine's replay for a finished run whose log shows no step); None while it runs or when the log cannot tell."""
    timing: Any = None
    """logs.timing.Timing: the measured rate and the time left, when the log shows timing."""

    @property
    def best(self) -> Hypothesis | None:
        return self.hypotheses[0] if self.hypotheses else None


def infer(run: RunObservation, raw_examples: int | None = None) -> Inference:
    inf = Inference(run=run)
    if run.kind == "trainer_state":
        _infer_state(inf)
        _ending(inf)
        return inf
    if run.kind == "paddlenlp":
        inf.facts.append(Finding("explain.fact.paddlenlp", {"line": run.header_line or run.first_line or 1}, code="LOG_NOT_TRANSFORMERS"))
        _ending(inf)
        return inf
    _world_size(inf)
    _release_evidence(inf)
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


# ---------------------------------------------------------------- processes

def _world_size(inf: Inference) -> None:
    run, d = inf.run, inf.derivation
    bs, ga, total = run.value("per_device_batch"), run.value("grad_accum"), run.value("total_batch")
    loader_bs = run.value("dataparallel_batch") or bs
    if bs and ga and total:
        if total % (loader_bs * ga) == 0:
            inf.world_size = d.add("world_size", total // (loader_bs * ga), "total batch / (bs x GA)",
                                   f"{total:,} / ({loader_bs} x {ga})", "explain.why.world")
        else:
            inf.contradictions.append(Contradiction(
                Finding("explain.contra.total_batch", {"total": total, "bs": loader_bs, "ga": ga}),
                [Finding("explain.expl.damaged")] + ([Finding("explain.expl.tp_counted")] if total > loader_bs * ga else [])))
    ds = {k: run.wrapper[k].value for k in ("deepspeed_train_batch_size", "deepspeed_micro_batch", "deepspeed_grad_accum") if k in run.wrapper}
    if len(ds) == 3 and ds["deepspeed_micro_batch"] * ds["deepspeed_grad_accum"]:
        ds_world = ds["deepspeed_train_batch_size"] / (ds["deepspeed_micro_batch"] * ds["deepspeed_grad_accum"])
        if inf.world_size is None and ds_world == int(ds_world):
            inf.world_size = d.add("world_size", int(ds_world), "train_batch_size / (micro x GA)",
                                   f"{ds['deepspeed_train_batch_size']} / ({ds['deepspeed_micro_batch']} x {ds['deepspeed_grad_accum']})",
                                   "explain.why.world_deepspeed")
        elif ds_world != inf.world_size:
            inf.facts.append(Finding("explain.fact.deepspeed_differs", {"ds": format_value(ds_world), "world": inf.world_size}))
    framework = run.wrapper.get("framework_world")
    if inf.world_size is None and framework is not None and run.kind in ("progress", "wrapper"):
        inf.world_size = d.add("world_size", framework.value, "explain.source.megatron", "", "explain.why.world_megatron",
                               **at(framework, run))
        return
    if inf.world_size is None and run.kind in ("progress", "wrapper", "trainer_state"):
        _source_world(inf)
        return
    if inf.world_size is None:
        return
    stated = run.wrapper.get("stated_gpus")
    if stated is not None and stated.value != inf.world_size and "launcher_world" not in run.wrapper:
        inf.facts.append(Finding("explain.fact.stated_gpus_differ", {"world": inf.world_size, "stated": stated.value,
                                                                    "where": where(stated, run)}))
    for key in ("unsloth_num_gpus", "launcher_world", "devices_hint"):
        hint = run.wrapper.get(key)
        if hint is None or hint.value == inf.world_size:
            continue
        if key == "devices_hint" and inf.world_size > hint.value and inf.world_size % hint.value == 0:
            # processes per node: the run spans world / per-node nodes
            inf.facts.append(Finding("explain.fact.nodes", {"world": inf.world_size, "per_node": hint.value,
                                                            "nodes": inf.world_size // hint.value, "line": hint.line}))
            break
        inf.facts.append(Finding("explain.fact.gpus_differ", {"world": inf.world_size, "expected": hint.value, "line": hint.line},
                                 code="LOG_PROCESSES_DIFFER"))
        break
    visible = run.wrapper.get("visible_devices")
    if visible is not None and visible.value != inf.world_size:
        inf.facts.append(Finding("explain.fact.visible_devices", {"world": inf.world_size, "visible": visible.value, "line": visible.line}))


def _launched(run: RunObservation) -> Reading | None:
    """The processes the launcher started: its own count, or `NNODES=2` times the GPUs per node stated elsewhere
    (`8 A100 each`) or visible on the node (CUDA_VISIBLE_DEVICES)."""
    launcher = run.wrapper.get("launcher_world") or run.wrapper.get("unsloth_num_gpus")
    nodes = run.wrapper.get("launcher_nodes")
    if launcher is not None or nodes is None:
        return launcher
    per_node = run.wrapper.get("stated_gpus_per_node") or run.wrapper.get("visible_devices")
    if per_node is None:
        return None
    return Reading(nodes.value * per_node.value, nodes.line, nodes.text, file=nodes.file, note="explain.note.nodes_times",
                   note_params={"nodes": nodes.value, "per_node": per_node.value})


def _card_world(inf: Inference) -> tuple[int, Reading] | None:
    """The processes a Trainer model card beside the log records: num_devices, else total / (batch x GA)."""
    run, d = inf.run, inf.derivation
    card = {k[5:]: r.value for k, r in run.wrapper.items() if k.startswith("card_")}
    bs, ga, total = card.get("train_batch_size"), card.get("gradient_accumulation_steps"), card.get("total_train_batch_size")
    if "num_devices" in card:
        reading = run.wrapper["card_num_devices"]
        return d.add("world_size", card["num_devices"], "explain.source.card", "", "explain.why.world_card", **at(reading, run)), reading
    if bs and ga and total and total % (bs * ga) == 0:
        reading = run.wrapper["card_total_train_batch_size"]
        return d.add("world_size", total // (bs * ga), "explain.source.card_total",
                     f"{total:,} / ({bs} x {ga})", "explain.why.world_card"), reading
    return None


def _source_world(inf: Inference) -> None:
    """No banner: the processes from the best source beside the log, strongest first: a Trainer model card (what the
    Trainer ran), an accelerate config, a launcher line, `GPU number` of an environment report or a launcher's
    processes per node (one node assumed), the GPUs the text states. Every other source that counts otherwise is
    reported, never silently overruled."""
    run, d = inf.run, inf.derivation
    card = _card_world(inf)
    launcher, configured = _launched(run), run.wrapper.get("configured_world")
    chosen: Reading | None = None
    if card is not None:
        inf.world_size, chosen = card
        name = "explain.source.model_card"
    elif configured is not None:
        inf.world_size = d.add("world_size", configured.value, "explain.source.accelerate", "", "explain.why.world_configured",
                               **at(configured, run))
        chosen, name = configured, "explain.source.accelerate"
        if launcher is not None and launcher.value < configured.value:
            # each node's launcher saw only its own processes: the nodes never joined one job (accelerate#1867)
            inf.facts.append(Finding("explain.fact.launcher_saw_fewer", {"configured": configured.value, "seen": launcher.value,
                                                                         "where": where(launcher, run)}, code="LOG_PROCESSES_DIFFER"))
            launcher = None
    elif launcher is not None:
        if launcher.note == "explain.note.nodes_times":
            inf.world_size = d.add("world_size", launcher.value, "explain.source.nodes_times",
                                   f"{launcher.note_params['nodes']} x {launcher.note_params['per_node']}", "explain.why.world_launcher")
        else:
            inf.world_size = d.add("world_size", launcher.value, "explain.source.launcher", "", "explain.why.world_launcher",
                                   **at(launcher, run))
        chosen, name = launcher, "explain.source.launcher"
    elif "devices_hint" in run.wrapper:
        chosen = run.wrapper["devices_hint"]
        inf.world_size = d.add("world_size", chosen.value, "explain.source.one_node", "", "explain.why.world_one_node", **at(chosen, run))
        name = "explain.source.one_node"
    elif "stated_gpus" in run.wrapper:
        chosen = run.wrapper["stated_gpus"]
        inf.world_size = d.add("world_size", chosen.value, "explain.source.stated", "", "explain.why.world_stated",
                               text=chosen.text[:80], **at(chosen, run))
        name = "explain.source.stated"
    if chosen is None:
        return
    others = (("explain.source.launcher", launcher), ("explain.source.stated", run.wrapper.get("stated_gpus")))
    for other, reading in others:
        if other == name or reading is None or reading.value == inf.world_size or reading is chosen:
            continue
        if other == "explain.source.stated" and launcher is not None and name != "explain.source.launcher" \
                and launcher.value == reading.value:
            continue  # the same count as the launcher's: one disagreement, said once
        inf.contradictions.append(Contradiction(
            Finding("explain.contra.sources_differ", {"other": other, "value": reading.value, "where": where(reading, run),
                                                     "chosen": name, "world": inf.world_size}),
            [Finding("explain.expl.sources_rank")]))
    _stated_among_themselves(inf)


def _stated_among_themselves(inf: Inference) -> None:
    """Two sentences of the words around a log that count the GPUs otherwise (`两台机器每台8张卡`, `gpu数量为8`)."""
    run = inf.run
    first, also = run.wrapper.get("stated_gpus"), run.wrapper.get("stated_gpus_also")
    if first is not None and also is not None and first.value != also.value:
        inf.facts.append(Finding("explain.fact.stated_counts_differ", {"first": first.value, "where": where(first, run),
                                                                      "other": also.value, "other_where": where(also, run)}))


def at(reading: Reading, run: RunObservation) -> dict:
    """Where a number was read, as parameters of its derivation step (rendered in the reader's language)."""
    other = run.elsewhere(reading)
    return {"at_line": reading.line, "at_file": Path(other).name} if other else {"at_line": reading.line}


def where(reading: Reading, run: RunObservation) -> Finding:
    """`line 12`, or `README.md line 12` for a number read in another file than the run's, in the reader's language."""
    other = run.elsewhere(reading)
    if other:
        return Finding("explain.at_file_line", {"file": Path(other).name, "line": reading.line})
    return Finding("explain.at_line", {"line": reading.line})


# ---------------------------------------------------------------- releases from the text of the log

def _predates_the_oldest_release(inf: Inference, releases: list[str]) -> list[str]:
    """A banner stamped before the oldest modelled release came out was printed by an older one: the replay uses the
    oldest rules trainsteps has (the nearest to it), and says so."""
    oldest = str(OLDEST)
    date = inf.run.header_date
    if date is None or date >= RELEASE_DATES[oldest]:
        return releases
    nearest = [r for r in releases if family_of(r) is family_of(oldest)]
    inf.evidence.append(Finding("explain.ev.predates_releases" if nearest else "explain.ev.predates_releases_unfit",
                                {"date": date, "oldest": oldest, "released": RELEASE_DATES[oldest]}))
    return nearest or releases


def _release_evidence(inf: Inference) -> None:
    run = inf.run
    releases = all_releases()
    lines = run.source_lines()
    if lines:
        by_lines = releases_for_lines(lines)
        if by_lines:
            releases = by_lines
            inf.evidence.append(Finding("explain.ev.lines", {"lines": _line_span(lines), "releases": summarize(by_lines)}))
        else:
            inf.evidence.append(Finding("explain.ev.lines_unknown", {"lines": _line_span(lines)}))
    if run.kind == "hf" and "update_steps_per_epoch" in run.banner:
        releases = [r for r in releases if Version.parse(r) >= Version(5, 3, 0)]
        inf.evidence.append(Finding("explain.ev.upe_line", {}))
    elif run.kind == "hf" and _adjacent(run.banner_order, "num_epochs", "per_device_batch"):
        releases = [r for r in releases if Version.parse(r) < Version(5, 3, 0)]
        inf.evidence.append(Finding("explain.ev.no_upe_line", {}))
    if run.kind == "hf" and "dataparallel_batch" in run.banner:
        releases = [r for r in releases if Version.parse(r) >= Version(4, 31, 0)]
        inf.evidence.append(Finding("explain.ev.dataparallel", {}))
    level = run.level_of_max_steps_notice
    if level in ("WARNING", "WARN"):
        releases = [r for r in releases if Version(4, 40, 0) <= Version.parse(r) < Version(4, 47, 0)]
        inf.evidence.append(Finding("explain.ev.notice_warning", {}))
    elif level == "INFO":
        releases = [r for r in releases if not Version(4, 40, 0) <= Version.parse(r) < Version(4, 47, 0)]
        inf.evidence.append(Finding("explain.ev.notice_info", {}))
    releases = _predates_the_oldest_release(inf, releases)
    printed = run.transformers_version
    if printed is not None:
        releases = _pin(inf, releases, str(printed.value), where(printed, run))
    inf.releases = releases


def _pin(inf: Inference, releases: list[str], printed: str, line: Finding) -> list[str]:
    """A release printed in the log outranks every guess: keep it (or the releases of its family when the table does
    not list it), unless the banner's own evidence rules it out, which is reported."""
    try:
        version = Version.parse(printed)
        family = family_of(printed)
    except (ValueError, KeyError):
        return releases
    if printed in releases:
        inf.evidence.append(Finding("explain.ev.printed_version", {"version": printed, "line": line}))
        return [printed]
    same_family = [r for r in releases if family_of(r) is family]
    if printed in all_releases() or not same_family:
        inf.evidence.append(Finding("explain.ev.printed_version_conflict", {"version": printed, "line": line,
                                                                           "releases": summarize(releases)}))
        return releases
    near = [r for r in same_family if Version.parse(r).major == version.major and Version.parse(r).minor == version.minor] or same_family
    inf.evidence.append(Finding("explain.ev.printed_version_family", {"version": printed, "line": line, "family": family.name,
                                                                     "releases": summarize(near)}))
    return near


def _adjacent(order: list[str], first: str, second: str) -> bool:
    return any(a == first and b == second for a, b in zip(order, order[1:], strict=False))


def _line_span(lines: dict[str, int]) -> str:
    values = sorted(set(lines.values()))
    return f"{values[0]}" if len(values) == 1 else f"{values[0]}-{values[-1]}"


def summarize(releases: list[str]) -> str:
    """`4.42.0-4.42.4`, or `4.50.0-4.50.3, 4.52.1-4.52.4` when the set has holes."""
    if not releases:
        return "-"
    known = all_releases()
    index = {r: i for i, r in enumerate(known)}
    ordered = sorted(set(releases), key=lambda r: index.get(r, -1))
    groups: list[list[str]] = [[ordered[0]]]
    for r in ordered[1:]:
        if index.get(r, -9) == index.get(groups[-1][-1], -9) + 1:
            groups[-1].append(r)
        else:
            groups.append([r])
    return ", ".join(g[0] if len(g) == 1 else f"{g[0]}-{g[-1]}" for g in groups)


def releases_known(releases: list[str]) -> Known:
    """One release, a contiguous run of releases as {min, max}, or the list when it has holes."""
    if len(releases) == 1:
        return Known(exact=releases[0])
    known = all_releases()
    positions = sorted(known.index(r) for r in releases if r in known)
    if positions and positions[-1] - positions[0] + 1 == len(positions):
        return Known(low=known[positions[0]], high=known[positions[-1]])
    return Known(choices=sorted(releases, key=Version.parse))


def family_of(version: str) -> Family:
    return FAMILIES.at(version)


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
        version = allowed[-1] if allowed else _newest_of(family)
        for drop_last in (False,) if stream else (False, True):
            for mode in modes:
                hyp = _hypothesis(inf, family, version, allowed, drop_last, mode, n, bs, ga, world, epochs, max_steps)
                if hyp is not None:
                    candidates.append(hyp)
    if modes == ["epochs"] and not any(h.consistent and h.allowed for h in candidates) and max_steps:
        for _, family in FAMILIES.entries:
            allowed = [r for r in inf.releases if family_of(r) is family]
            version = allowed[-1] if allowed else _newest_of(family)
            for drop_last in (False, True):
                hyp = _hypothesis(inf, family, version, allowed, drop_last, "max_steps", n, bs, ga, world, epochs, max_steps)
                if hyp is not None:
                    candidates.append(hyp)
    _rank(inf, candidates)
    if not inf.hypotheses and world > 1 and bs % world == 0 and not stream:
        # accelerate split_batches: each loader batch is cut across the processes
        for _, family in FAMILIES.entries:
            allowed = [r for r in inf.releases if family_of(r) is family]
            version = allowed[-1] if allowed else _newest_of(family)
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


def _newest_of(family: Family) -> str:
    return [r for r in all_releases() if family_of(r) is family][-1]




def _plan(spec: RunSpec) -> Schedule | None:
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


def launcher_facts(inf: Inference) -> None:
    """DeepSpeed's batch assertion (what DeepSpeed saw against what was launched) and its pipeline CONFIG line."""
    run = inf.run
    keys = ("deepspeed_assert_train_batch", "deepspeed_assert_micro", "deepspeed_assert_ga", "deepspeed_assert_world")
    if all(k in run.wrapper for k in keys):
        tb, mb, ga, dp = (run.wrapper[k].value for k in keys)
        launched = run.wrapper.get("launcher_world")
        extra = {"launched": ""}
        if launched is not None and launched.value != dp:
            extra = {"launched": Finding("explain.fact.deepspeed_assert_launched", {"world": launched.value})}
        inf.facts.append(Finding("explain.fact.deepspeed_assert", {"tb": tb, "mb": mb, "ga": ga, "dp": dp, "product": mb * ga * dp, **extra},
                                 code="LOG_DEEPSPEED_BATCH"))
    if "pipeline_micro_batches" in run.wrapper and "pipeline_micro_batch_size" in run.wrapper:
        mb, size = run.wrapper["pipeline_micro_batches"], run.wrapper["pipeline_micro_batch_size"]
        inf.facts.append(Finding("explain.fact.pipeline", {"mb": mb.value, "size": size.value, "product": mb.value * size.value, "line": mb.line}))


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
