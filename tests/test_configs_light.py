"""Reading configs stays light: no heavy library for a plain config, and every message exists in both languages."""

import re
import subprocess
import sys

from .conftest import ROOT

HEAVY = ("torch", "transformers", "pyarrow", "tokenizers", "numpy", "datasets", "ray", "gradio")


def test_planning_a_llamafactory_yaml_imports_nothing_heavy():
    code = (
        "import sys, os; os.chdir(sys.argv[1]); from trainsteps.cli.main import main\n"
        "try:\n    main(['plan', 'llamafactory/sft_lora.yaml', '--format', 'json'])\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples")], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_config_messages_exist_in_english_and_chinese_with_the_same_parameters():
    from trainsteps.i18n import en, zh

    prefixes = ("configs.", "llamafactory.", "axolotl.", "trl.", "swift.")
    ours = [k for k in en.MESSAGES if k.startswith(prefixes)]
    assert ours
    for key in ours:
        assert key in zh.MESSAGES, key
        assert set(re.findall(r"{(\w+)", en.MESSAGES[key])) == set(re.findall(r"{(\w+)", zh.MESSAGES[key])), key


def message_ids_used(path) -> set[str]:
    """String arguments of InputError(...), d.add(...) and d.given(...) calls that look like message ids."""
    import ast

    ids = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("InputError", "add", "given"):
                ids |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                        and re.fullmatch(r"(configs|llamafactory|axolotl|trl|swift)\.[a-z_]+(\.[a-z_]+)+", a.value)}
    return ids


def test_every_message_id_used_by_the_config_code_exists():
    from trainsteps.i18n import en

    sources = list((ROOT / "src" / "trainsteps" / "configs").glob("*.py"))
    sources += [ROOT / "src" / "trainsteps" / "frameworks" / f"{n}.py" for n in ("llamafactory", "axolotl", "trl", "swift")]
    used = set().union(*(message_ids_used(p) for p in sources))
    assert "configs.error.pickle" in used
    assert sorted(u for u in used if u not in en.MESSAGES and u not in en.QUANTITIES) == []
