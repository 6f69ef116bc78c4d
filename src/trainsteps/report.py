"""Human-readable text of a Schedule, in English or Chinese. Used by the CLI and the web page."""

from __future__ import annotations

from itertools import islice

from trainsteps.derivation import format_epochs
from trainsteps.i18n import label, message
from trainsteps.schedule import Schedule


def short_list(values: list[int], lang: str = "en", head: int = 6) -> str:
    """`14, 28, 42, ..., 4,200 (300 in all)` for long lists."""
    if not values:
        return label("none", lang)
    if len(values) <= head + 2:
        return ", ".join(f"{v:,}" for v in values)
    shown = ", ".join(f"{v:,}" for v in islice(values, head))  # (a `Steps` slice would build a `Steps` first)
    return f"{shown}, ..., {values[-1]:,} ({label('and_more', lang).format(count=len(values))})"


def warnings_section(traps, lang: str) -> list[str]:
    """The report's "Warnings" block (a blank line, the heading, one `[CODE] message` line per trap), or nothing."""
    if not traps:
        return []
    return ["", label("warnings", lang)] + [f"  [{t.code}] {t.message(lang)}" for t in traps]


def render_schedule(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    out = [label("banner", lang).format(version=s.version)]
    out += ["  " + line for line in s.banner_lines]
    out.append("")
    out.append(f"{label('family', lang)} {message(s.family_reason, lang, **s.family_params)}")
    out.append("")
    out.append(label("run", lang))
    r = s.run
    rows = [
        ("optimizer_steps", f"{r.optimizer_steps:,} / {r.max_steps:,}"),
        ("epochs_completed", _epochs(r.epochs_completed, r.epochs_planned)),
        ("epoch_end_steps", short_list(r.epoch_end_steps, lang)),
        ("samples_seen", "?" if r.samples_seen is None else f"{r.samples_seen:,}"),
        ("warmup_steps", f"{r.warmup_steps:,}"),
        ("log_steps", short_list(r.log_steps, lang)),
        ("eval_steps", short_list(r.eval_steps, lang)),
        ("save_steps", short_list(r.save_steps, lang)),
    ]
    if r.rank_split is not None:
        rows[1:3] = _stream_rows(r, lang, s.inputs.get("world_size", "W"))
    if r.tokens_per_step is not None:  # the data's tokens are known (trainsteps.tokens)
        rows = [row for row in rows if row[0] != "tokens_seen"] + _token_rows(r, lang)
    taken = r.optimizer_steps - ((s.inputs or {}).get("resume_from_step") or 0)
    if r.real_optimizer_updates is not None and r.real_optimizer_updates != taken:
        rows.insert(1, ("real_optimizer_updates", f"{r.real_optimizer_updates:,}"))
    width = max(display_width(label(k, lang)) for k, _ in rows)
    for key, value in rows:
        name = label(key, lang)
        out.append(f"  {name}{' ' * (width - display_width(name))}  {value}")
    out += warnings_section(s.warnings, lang)
    if explain:
        out.append("")
        out.append(label("derivation", lang))
        out += ["  " + line for line in s.derivation.render(lang)]
    return "\n".join(out)


def _stream_rows(r, lang: str, world) -> list[tuple[str, str]]:
    """A stream: the logged epoch is not a pass count; show the passes and the equivalent epochs instead."""
    rows = [("rank_split", message("hf.stream.split." + r.rank_split, lang, world=world))]
    rows.append(("logged_epoch", format_epochs(r.epochs_completed)))
    rows.append(("equivalent_epochs", format_epochs(r.equivalent_epochs)))
    if r.pass_end_steps is not None:
        rows.append(("pass_end_steps", short_list(r.pass_end_steps, lang)))
    if r.tokens_seen is not None:
        rows.append(("tokens_seen", f"{r.tokens_seen:,}"))
    return rows


def _token_rows(r, lang: str) -> list[tuple[str, str]]:
    """Tokens over the run, per optimizer step and per epoch (non-padding, supervised, with padding)."""
    approx = "" if r.tokens_exact else "~"
    step, epoch = r.tokens_per_step, r.tokens_per_epoch
    return [
        ("tokens_seen", message("tokens.row.seen", lang, tokens=f"{approx}{r.tokens_seen:,}", supervised=f"{approx}{r.supervised_tokens_seen:,}")),
        ("padded_tokens_seen", message("tokens.row.padded", lang, share=f"{r.padding_share:.1%}",
                                       tokens=f"{'' if epoch.get('padded_exact') and r.tokens_exact else '~'}{r.padded_tokens_seen:,}")),
        ("tokens_per_step", message("tokens.row.step" if step["low"] is not None else "tokens.row.step_mean", lang,
                                    mean=f"{step['mean']:,.0f}", low=f"{step['low'] or 0:,}", high=f"{step['high'] or 0:,}",
                                    supervised=f"{step['supervised_mean']:,.0f}")),
        ("tokens_per_epoch", message("tokens.row.epoch", lang, tokens=f"{epoch['tokens']:,}", supervised=f"{epoch['supervised']:,}",
                                     rows=f"{epoch['rows']:,}")),
    ]


def _epochs(done: float | None, planned: float | None) -> str:
    if done is None:
        return "?"
    return f"{format_epochs(done)} / {format_epochs(planned)}" if planned else format_epochs(done)


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal: wide and full-width characters (CJK, full-width punctuation) take two,
    combining marks none (Unicode East Asian Width)."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def pad(text: str, width: int) -> str:
    """`text` followed by spaces up to `width` display columns (str.ljust counts a CJK character as one)."""
    return text + " " * max(width - display_width(text), 0)
