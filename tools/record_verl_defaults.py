"""Record the data defaults main_ppo runs with in each verl release: the composed trainer config's
`data.filter_overlong_prompts` and `data.truncation` (`_generated_ppo_trainer.yaml` from 0.5, `ppo_trainer.yaml`
before), read from the release's wheel.

    pip download --no-deps -d /tmp/verl verl==0.9.1 && unzip -q /tmp/verl/verl-0.9.1-*.whl -d /tmp/verl/0.9.1
    python tools/record_verl_defaults.py /tmp/verl/0.3.0.post1 /tmp/verl/0.4.1 ... /tmp/verl/0.9.1

Writes tests/fixtures/rl/defaults-verl.json. (RLHFDataset's own fallback, `config.get("filter_overlong_prompts",
True)` from 0.5, never applies under main_ppo: the composed config always has the key.)
"""

from __future__ import annotations

import json
import pathlib
import sys

import yaml


def composed(root: pathlib.Path) -> pathlib.Path:
    config = root / "verl" / "trainer" / "config"
    generated = config / "_generated_ppo_trainer.yaml"
    return generated if generated.is_file() else config / "ppo_trainer.yaml"


def record(roots: list[pathlib.Path]) -> dict:
    releases = {}
    for root in roots:
        meta = next(root.glob("verl-*.dist-info"))
        release = meta.name.removeprefix("verl-").removesuffix(".dist-info")
        path = composed(root)
        data = yaml.safe_load(path.read_text())["data"]
        releases[release] = {"file": path.name, "filter_overlong_prompts": data["filter_overlong_prompts"],
                             "truncation": data["truncation"]}
    return {"how": "the composed trainer config of each release's wheel (tools/record_verl_defaults.py)", "releases": releases}


if __name__ == "__main__":
    out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rl" / "defaults-verl.json"
    out.write_text(json.dumps(record([pathlib.Path(arg) for arg in sys.argv[1:]]), indent=1) + "\n")
    print(out.read_text())
