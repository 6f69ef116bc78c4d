"""The one line of answer every plan and count starts with:
`177 optimizer steps · 3 epochs · 7,531 packed rows · 46.1 M tokens · transformers 5.23.0`."""

from __future__ import annotations

from trainsteps.derivation import format_epochs
from trainsteps.i18n import message

SEPARATOR = " · "


def plan_line(schedule, lang: str = "en", packed: bool = False, wrapper: str | None = None) -> str:
    """Steps, epochs, rows (packed or not), tokens when known, and the release modelled."""
    r = schedule.run
    parts = [message("answer.steps", lang, steps=f"{r.optimizer_steps:,}")]
    if r.epochs_completed is not None:
        parts.append(message("answer.epochs", lang, epochs=format_epochs(r.epochs_completed)))
    rows = (schedule.inputs or {}).get("num_examples")
    if rows is not None:
        parts.append(message("answer.packed_rows" if packed else "answer.rows", lang, rows=f"{rows:,}"))
    if r.tokens_seen is not None:
        from trainsteps.tokens import human_tokens  # only plans with tokens load the token module

        approx = "" if r.tokens_exact in (None, True) else "~"
        parts.append(message("answer.tokens", lang, tokens=approx + human_tokens(r.tokens_seen)))
    release = f"transformers {schedule.version}" if schedule.framework == "hf" else f"{schedule.framework} {schedule.version}"
    parts.append(f"{wrapper} + {release}" if wrapper else release)
    return SEPARATOR.join(parts)


def count_line(data: dict, lang: str = "en") -> str:
    """Examples, tokens (supervised), and each packed count."""
    from trainsteps.tokens import human_tokens

    approx = "~" if data.get("estimated") else ""
    parts = [message("answer.examples", lang, examples=f"{approx}{data['examples']:,}")]
    if data["tokens"] is None:  # counted without a tokenizer: rows only
        parts.append(message("answer.tokens_need_tokenizer", lang))
    else:
        parts += [message("answer.tokens", lang, tokens=approx + human_tokens(data["tokens"])),
                  message("answer.supervised", lang, tokens=approx + human_tokens(data["supervised_tokens"]))]
    for entry in data.get("packing", []):
        value = f"{entry['sequences']:,}" if "sequences" in entry else f"{entry['sequences_min']:,}-{entry['sequences_max']:,}"
        parts.append(message("answer.packed_by", lang, rows=approx + value, framework=entry["framework"]))
    return SEPARATOR.join(parts)
