"""Human-readable text of `solve` answers, in English or Chinese."""

from __future__ import annotations

from trainsteps.i18n import label, message
from trainsteps.report import display_width, pad, render_schedule, short_list, warnings_section
from trainsteps.schedule import Schedule
from trainsteps.solver import Coverage, Layouts, Solution, _num
from trainsteps.spec import RunSpec


def _covered(c: Coverage, lang: str) -> str:
    parts = [message("solve.covers.rows", lang, rows=f"{c.samples_seen:,}")]
    if c.epochs is not None:
        key = "solve.covers.epoch" if c.epochs == 1 else "solve.covers.epochs"
        parts.append(message(key, lang, epochs=_num(c.epochs)))
    if c.tokens_seen is not None:
        parts.append(message("solve.covers.tokens", lang, tokens=f"{c.tokens_seen:,}"))
    text = label("list_sep", lang).join(parts)
    if c.logged_epoch is not None:
        text += "; " + message("solve.covers.logged", lang, epoch=_num(c.logged_epoch))
    return text


def render_solution(s: Solution, spec: RunSpec, lang: str = "en", explain: bool = False) -> str:
    data = message("solve.data.stream" if s.streaming else "solve.data.map", lang)
    out = [message("solve.title", lang, value=_num(s.value), unit=label("unit." + s.target, lang), data=data,
                   version=s.version, total=f"{s.total_batch:,}")]
    if s.exact:
        out.append("  " + message("solve.choice.exact", lang, steps=f"{s.ceil.max_steps:,}", covered=_covered(s.ceil, lang)))
    else:
        out.append("  " + message("solve.choice.ceil", lang, steps=f"{s.ceil.max_steps:,}", covered=_covered(s.ceil, lang)))
        if s.floor:
            out.append("  " + message("solve.choice.floor", lang, steps=f"{s.floor.max_steps:,}", covered=_covered(s.floor, lang)))
        out.append(message("solve.why_not_exact", lang, total=f"{s.total_batch:,}"))
    out.append(message("solve.set", lang, steps=s.ceil.max_steps))
    if s.by_epochs is not None:
        key = "solve.by_epochs.same" if s.by_epochs.max_steps == s.ceil.max_steps else "solve.by_epochs.differs"
        out.append(message(key, lang, epochs=_num(s.value), steps=f"{s.by_epochs.max_steps:,}", reached=_num(s.by_epochs.epochs or 0)))
    warnings = {t.code: t for t in s.ceil.warnings}
    out += warnings_section(list(warnings.values()), lang)
    if explain:
        out += ["", label("derivation", lang)] + ["  " + line for line in s.derivation.render(lang)]
    return "\n".join(out)


def render_coverage(c: Coverage, spec: RunSpec, s: Schedule, lang: str = "en", explain: bool = False) -> str:
    data = message("solve.data.stream" if spec.streaming else "solve.data.map", lang)
    head = message("solve.inverse", lang, steps=f"{c.max_steps:,}", data=data, version=s.version, covered=_covered(c, lang))
    return head + "\n\n" + render_schedule(s, lang, explain)


def render_layouts(result: Layouts, lang: str = "en") -> str:
    g, w = result.global_batch, result.world_size
    if result.exact:
        out = [message("solve.layout.exact", lang, g=f"{g:,}", w=w, count=len(result.exact))]
        rows = result.exact
    else:
        totals = sorted({x.global_batch for x in result.nearest})
        out = [message("solve.layout.none", lang, g=f"{g:,}", w=w), message("solve.layout.nearest", lang, totals=short_list(totals, lang))]
        rows = result.nearest
    if not rows:
        out.append(message("solve.layout.cap", lang, cap=result.max_per_device))
        return "\n".join(out)
    header = (label("per_device", lang), label("accumulation", lang), label("global_batch", lang))
    out.append("  " + "  ".join(header))
    for x in rows:
        cells = (f"{x.per_device_train_batch_size}", f"{x.gradient_accumulation_steps}", f"{x.global_batch:,}")
        out.append(("  " + "  ".join(pad(cell, display_width(h)) for cell, h in zip(cells, header, strict=True))).rstrip())
    return "\n".join(out)
