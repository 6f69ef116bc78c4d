"""The explanation of a log: a step-by-step account in English or Chinese, and the JSON form.

All words come from the i18n catalogs (`explain.*` ids); the numbers come from the
inference (`infer.py`) and from the plan engine's own Derivation for the inferred settings.
"""

from __future__ import annotations

import sys

from trainsteps.derivation import format_epochs, render_step
from trainsteps.i18n import label, message
from trainsteps.logs.infer import Finding, Hypothesis, Inference, infer
from trainsteps.logs.observed import LogObservations, RunObservation
from trainsteps.report import display_width, pad

# Engine derivation steps worth showing in the account (the rest is in --format json).
ACCOUNT_KEYS = ("rows_per_rank", "global_batches", "batches_per_epoch", "num_update_steps_per_epoch", "max_steps",
                "num_train_epochs", "num_examples")
BANNER_LABELS = {
    "num_examples": "Num examples", "num_epochs": "Num Epochs", "update_steps_per_epoch": "Num update steps per epoch",
    "per_device_batch": "Instantaneous batch size per device", "dataparallel_batch": "DataParallel batch",
    "total_batch": "Total train batch size", "grad_accum": "Gradient Accumulation steps",
    "max_steps": "Total optimization steps", "trainable_parameters": "Number of trainable parameters",
}


def explain_log(obs: LogObservations, raw_examples: int | None = None, hardware=None) -> list[Inference]:
    inferences = [infer(run, raw_examples) for run in without_quotes(obs.runs)]
    if hardware is not None:
        from trainsteps.logs.timing import implied_mfu

        for inf in inferences:
            if inf.timing is not None:
                implied_mfu(inf.timing, hardware, _samples_per_step(inf), inf.world_size, inf.run.progress.reported_mfu)
    return inferences


def _samples_per_step(inf: Inference) -> int | None:
    """Rows per optimizer step over all processes: the banner's total batch, or bs x GA x processes printed."""
    total = inf.run.value("total_batch")
    if total:
        return total
    settings = inf.run.settings
    bs, ga = settings.get("per_device_train_batch_size"), settings.get("gradient_accumulation_steps")
    if bs is not None and inf.world_size:
        return int(bs.value) * int(ga.value if ga is not None else 1) * inf.world_size
    return None


def without_quotes(runs: list) -> list:
    """Drop banner fragments that only repeat numbers of a fuller banner in the same text (a blog post or an issue
    quoting "Total optimization steps = 3,900" in its prose), and note them on the banner they quote."""
    kept, quoted = [], {}
    fullest = max(runs, key=lambda r: len(r.banner), default=None)
    banners = _BannerIndex(runs)
    for run in runs:
        if run.kind == "hf" and not run.banner and fullest is not None and fullest.banner:
            source = fullest  # a label with no number (prose): nothing of its own to explain
        else:
            source = banners.quoted(run)
        if source is None:
            kept.append(run)
        else:
            quoted.setdefault(id(source), []).append(_first_line(run))
    for run in kept:
        lines = quoted.get(id(run))
        if lines:
            run.notes.append(("explain.note.quotes", {"count": len(lines), "lines": ", ".join(str(n) for n in lines)}))
    return kept


class _BannerIndex:
    """The runs' banners by their values, so that finding the banner a fragment quotes costs the banners sharing one of
    its values, not every run: a text repeating one fragment 10,000 times is read in linear time."""

    def __init__(self, runs: list):
        self.first: dict[tuple, object] = {}  # a banner (kind and values) -> its first run
        self.holding: dict[tuple, list[tuple]] = {}  # (kind, key, value) -> the banners holding it, in run order
        for run in runs:
            banner = _banner_of(run)
            if banner is not None and banner not in self.first:
                self.first[banner] = run
                for key, value in banner[1]:
                    self.holding.setdefault((run.kind, key, value), []).append(banner)
        self.answers: dict[tuple, object] = {}

    def quoted(self, run):
        """The first run whose banner holds more values than `run`'s, each of `run`'s among them; None if `run` has a
        header or no banner."""
        if run.header_line or not run.banner:
            return None
        banner = _banner_of(run)
        if banner is None:
            return None
        if banner not in self.answers:
            wanted = banner[1]
            postings = min((self.holding.get((run.kind, key, value), ()) for key, value in wanted), key=len)
            # the postings are in the order of the runs, so the first fuller banner is the one the fragment quotes
            self.answers[banner] = next((self.first[other] for other in postings if len(other[1]) > len(wanted) and wanted <= other[1]), None)
        return self.answers[banner]


def _banner_of(run) -> tuple | None:
    try:
        return run.kind, frozenset((key, reading.value) for key, reading in run.banner.items())
    except TypeError:  # an unhashable value: never quoted, never quotes
        return None


def say(f: Finding, lang: str) -> str:
    return message(f.msg_id, lang, **_localized(f.params, lang))


def _localized(params: dict, lang: str) -> dict:
    """Durations and message ids inside parameters, rendered in the reader's language."""
    durations = sys.modules.get("trainsteps.timing.durations")  # a log read without timing never loads (nor says) a duration
    spoken = durations.Spoken if durations is not None else ()
    out = {}
    for key, value in params.items():
        if isinstance(value, spoken):
            value = format(value, lang)
        elif isinstance(value, Finding):
            value = say(value, lang)
        elif isinstance(value, str) and value.startswith(("explain.reason.", "explain.source.")):
            value = label(value, lang)
        out[key] = value
    return out


def shown_name(name: str, lang: str) -> str:
    """`-` is stdin, --text input is "pasted text"; files keep their path."""
    from trainsteps.logs.reader import PASTED

    if name == PASTED:
        return label("explain.pasted_text", lang)
    if name == "-":
        return label("explain.stdin", lang)
    return name


# ---------------------------------------------------------------- human text

def render(obs: LogObservations, inferences: list[Inference], lang: str = "en") -> str:
    out = [message("explain.summary", lang, runs=len(inferences), lines=obs.lines_read,
                   files=", ".join(shown_name(f, lang) for f in obs.files) or "-")]
    answer = answer_of(inferences, lang)
    if answer is not None:  # the answer to what the poster asks comes first; what was read follows
        out.insert(0, answer)
    for i, inf in enumerate(inferences, 1):
        out.append("")
        out += render_run(inf, i, len(inferences), lang)
    return "\n".join(out)


def answer_of(inferences: list[Inference], lang: str = "en") -> str | None:
    """The report's first line: the last run's answer (logs/headline.py), naming the run when the log holds several."""
    from trainsteps.logs import headline

    for index in range(len(inferences), 0, -1):
        line = headline.for_run(inferences[index - 1], lang)
        if line is not None:
            return line if len(inferences) == 1 else message("explain.head.of_run", lang, index=index, count=len(inferences), answer=line)
    return None


def render_run(inf: Inference, index: int, count: int, lang: str) -> list[str]:
    run = inf.run
    out = [message("explain.run_title", lang, index=index, count=count, kind=label("explain.kind." + run.kind, lang),
                   file=shown_name(run.file, lang), line=run.header_line or _first_line(run))]
    if count > 1:  # several runs in one file: each one's own answer under its title
        from trainsteps.logs import headline

        answer = headline.for_run(inf, lang)
        if answer is not None:
            out.append("  = " + answer)
    out.append(label("explain.section.read", lang))
    out += _read_lines(run, lang)
    for msg_id, params in run.notes:
        out.append("  ! " + message(msg_id, lang, **params))
    steps = _account(inf, lang)
    if steps:  # no heading over nothing (a run with no steps to account for)
        out.append(label("explain.section.steps", lang))
        out += [f"  {n}. {text}" for n, text in enumerate(steps, 1)]
    if inf.facts:
        out.append(label("explain.section.facts", lang))
        out += ["  - " + say(f, lang) for f in inf.facts]
    if inf.timing is not None:
        out.append(label("explain.section.timing", lang))
        out += _timing_lines(inf, lang)
    best = inf.best
    if best is not None:
        warnings = _consequences(inf, lang)
        if warnings:
            out.append(label("explain.section.consequences", lang))
            out += warnings
        alternatives = _alternatives(inf, lang)
        if alternatives:
            out.append(label("explain.section.alternatives", lang))
            out += alternatives
    if inf.inferred:
        out.append(label("explain.section.settings", lang))
        width = max(display_width(k) for k in inf.inferred)
        out += [f"  {pad(k, width)}  {_setting_text(k, v)}" for k, v in inf.inferred.items()]
    out.append(label("explain.section.contradictions", lang))
    if not inf.contradictions:
        out.append("  " + label("none", lang))
    for c in inf.contradictions:
        out.append("  x " + say(c.what, lang))
        out += [f"     {n}) {say(e, lang)}" for n, e in enumerate(c.explanations, 1)]
    return out


def _setting_text(key: str, known) -> str:
    if key == "transformers" and known.choices:
        from trainsteps.logs.infer import summarize

        return summarize(known.choices)
    return known.text()


def _first_line(run: RunObservation) -> int:
    """The first input line of a run in its own file (never 0: a run always has a line it was read from); numbers lent
    by another file of the run (a model card, a launch script) count lines of that file."""
    if any(msg_id == "explain.note.counter_fell_back" for msg_id, _ in run.notes):
        return run.first_line  # it begins where its counter fell back: the numbers before are the earlier run's
    lines = [r.line for r in run.banner.values()] or [r.line for r in run.wrapper.values() if not run.elsewhere(r)]
    return min(lines, default=0) or run.first_line or 1


def _timing_lines(inf: Inference, lang: str) -> list[str]:
    t = inf.timing
    rate = t.per_step
    out = ["  " + message("explain.time.rate", lang, expected=_secs(rate.expected), low=_secs(rate.low), high=_secs(rate.high),
                          source=label("explain.time.source." + _source_key(t), lang), line=t.line, samples=t.samples)]
    if t.elapsed_seconds is not None:
        out.append("  " + message("explain.time.elapsed", lang, elapsed=_dur(t.elapsed_seconds, lang), step=f"{t.at_step:,}"))
    if t.remaining is not None:
        r = t.remaining
        out.append("  " + message("explain.time.remaining", lang, expected=_dur(r.expected, lang), low=_dur(r.low, lang),
                                  high=_dur(r.high, lang), seconds=f"{r.expected:,.0f}", steps=f"{(t.end_step or 0) - t.at_step:,}",
                                  end=f"{t.end_step:,}" if t.end_step else "?"))
        if t.evals_left:
            out.append("  " + message("explain.time.evals", lang, evals=t.evals_left, each=_dur(t.eval_seconds, lang)))
    if t.total is not None and t.remaining is not None:
        out.append("  " + message("explain.time.total", lang, expected=_dur(t.total.expected, lang), low=_dur(t.total.low, lang),
                                  high=_dur(t.total.high, lang)))
    if t.verdict is not None:
        out.append("  " + say(Finding(t.verdict[0], t.verdict[1]), lang))
    if t.mfu_verdict is not None:
        out.append("  " + say(Finding(t.mfu_verdict[0], t.mfu_verdict[1]), lang))
    if t.framework_mfu is not None:
        out.append("  " + say(Finding(t.framework_mfu[0], t.framework_mfu[1]), lang))
    return out


def _source_key(t) -> str:
    """One elapsed_time reading gives no interval: its rate is that reading's elapsed time over its step."""
    return "elapsed_one" if t.source == "elapsed" and t.samples <= 1 else t.source


def _secs(value: float) -> str:
    return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 100 else f"{value:,.0f}"


def _dur(value: float | None, lang: str) -> str:
    from trainsteps.logs.timing import duration

    return duration(value, lang)


def _where(reading, run: RunObservation, lang: str) -> str:
    """`line 12`, naming the file when the number was read in another file than the run's (a model card, a script)."""
    where = message("explain.at_line", lang, line=reading.line)
    other = run.elsewhere(reading)
    if other:
        where = f"{shown_name(other, lang)}{'：' if lang == 'zh' else ': '}{where}"
    if reading.note and reading.note.startswith("explain."):
        where += ("；" if lang == "zh" else "; ") + message(reading.note, lang, **reading.note_params)
    return where


def _read_lines(run: RunObservation, lang: str) -> list[str]:
    rows = []
    for key in run.banner_order or run.banner:
        reading = run.banner.get(key)
        if reading is None:
            continue
        name = BANNER_LABELS.get(key, key)
        text = f"  {name} = {reading.value:,}" if isinstance(reading.value, int) else f"  {name} = {reading.value}"
        where = message("explain.at_line", lang, line=reading.line)
        if reading.source_line is not None:
            where += f"（trainer.py:{reading.source_line}）" if lang == "zh" else f" (trainer.py:{reading.source_line})"
        if reading.note:
            where += ("；" if lang == "zh" else "; ") + message(reading.note, lang, **reading.note_params)
        rows.append((text, where))
    for key, reading in run.wrapper.items():
        rows.append((f"  {label('explain.wrapper.' + key, lang)} = {reading.value:,}" if isinstance(reading.value, int)
                     else f"  {label('explain.wrapper.' + key, lang)} = {reading.value}", _where(reading, run, lang)))
    if run.transformers_version is not None:
        rows.append((f"  {label('explain.printed_version', lang)} = {run.transformers_version.value}",
                     _where(run.transformers_version, run, lang)))
    for key, reading in run.settings.items():
        rows.append((f"  {key} = {reading.value}", message("explain.at_line", lang, line=reading.line)))
    if run.copies:
        rows.append((f"  {message('explain.copies', lang, copies=run.copies)}", ""))
    if run.last_step is not None:
        rows.append((f"  {label('explain.last_step', lang)} = {run.last_step.value:,}", message("explain.at_line", lang, line=run.last_step.line)))
    if run.last_epoch is not None:
        rows.append((f"  {label('explain.last_epoch', lang)} = {run.last_epoch.value:g}", message("explain.at_line", lang, line=run.last_epoch.line)))
    if run.finished:
        if "lightning_fit_stopped" in run.wrapper:
            rows.append((f"  {label('explain.finished_lightning', lang)}", ""))
        elif run.finished_by is not None:  # named by its evidence: the line that ended it
            rows.append((f"  {label('explain.finished_by.' + run.finished_by[0], lang)}",
                         message("explain.at_line", lang, line=run.finished_by[1])))
        else:
            rows.append((f"  {label('explain.finished', lang)}", ""))
    width = max((display_width(t) for t, _ in rows), default=0)
    return [f"{pad(t, width)}  {w}".rstrip() for t, w in rows]


def _account(inf: Inference, lang: str) -> list[str]:
    steps = inf.derivation.render(lang)
    steps += [say(e, lang) for e in inf.evidence]
    best = inf.best
    if best is None:
        return steps
    steps += [render_step(step, lang) for step in best.schedule.derivation if step.key in ACCOUNT_KEYS]
    shortcut = _shortcut(inf)
    if shortcut is not None:
        steps.append(message(shortcut[0], lang, **shortcut[1]))
    m = inf.run.value("max_steps")
    if m is not None:
        steps.append(message("explain.check", lang, value=f"{m:,}"))
    contrast = _contrast(inf)
    if contrast is not None:
        steps.append(message("explain.contrast", lang, **contrast))
    return steps


def _shortcut(inf: Inference) -> tuple[str, dict] | None:
    """The by-hand shortcut N / total batch per epoch, and why the Trainer's count differs (or agrees by chance)."""
    run, best = inf.run, inf.best
    n, total, epochs = run.value("num_examples"), run.value("total_batch"), run.value("num_epochs")
    d = best.schedule.derivation
    if not (n and total and epochs) or best.mode != "epochs" or "batches_per_epoch" not in d or best.spec.split_batches:
        return None
    nupe = _nupe_of(best)
    short = n // total
    params = {"n": f"{n:,}", "total": f"{total:,}", "short": f"{short:,}", "nupe": nupe, "L": f"{d['batches_per_epoch'].value:,}",
              "ga": best.spec.gradient_accumulation_steps, "rule": best.family.rounding}
    return ("explain.shortcut_agrees" if short == nupe else "explain.shortcut_differs"), params


def _contrast(inf: Inference) -> dict | None:
    """What a release of the other rounding (floor before 4.52, ceil after) prints for the same settings."""
    from trainsteps.frameworks.hf.releases import representative_releases, rules_for
    from trainsteps.logs.infer import _nupe, _plan
    from trainsteps.record import replace

    best = inf.best
    if best.mode != "epochs":
        return None
    order = representative_releases()
    for version in (order if best.family.rounding == "floor" else list(reversed(order))):
        rules = rules_for(version)
        if rules.family.rounding != best.family.rounding:
            other = _plan(replace(best.spec, transformers=str(version), resume_from_step=None))
            if other is None or other.run.max_steps == best.schedule.run.max_steps:
                return None
            return {"family": rules.family.name, "value": other.banner.get("Total optimization steps", "?"),
                    "rounding": rules.family.rounding, "nupe": _nupe(other), "best_nupe": _nupe_of(best)}
    return None


def _nupe_of(h: Hypothesis):
    d = h.schedule.derivation
    return d["num_update_steps_per_epoch"].value if "num_update_steps_per_epoch" in d else "?"


def _consequences(inf: Inference, lang: str) -> list[str]:
    lines, seen = [], set()
    best = inf.best
    for h in inf.hypotheses:
        if (h.drop_last, h.mode) != (best.drop_last, best.mode):
            continue
        for trap in h.schedule.warnings:
            text = trap.message(lang)
            if text not in seen:
                seen.add(text)
                lines.append(f"  [{trap.code}] {text}")
    r = best.schedule.run
    lines.append("  " + message("explain.run_facts_planned" if inf.stopped else "explain.run_facts", lang, steps=f"{r.optimizer_steps:,}", max_steps=f"{r.max_steps:,}",
                                  epochs=format_epochs(r.epochs_completed),
                                  samples="?" if r.samples_seen is None else f"{r.samples_seen:,}", version=best.version))
    return lines


def _alternatives(inf: Inference, lang: str) -> list[str]:
    """Other consistent explanations; those that end the same way are one line listing their families."""
    best = inf.best
    groups: dict[tuple, list[str]] = {}
    for h in inf.hypotheses[1:]:
        if h.family is best.family and (h.drop_last, h.mode) == (best.drop_last, best.mode):
            continue
        r = h.schedule.run
        key = (h.drop_last, h.mode, r.optimizer_steps, r.epochs_completed, tuple(t.code for t in h.schedule.warnings))
        groups.setdefault(key, []).append(h.family.name)
    out = []
    for (drop_last, mode, steps, epochs, codes), families in groups.items():
        out.append("  - " + message("explain.alternative", lang, family=", ".join(families), drop_last=drop_last,
                                    mode=label("explain.mode." + mode, lang), steps=f"{steps:,}",
                                    epochs=format_epochs(epochs),
                                    warnings=", ".join(codes) or label("none", lang)))
    return out[:8]


# ---------------------------------------------------------------- JSON

def to_json(obs: LogObservations, inferences: list[Inference], lang: str = "en") -> dict:
    from trainsteps.logs.explain_json import envelope

    runs = [run_json(inf, lang) for inf in inferences]
    legacy: dict = {}
    primary = next((r for r in reversed(runs) if r["observed"]["banner"]), runs[-1] if runs else None)
    if primary is not None:
        for key in ("observed", "inferred", "run", "contradictions", "derivation", "facts", "evidence", "hypotheses"):
            legacy[key] = primary[key]
    return envelope("runs", answer_of(inferences, lang), obs, runs=runs, legacy=legacy)


def _time_json(inf: Inference, lang: str) -> dict | None:
    t = inf.timing
    if t is None:
        return None
    out = t.to_dict()
    out["verdict"] = None if t.verdict is None else {"id": t.verdict[0], "text": say(Finding(t.verdict[0], t.verdict[1]), lang)}
    out["mfu_verdict"] = None if t.mfu_verdict is None else {"id": t.mfu_verdict[0],
                                                             "text": say(Finding(t.mfu_verdict[0], t.mfu_verdict[1]), lang)}
    out["framework_mfu"] = None if t.framework_mfu is None else {
        "id": t.framework_mfu[0], "text": say(Finding(t.framework_mfu[0], t.framework_mfu[1]), lang)}
    return out


def _answer_json(inf: Inference, lang: str) -> str | None:
    from trainsteps.logs import headline

    return headline.for_run(inf, lang)


def run_json(inf: Inference, lang: str) -> dict:
    observed = inf.run.to_dict()
    observed["notes"] = [message(m, lang, **p) for m, p in inf.run.notes]
    best = inf.best
    run = None
    derivation = inf.derivation.to_list(lang)
    if best is not None:
        data = best.schedule.to_dict(lang)
        run = {"version": data["version"], "family": data["family"], **data["run"], "warnings": data["warnings"]}
        derivation += data["derivation"]
    return {
        "observed": observed,
        "inferred": {k: v.to_json() for k, v in inf.inferred.items()},
        "run": run,
        "contradictions": [{"what": say(c.what, lang), "id": c.what.msg_id,
                            "explanations": [{"id": e.msg_id, "text": say(e, lang)} for e in c.explanations]}
                           for c in inf.contradictions],
        "derivation": derivation,
        "evidence": [{"id": e.msg_id, "text": say(e, lang)} for e in inf.evidence],
        "answer": _answer_json(inf, lang),
        "status": inf.status,
        "stopped": inf.stopped,
        "end_step": inf.end_step,
        "planned_end_step": inf.planned_end_step,
        "time": _time_json(inf, lang),
        "facts": [{"id": f.msg_id, "code": f.code, "text": say(f, lang)} for f in inf.facts],
        "hypotheses": [{"family": h.family.name, "version": h.version, "releases": h.releases, "dataloader_drop_last": h.drop_last,
                        "mode": h.mode, "num_train_epochs": h.epochs.to_json() if h.epochs else None,
                        "optimizer_steps": h.schedule.run.optimizer_steps, "epochs_completed": h.schedule.run.epochs_completed,
                        "warnings": [t.code for t in h.schedule.warnings]} for h in inf.hypotheses],
    }

