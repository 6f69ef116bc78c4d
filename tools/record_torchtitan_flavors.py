"""Record torchtitan's model flavors (`[model] name` + `flavor` of a job .toml) from a released wheel's own source, into
src/trainsteps/data/torchtitan_flavors.json, which `trainsteps plan --framework torchtitan CONFIG.toml` reads for the
model's shape.

The flavor tables are literal constructor calls in each model's `__init__.py` (`llama3_args = {"8B":
TransformerModelArgs(dim=4096, ...)}`); a field a flavor leaves out takes its dataclass default from the model's
`model/args.py`. Both are read with `ast` (the wheel is never imported: it needs torch and a GPU build), so every number
in the table is the release's own.

    pip download --no-deps torchtitan==0.2.2 -d /tmp/tt
    python tools/record_torchtitan_flavors.py /tmp/tt/torchtitan-0.2.2-py3-none-any.whl
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "trainsteps" / "data" / "torchtitan_flavors.json"
MODELS = {"llama3": ("llama3_args", "TransformerModelArgs"), "qwen3": ("qwen3_args", "Qwen3ModelArgs")}
"""The models whose flavors are recorded: the train spec's name -> (the flavor table, its args dataclass)."""
MOE_ARGS = ("torchtitan/models/moe/moe.py", "MoEArgs")
"""Where the MoE arguments a flavor's `moe_args=MoEArgs(...)` leaves out take their defaults."""


def literal(node: ast.AST):
    """A literal value, or a nested args call (`MoEArgs(num_experts=128, ...)`) as a dict of its keywords."""
    if isinstance(node, ast.Call):
        return {kw.arg: literal(kw.value) for kw in node.keywords}
    return ast.literal_eval(node)


def dataclass_defaults(source: str, name: str) -> dict:
    """The literal defaults of a dataclass's fields (a field without one, or with a factory, is left out)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == name:
            defaults = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    try:
                        defaults[item.target.id] = ast.literal_eval(item.value)
                    except ValueError:
                        continue
            return defaults
    raise SystemExit(f"no dataclass {name}")


def flavors(source: str, table: str) -> dict[str, dict]:
    """`table = {"flavor": Args(...), ...}` -> {flavor: {keyword: value}}."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == table for t in node.targets):
            return {ast.literal_eval(k): literal(v) for k, v in zip(node.value.keys, node.value.values, strict=True)}
    raise SystemExit(f"no flavor table {table}")


def record(wheel: Path) -> dict:
    release = re.search(r"torchtitan-([0-9][^-]*)-", wheel.name).group(1)
    out = {"release": release, "models": {}}
    with zipfile.ZipFile(wheel) as archive:
        moe_file, moe_class = MOE_ARGS
        out["moe_args"] = {"file": moe_file, "defaults": dataclass_defaults(archive.read(moe_file).decode(), moe_class)}
        for name, (table, args) in MODELS.items():
            init, args_file = f"torchtitan/models/{name}/__init__.py", f"torchtitan/models/{name}/model/args.py"
            defaults = dataclass_defaults(archive.read(args_file).decode(), args)
            out["models"][name] = {"file": init, "args_file": args_file, "defaults": defaults,
                                   "flavors": flavors(archive.read(init).decode(), table)}
    return out


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    data = record(Path(sys.argv[1]))
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: torchtitan {data['release']}, "
          + ", ".join(f"{m} {len(v['flavors'])} flavors" for m, v in data["models"].items()))


if __name__ == "__main__":
    main()
