"""A training script read as a config: the literal keyword arguments of its TRL / transformers config call.

The script is parsed with `ast` and never run (no exec, no eval, no import). What is read:

- the first call of `SFTConfig`, `GRPOConfig`, `DPOConfig`, `KTOConfig`, ... or `TrainingArguments` (by name or as
  `trl.SFTConfig`); each keyword whose value is a literal (`8`, `-1`, `2e-4`, `"steps"`, `True`, `None`) or a name
  assigned a literal once at the top of the script (`max_seq_length = 2048`) becomes a setting, with its line;
  other values (`output_dir=f"{name}"`, `**kwargs`) are listed as not read;
- whether Unsloth is in play: the script imports `unsloth` (Unsloth rewrites TRL's config classes when it is
  imported, `_patch_trl_rl_trainers` in unsloth/models/rl.py). It replaces the module attributes `trl.SFTConfig`,
  `trl.trainer.SFTConfig`, ...; a name the script bound with `from trl import SFTConfig` *before* it imported unsloth
  keeps TRL's own class and its defaults, so the order of the imports decides.
"""

from __future__ import annotations

import ast
import pathlib

from trainsteps.errors import InputError

TRL_CALLS = {"SFTConfig": "sft", "GRPOConfig": "grpo", "DPOConfig": "dpo", "KTOConfig": "kto", "ORPOConfig": "orpo",
             "CPOConfig": "cpo", "RewardConfig": "reward", "PPOConfig": "ppo", "RLOOConfig": "rloo", "GKDConfig": "gkd"}
"""TRL config classes (Unsloth rewrites the defaults of each) -> trainer."""
HF_CALLS = ("TrainingArguments", "Seq2SeqTrainingArguments", "UnslothTrainingArguments")
"""transformers' arguments (Unsloth does not rewrite their defaults)."""


def read_script(path: pathlib.Path, text: str) -> tuple[dict, dict, str, dict]:
    """The script's config call as (literal keywords, their lines, the config kind, what else was seen)."""
    try:
        tree = ast.parse(text, filename=str(path))
    except (SyntaxError, ValueError) as exc:
        raise InputError("script.error.syntax", "script.hint.syntax", path=str(path), line=getattr(exc, "lineno", 0) or 0,
                         detail=getattr(exc, "msg", str(exc))) from None
    constants = _module_constants(tree)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _call_name(node.func) in (*TRL_CALLS, *HF_CALLS)]
    call = min(calls, key=lambda node: (node.lineno, node.col_offset)) if calls else None
    if call is None:
        raise InputError("script.error.no_config", "script.hint.no_config", path=str(path), names=", ".join(list(TRL_CALLS)[:4]))
    name = _call_name(call.func)
    data, lines, skipped = {}, {}, []
    for keyword in call.keywords:
        if keyword.arg is None:
            skipped.append("**" + (_call_name(keyword.value) or "..."))
            continue
        ok, value = _literal(keyword.value, constants)
        if ok:
            data[keyword.arg] = value
            lines[keyword.arg] = keyword.value.lineno
        else:
            skipped.append(keyword.arg)
    unsloth_line = _import_line(tree, "unsloth")
    bound = _trl_import_line(tree, name) if isinstance(call.func, ast.Name) else None
    patched = name in TRL_CALLS and unsloth_line is not None and (bound is None or bound > unsloth_line)
    script = {"call": name, "line": call.lineno, "trainer": TRL_CALLS.get(name, "hf"), "unsloth": unsloth_line is not None,
              "unsloth_line": unsloth_line, "trl_import_line": bound, "unsloth_patched": patched, "not_read": skipped}
    return data, lines, "trl" if name in TRL_CALLS else "hf_args", script


def _call_name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _literal(node, constants: dict) -> tuple[bool, object]:
    """(True, value) for a literal, a negated number or a top-level constant; (False, None) otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
        return True, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in constants:
        return True, constants[node.id]
    return False, None


def _module_constants(tree: ast.Module) -> dict:
    """Names assigned exactly once at the top level, to a literal."""
    seen: dict[str, int] = {}
    values: dict = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                seen[target.id] = seen.get(target.id, 0) + 1
                ok, value = _literal(stmt.value, {}) if stmt.value is not None else (False, None)
                if ok:
                    values[target.id] = value
    return {name: value for name, value in values.items() if seen[name] == 1}


def _import_line(tree: ast.Module, module: str) -> int | None:
    """First line that imports `module` (or a submodule of it)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == module or a.name.startswith(module + ".") for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module == module or node.module.startswith(module + ".")):
            lines.append(node.lineno)
    return min(lines) if lines else None


def _trl_import_line(tree: ast.Module, name: str) -> int | None:
    """Line of `from trl import NAME` (or from trl.trainer...), which binds TRL's class as it is at that moment."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "trl":
            if any((a.asname or a.name) == name for a in node.names):
                return node.lineno
    return None
