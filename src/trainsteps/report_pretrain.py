"""Human-readable text for the pretraining frameworks (GPT-NeoX, Megatron, DeepSpeed, Lightning)."""

from __future__ import annotations

from trainsteps.derivation import format_epochs
from trainsteps.i18n import label, message
from trainsteps.report import display_width, pad, short_list, warnings_section
from trainsteps.schedule import Schedule


def _rows(rows: list[tuple[str, str]], lang: str) -> list[str]:
    names = [label(k, lang) for k, _ in rows]
    width = max(display_width(n) for n in names) if names else 0
    return [f"  {pad(name, width)}  {value}" for name, (_, value) in zip(names, rows, strict=False)]


def render_pretrain(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    r = s.run
    out = [label("pt.printed", lang).format(framework=s.framework, version=message(s.family_reason, lang, **s.family_params))]
    out += ["  " + line for line in s.banner_lines]
    out += ["", label("run", lang)]
    rows = [
        ("pt.iterations", f"{r.optimizer_steps:,}"),
        ("samples_seen", f"{r.samples_seen:,}"),
        ("pt.tokens", "?" if r.tokens_seen is None else f"{r.tokens_seen:,}"),
        ("pt.samples_per_epoch", "?" if r.samples_per_epoch is None else f"{r.samples_per_epoch:,}"),
        ("pt.epochs_trained", format_epochs(r.epochs_completed)),
        ("pt.epochs_built", format_epochs(r.epochs_planned)),
        ("warmup_steps", f"{r.warmup_steps:,}"),
        ("eval_steps", short_list(r.eval_steps, lang)),
        ("save_steps", short_list(r.save_steps, lang)),
    ]
    out += _rows(rows, lang)
    return "\n".join(out + _tail(s, lang, explain))


def render_lightning(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    r = s.run
    out = [label("pt.lightning", lang)]
    out += ["  " + line for line in s.banner_lines]
    out += ["", label("run", lang)]
    rows = [
        ("pt.estimated", s.banner["estimated_stepping_batches"]),
        ("optimizer_steps", f"{r.optimizer_steps:,}"),
        ("pt.batches_per_epoch", f"{r.batches_per_epoch:,}"),
        ("epochs_completed", f"{format_epochs(r.epochs_completed)} / {format_epochs(r.epochs_planned)}"),
        ("epoch_end_steps", short_list(r.epoch_end_steps, lang)),
        ("samples_seen", f"{r.samples_seen:,}"),
    ]
    out += _rows(rows, lang)
    return "\n".join(out + _tail(s, lang, explain))


def render_deepspeed(plan, lang: str = "en", explain: bool = False) -> str:
    out = [label("pt.deepspeed", lang)]
    out += ["  " + line for line in plan.printed]
    if explain:
        out += ["", label("derivation", lang)] + ["  " + line for line in plan.derivation.render(lang)]
    return "\n".join(out)


def _tail(s: Schedule, lang: str, explain: bool) -> list[str]:
    out = []
    out += warnings_section(s.warnings, lang)
    if explain:
        out += ["", label("derivation", lang)] + ["  " + line for line in s.derivation.render(lang)]
    return out


def render_idx_summary(summary, lang: str = "en") -> str:
    """One line per dataset: documents, sequences, tokens, dtype, length percentiles."""
    p = summary.percentiles
    pct = ", ".join(f"{k} {v:,}" for k, v in p.items())
    approx = "" if summary.percentiles_exact else " ~"
    return label("pt.idx_summary", lang).format(path=summary.path_prefix, documents=summary.num_documents, sequences=summary.num_sequences,
                                               tokens=summary.num_tokens, dtype=summary.dtype, percentiles=approx + " " + pct,
                                               min=summary.min_length, max=summary.max_length)


def _stack_report(s: Schedule, printed: str, rows: list[tuple[str, str]], lang: str, explain: bool) -> str:
    """A stack's report: what it prints, the lines themselves, the run's rows, then warnings (and the derivation)."""
    out = [printed, *("  " + line for line in s.banner_lines), "", label("run", lang)]
    return "\n".join(out + _rows(rows, lang) + _tail(s, lang, explain))


def _listed(steps, lang: str) -> str:
    return short_list(steps, lang) if steps else label("tt.none", lang)


def render_torchtitan(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    """torchtitan: its start-up line, then steps, tokens, the data a run reads against one pass, LR, saves, evals."""
    r, lr = s.run, s.inputs["lr"]
    printed = label("tt.printed", lang).format(version=s.version, why=message(s.family_reason, lang))
    rows = [
        ("optimizer_steps", f"{r.optimizer_steps:,}"),
        ("tt.ga", f"{s.inputs['gradient_accumulation_steps']:,}"),
        ("samples_seen", f"{r.samples_seen:,}"),
        ("tt.tokens_per_step", f"{r.tokens_per_step['tokens']:,}"),
        ("pt.tokens", f"{r.tokens_seen:,}"),
        ("tt.samples_per_pass", "?" if r.samples_per_epoch is None else f"{r.samples_per_epoch:,}"),
        ("tt.equivalent_epochs", "?" if r.equivalent_epochs is None else format_epochs(r.equivalent_epochs)),
        ("tt.lr", label("tt.lr_value", lang).format(**{k: f"{v:,}" for k, v in lr.items()})),
        ("eval_steps", _listed(r.eval_steps, lang)),
        ("save_steps", _listed(r.save_steps, lang)),
    ]
    return _stack_report(s, printed, rows, lang, explain)


def render_automodel(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    """NeMo Automodel (and LLaMA-Factory v1): the lines it logs, then steps, epochs, samples, warmup, validations, saves."""
    r = s.run
    printed = label("am.printed" if s.framework == "automodel" else "lfv1.printed", lang).format(version=s.version)
    rows = [
        ("optimizer_steps", f"{r.optimizer_steps:,}"),
        ("tt.ga", f"{s.inputs['gradient_accumulation_steps']:,}"),
        ("pt.batches_per_epoch", f"{r.batches_per_epoch:,}"),
        ("epochs_completed", f"{format_epochs(r.epochs_completed)} / {format_epochs(r.epochs_planned)}"),
        ("epoch_end_steps", _listed(r.epoch_end_steps, lang)),
        ("samples_seen", f"{r.samples_seen:,}"),
        ("warmup_steps", f"{r.warmup_steps:,}"),
        ("eval_steps", _listed(r.eval_steps, lang)),
        ("save_steps", _listed(r.save_steps, lang)),
    ]
    if s.framework != "automodel":  # LLaMA-Factory v1: warmup and evaluation are its LR scheduler's and callbacks' (not planned)
        rows = [row for row in rows if row[0] not in ("warmup_steps", "eval_steps")]
    return _stack_report(s, printed, rows, lang, explain)


def render_litgpt(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    """litgpt: the last lines it prints, then steps, epochs (finetune) or tokens (pretrain), the LR horizon, saves, evals."""
    r, pretrain = s.run, s.family == "pretrain"
    printed = label("lg.printed", lang).format(version=s.version, script=s.inputs["script"], why=message(s.family_reason, lang))
    rows = [("optimizer_steps", f"{r.optimizer_steps:,}"), ("tt.ga", f"{s.inputs['gradient_accumulation_steps']:,}"),
            ("lg.iterations", f"{s.inputs['iterations']:,}")]
    if pretrain:
        rows += [("tt.tokens_per_step", f"{r.tokens_per_step['tokens']:,}"), ("pt.tokens", f"{r.tokens_seen:,}"),
                 ("lg.equivalent_epochs", "?" if r.equivalent_epochs is None else format_epochs(r.equivalent_epochs))]
    else:
        rows += [("pt.batches_per_epoch", f"{r.batches_per_epoch:,}"),
                 ("epochs_completed", f"{format_epochs(r.epochs_completed)} / {format_epochs(r.epochs_planned)}"),
                 ("epoch_end_steps", _listed(r.epoch_end_steps, lang)),
                 ("lg.horizon", f"{s.inputs['horizon']:,}")]
    rows += [("samples_seen", f"{r.samples_seen:,}"), ("warmup_steps", f"{format_epochs(r.warmup_steps)}"),
             ("eval_steps", _listed(r.eval_steps, lang)),
             ("save_steps", _listed(r.save_steps, lang))]
    return _stack_report(s, printed, rows, lang, explain)


def render_megatron_bridge(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    """Megatron-Bridge: the lines it prints, then iterations, global batches an epoch, padding, epochs, LR, evals, saves."""
    r, inputs = s.run, s.inputs
    printed = label("mb.printed", lang).format(version=s.version, why=message(s.family_reason, lang))
    rows = [("pt.iterations", f"{r.optimizer_steps:,}"), ("tt.ga", f"{inputs['gradient_accumulation_steps']:,}"),
            ("mb.batches_per_epoch", f"{r.batches_per_epoch:,}"), ("mb.padded", f"{inputs['padded_samples']:,}"),
            ("samples_seen", f"{r.samples_seen:,}"), ("mb.epochs", format_epochs(r.equivalent_epochs)),
            ("mb.lr", label("mb.lr_value", lang).format(decay=f"{inputs['lr_decay_steps']:,}", warmup=f"{inputs['lr_warmup_steps']:,}")),
            ("eval_steps", _listed(r.eval_steps, lang)),
            ("save_steps", _listed(r.save_steps, lang))]
    return _stack_report(s, printed, rows, lang, explain)


def render_swift_megatron(s: Schedule, lang: str = "en", explain: bool = False) -> str:
    """ms-swift Megatron: its last log dict, then iterations, the rows an epoch, epochs, samples, saves and evals."""
    r, inputs = s.run, s.inputs
    printed = label("swm.printed", lang).format(version=s.version, names=", ".join(inputs["option_names"]))
    rows = [("pt.iterations", f"{r.optimizer_steps:,}"), ("tt.ga", f"{inputs['gradient_accumulation_steps']:,}"),
            ("swm.samples", f"{r.samples_per_epoch:,}"), ("mb.batches_per_epoch", f"{r.batches_per_epoch:,}"),
            ("epochs_completed", f"{format_epochs(r.epochs_completed)} / {format_epochs(r.epochs_planned)}"),
            ("samples_seen", f"{r.samples_seen:,}"),
            ("eval_steps", _listed(r.eval_steps, lang)),
            ("save_steps", _listed(r.save_steps, lang))]
    return _stack_report(s, printed, rows, lang, explain)
