"""The same settings under every release family, side by side."""

from __future__ import annotations

from dataclasses import dataclass, replace

from trainsteps.derivation import format_epochs
from trainsteps.errors import TrainstepsError
from trainsteps.i18n import label
from trainsteps.report import display_width
from trainsteps.spec import RunSpec


@dataclass
class FamilyRow:
    family: str
    version: str
    total_steps: str | None
    optimizer_steps: int | None
    epochs_completed: float | None
    warnings: list[str]
    error: str | None = None

    def to_dict(self, lang: str = "en") -> dict:
        return {"family": self.family, "version": self.version, "total_optimization_steps": self.total_steps,
                "optimizer_steps": self.optimizer_steps, "epochs_completed": self.epochs_completed,
                "warnings": self.warnings, "error": self.error}


def compare_families(spec: RunSpec) -> list[FamilyRow]:
    from trainsteps.frameworks.hf import plan
    from trainsteps.frameworks.hf.releases import representative_releases, rules_for

    rows = []
    for version in representative_releases():
        family = rules_for(version).family.name
        try:
            s = plan(replace(spec, transformers=str(version)))
        except TrainstepsError as exc:
            rows.append(FamilyRow(family, str(version), None, None, None, [], str(exc)))
            continue
        rows.append(FamilyRow(family, str(version), s.banner["Total optimization steps"], s.run.optimizer_steps,
                              s.run.epochs_completed, [t.code for t in s.warnings]))
    return rows


def render_comparison(rows: list[FamilyRow], lang: str = "en") -> str:
    head = (label("family", lang), label("version", lang), "Total optimization steps", label("optimizer_steps", lang),
            label("epochs_completed", lang), label("warnings", lang))
    table = [head]
    for r in rows:
        if r.error:
            table.append((r.family, r.version, "-", "-", "-", r.error))
        else:
            table.append((r.family, r.version, r.total_steps, f"{r.optimizer_steps:,}",
                          format_epochs(r.epochs_completed), ", ".join(r.warnings) or "-"))
    widths = [max(display_width(str(row[i])) for row in table) for i in range(len(head) - 1)]
    lines = [label("compare_title", lang)]
    for row in table:
        cells = [str(c) + " " * (w - display_width(str(c))) for c, w in zip(row[:-1], widths, strict=True)]
        lines.append("  " + "  ".join(cells) + "  " + str(row[-1]))
    return "\n".join(lines)
