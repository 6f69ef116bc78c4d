"""The command line the stack recorders share: one child process per release source tree.

    python tools/record_X.py SRC_0_2_2 SRC_0_3_0 > tests/fixtures/...json

Each tree is imported in a process of its own, because two releases of one package cannot live in one interpreter.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from collections.abc import Callable


def main(script: str, record_one: Callable[[str], dict], argv: list[str]) -> None:
    """`--one ROOT` records one tree (in the child); otherwise every ROOT is recorded in its own child, in order."""
    if argv and argv[0] == "--one":
        print(json.dumps(record_one(argv[1])))
        return
    releases = [json.loads(subprocess.run([sys.executable, script, "--one", root], check=True, capture_output=True,
                                          text=True).stdout) for root in argv]
    print(json.dumps({"recorded_by": f"tools/{pathlib.Path(script).name}", "releases": releases}, indent=1))
