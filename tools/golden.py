"""Rewrite the golden files of the human report (tests/golden/<case>.<lang>.txt) from tests/golden/cases.txt.

    python tools/golden.py          # then review: git diff tests/golden

Each case runs the real command line in-process from the repository's root, in English and in Chinese.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
LANGS = ("en", "zh")


def cases() -> list[tuple[str, list[str]]]:
    out = []
    for line in (GOLDEN / "cases.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, args = line.partition(":")
            out.append((name.strip(), shlex.split(args)))
    return out


def render(args: list[str], lang: str) -> str:
    """What `trainsteps ARGS --lang LANG` prints on stdout (and stderr, after a marker), exit code included."""
    from click.testing import CliRunner

    from trainsteps.cli.main import main

    class Entry:
        name = "trainsteps"

        def main(self, args=None, prog_name=None, **kwargs):
            main(list(args or []))

    old = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(Entry(), [*args, "--lang", lang], catch_exceptions=False)
    finally:
        os.chdir(old)
    text = result.stdout
    if result.stderr:
        text += "\n--- stderr ---\n" + result.stderr
    return text + f"\n--- exit {result.exit_code} ---\n"


def main() -> int:
    for name, args in cases():
        for lang in LANGS:
            (GOLDEN / f"{name}.{lang}.txt").write_text(render(args, lang), encoding="utf-8")
    print(f"wrote {len(cases()) * len(LANGS)} golden files in {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
