"""One JSON shape for every explanation (`explain --format json`): the same top-level keys whatever was found, empty or
null when the log did not give them, with `kind` saying which reading answered. Documented in docs/json.md.

The keys each reading had before (`framework`, `observed`, `explanation` for RL and pretraining logs; `observed`,
`inferred`, `facts`, ... of the last run for Trainer logs) stay at the top level beside them, for older readers.
"""

from __future__ import annotations

KINDS = ("runs", "rl", "pretraining")


def envelope(kind: str, answer: str | None, obs=None, runs: list | None = None, rl: dict | None = None,
             pretraining: dict | None = None, legacy: dict | None = None) -> dict:
    """The stable top level: kind, answer (the report's first line), source, runs, rl, pretraining, stated (the words
    read around the log)."""
    assert kind in KINDS, kind
    out = dict(legacy or {})
    out.update({
        "kind": kind,
        "answer": answer,
        "source": _source(obs),
        "runs": runs or [],
        "rl": rl,
        "pretraining": pretraining,
        "stated": _stated(obs),
    })
    return out


def _source(obs) -> dict:
    if obs is None:
        return {"files": [], "lines_read": None, "bytes_read": None}
    return {"files": list(obs.files), "lines_read": obs.lines_read, "bytes_read": obs.bytes_read}


def _stated(obs) -> dict:
    """`gpus`, `failure`, `interruption`: what the words around the log state, each `{value, line, text}` or null."""
    stated = obs.stated if obs is not None else {}
    out = {}
    for key, name in (("stated_gpus", "gpus"), ("stated_failure", "failure"), ("stated_interruption", "interruption")):
        reading = stated.get(key)
        out[name] = None if reading is None else {"value": reading.value, "line": reading.line, "text": reading.text}
    return out
