"""Text and JSON of what was read from the config files: sources, estimates, conflicts, ignored keys."""

from __future__ import annotations

import dataclasses

from trainsteps.i18n import label, message


def range_schedules(imported, plan, adjust) -> dict | None:
    """When `num_examples` is an estimate, the banner numbers at both ends of its range."""
    if imported.estimate is None:
        return None
    out = {}
    for end, n in zip(("low", "high"), imported.estimate, strict=True):
        spec = dataclasses.replace(imported.spec, num_examples=max(n, 1))
        try:
            s = adjust(imported, plan(spec))
        except Exception:  # noqa: BLE001 - an end of the range may be impossible (e.g. no full batch); skip it
            continue
        out[end] = {"num_examples": n, "max_steps": s.run.max_steps, "optimizer_steps": s.run.optimizer_steps}
    return out


def state_check(imported, schedule) -> dict | None:
    if imported.state_max_steps is None or imported.state_max_steps == schedule.run.max_steps:
        return None
    return {"state_max_steps": imported.state_max_steps, "planned_max_steps": schedule.run.max_steps,
            "origin": imported.settings.origin("state_max_steps")}


def imported_to_dict(imported, lang: str, ranges, check) -> dict:
    data = {
        "framework": imported.framework,
        "framework_version": imported.framework_version,
        "files": imported.files,
        "estimate": None if imported.estimate is None else {"num_examples": list(imported.estimate), "at_ends": ranges},
        "max_steps_estimate": None if imported.steps_range is None else list(imported.steps_range),
        "derivation": imported.derivation.to_list(lang),
        "notes": [{"code": code, "message": message(msg, lang, **params)} for code, msg, params in imported.notes],
        "trainer_state_mismatch": check,
        "eval_examples": imported.eval_examples,
    }
    data.update(imported.settings.to_dict())
    from trainsteps.configs.unknown_keys import find

    data["unknown_keys"] = [u.to_dict(lang, imported.framework) for u in find(imported)]
    return data


def unknown_key_warnings(imported, lang: str) -> list[str]:
    """One warning line per key the framework does not have: did-you-mean, and whether the real launch stops."""
    from trainsteps.configs.unknown_keys import find

    return [label("warning", lang) + " " + u.message(lang, imported.framework) for u in find(imported)]


def render_imported(imported, lang: str, ranges, check, explain: bool = False) -> str:
    s = imported.settings
    out = [label("configs.read", lang).format(framework=imported.framework, version=imported.framework_version or "-")]
    out += ["  " + f for f in imported.files]
    used = [k for k in s.values if not k.startswith(("state_", "deepspeed_"))]
    if used:
        out.append(label("configs.from", lang))
        out += [f"  {k.removeprefix('lf.')} = {_shown(s.values[k].value)}  ({s.values[k].origin})" for k in used]
    if imported.derivation.steps:
        out.append(label("configs.examples", lang))
        out += ["  " + line for line in imported.derivation.render(lang)]
    if imported.estimate is not None:
        lo, hi = imported.estimate
        steps = ""
        if ranges and "low" in ranges and "high" in ranges:
            steps = message("configs.estimate.steps", lang, low=ranges["low"]["max_steps"], high=ranges["high"]["max_steps"])
        out.append(message("configs.estimate", lang, low=lo, high=hi, value=imported.spec.num_examples) + steps)
    if imported.steps_range is not None:
        out.append(message("configs.estimate.max_steps", lang, low=imported.steps_range[0], high=imported.steps_range[1],
                           value=imported.spec.max_steps, framework=imported.framework))
    for c in s.conflicts:
        out.append(message("configs.conflict", lang, key=c.key, used=c.kept.value, used_from=c.kept.origin, other=c.other.value, other_from=c.other.origin))
    for c in s.overridden:
        out.append(message("configs.overridden", lang, key=c.key, flag=c.kept.origin, value=c.other.value, origin=c.other.origin))
    from trainsteps.configs.unknown_keys import find

    warned = {(u.key, u.origin) for u in find(imported)}  # shown as warnings at the top (see unknown_key_warnings)
    rest = [(k, o) for k, o in s.ignored if (str(k), o) not in warned]
    if rest:
        out.append(message("configs.ignored", lang, keys=", ".join(f"{k} ({o})" for k, o in rest)))
    if explain and s.unused:
        out.append(message("configs.unused", lang, keys=", ".join(k for k, _ in s.unused)))
    for code, msg, params in imported.notes:
        out.append(f"[{code}] {message(msg, lang, **params)}")
    if check:
        out.append(message("configs.state_mismatch", lang, **check))
    return "\n".join(out)


def _shown(value) -> str:
    """A setting as written in the file, readable: 0.08333333333333333 -> 0.083333, long values cut."""
    if isinstance(value, float) and len(repr(value)) > 10:
        return f"{value:.6g}"
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."
