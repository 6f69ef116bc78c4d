"""The package's layers, as a test: every module is in one layer, imports only its own layer or lower ones, and no
two modules import each other, directly or around a circle (imports inside functions included). docs/architecture.md
names every module.

    values -> frameworks -> time model -> readers (configs, logs, data) -> time requests and reports -> planners
           -> surfaces (cli, web, API)
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "trainsteps"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

LAYERS = (
    ("values", ("record", "_record_inits", "_record_inits_logs", "errors", "numbers", "names", "versions", "derivation", "spec", "schedule", "steps", "i18n",
                "validate", "world", "request", "bars", "patterns")),
    ("frameworks", ("frameworks", "mixing")),
    ("time model", ("timing",)),
    ("readers", ("configs", "logs", "data", "tokens")),
    ("time and reports", ("timing.request", "timing.report", "report", "report_pretrain", "report_rl", "solve_report",
                          "answer", "compare", "solver", "data.report", "data.counting", "logs.explain")),
    ("planners", ("planners",)),
    ("surfaces", ("cli", "web", "integrations", "api", "__init__")),
)
"""Layer -> the modules and packages in it (dotted names below `trainsteps`; the longest match wins)."""


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1]) if parts[-1] == "__init__" and len(parts) > 1 else ".".join(parts)
        found[name] = path
    return found


def layer_of(module: str) -> int:
    best = None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if module == member or module.startswith(member + "."):
                if best is None or len(member) > best[1]:
                    best = (index, len(member))
    assert best is not None, f"trainsteps.{module} is in no layer: add it to LAYERS"
    return best[0]


def imports(name: str, path: Path, known: dict) -> set[str]:
    """Modules of the package this module imports, at the top or inside functions."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = ["trainsteps", *package.split(".")] if package else ["trainsteps"]
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t if t.removeprefix("trainsteps.") in known else base for t in targets]
        else:
            continue
        for target in targets:
            if not target.startswith("trainsteps"):
                continue
            short = target.removeprefix("trainsteps").lstrip(".") or "__init__"
            while short and short not in known:
                short = short.rpartition(".")[0]
            if short and short != name:
                found.add(short)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    known["__init__"] = PACKAGE / "__init__.py"
    return {name: imports(name, path, known) for name, path in known.items() if name}


def test_every_module_imports_only_its_own_layer_or_lower_ones():
    upward = [f"trainsteps.{a} ({LAYERS[layer_of(a)][0]}) imports trainsteps.{b} ({LAYERS[layer_of(b)][0]})"
              for a, targets in sorted(graph().items()) for b in sorted(targets) if layer_of(b) > layer_of(a)]
    assert upward == []


def test_no_modules_import_each_other_around_a_circle():
    edges = graph()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node):  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert circles == []


def test_the_architecture_page_names_every_module():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [name for name, path in sorted(modules().items())
               if path.name != "__init__.py" and name.rpartition(".")[2] + ".py" not in text and path.name not in text]
    assert missing == []
