"""Record the generation defaults of TRL's GRPOConfig and RLOOConfig in each release (what the RL step model reads when
a config leaves them out): max_completion_length, max_prompt_length, beta (a reference-model forward when not 0),
use_vllm and vllm_mode. Reads each release's own config class from its wheel (`pip download --no-deps trl==X`), with
`ast`: nothing is imported or run.

    pip download --no-deps -d /tmp/trl-wheels trl==0.14.0 trl==0.19.0 ...   # the releases to record
    python tools/record_trl_generation_defaults.py /tmp/trl-wheels > tests/fixtures/rl/generation-defaults-trl.json
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

KEYS = ("max_completion_length", "max_prompt_length", "beta", "use_vllm", "vllm_mode")


def defaults(source: str, class_name: str) -> dict:
    """The `field(default=...)` of each key in the dataclass `class_name` (absent keys are left out)."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id in KEYS:
                    call = item.value
                    for keyword in getattr(call, "keywords", []):
                        if keyword.arg == "default":
                            found[item.target.id] = ast.literal_eval(keyword.value)
    return found


def main(folder: str) -> None:
    out = {}
    for wheel in sorted(Path(folder).glob("trl-*.whl"), key=lambda p: [int(x) for x in re.findall(r"\d+", p.name.split("-")[1])]):
        version = wheel.name.split("-")[1]
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            out[version] = {trainer: defaults(zf.read(path).decode(), cls)
                            for trainer, path, cls in (("grpo", "trl/trainer/grpo_config.py", "GRPOConfig"),
                                                       ("rloo", "trl/trainer/rloo_config.py", "RLOOConfig"))
                            if path in names}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
