"""Record what TRL's GRPOConfig / RLOOConfig `__post_init__` does with the generation-batch settings.

Runs the release's own `__post_init__` (taken from the wheel's source, unchanged but for the call to
`TrainingArguments.__post_init__`, which needs torch) on an object holding the settings, and writes what it sets
(`steps_per_generation`, `generation_batch_size`) or the ValueError it raises, for every case of a grid, to
tests/fixtures/rl/config-trl-<release>.json.

    pip download --no-deps -d /tmp/trl trl==1.0.0 && unzip -q /tmp/trl/trl-1.0.0-py3-none-any.whl -d /tmp/trl/src
    python tools/record_trl_config.py /tmp/trl/src 1.0.0
"""

from __future__ import annotations

import ast
import itertools
import json
import pathlib
import sys
import textwrap


class _Settings:
    """The config object: the settings given, `None` for every other field __post_init__ reads."""

    def __init__(self, **values):
        self.__dict__.update(values)

    def __getattr__(self, name):
        return None


def post_init(source_dir: pathlib.Path, module: str, cls: str):
    path = source_dir / "trl" / "trainer" / f"{module}.py"
    text = path.read_text()
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    method = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__post_init__")
    code = textwrap.dedent(ast.get_source_segment(text, method)).replace("super().__post_init__()", "pass")
    namespace: dict = {}
    exec(compile(code, str(path), "exec"), namespace)  # noqa: S102 - TRL's own method, from the wheel
    return namespace["__post_init__"]


def record(source_dir: pathlib.Path, release: str) -> dict:
    cases = []
    for trainer, module, cls in _online_trainers(source_dir):
        run = post_init(source_dir, module, cls)
        grid = itertools.product((1, 3, 4), (1, 2), (1, 2), (1, 2, 4), (None, 2, 3), (None, 8, 12), (True, False))
        for bs, world, ga, generations, spg, gbs, default_generations in grid:
            settings = {"per_device_train_batch_size": bs, "world_size": world, "gradient_accumulation_steps": ga,
                        "steps_per_generation": spg, "generation_batch_size": gbs, "num_generations": generations,
                        "do_eval": False, "eval_strategy": "no", "scale_rewards": "group"}
            if default_generations:
                settings["num_generations"] = {"grpo": 8, "rloo": 2}[trainer]  # the dataclass defaults, read below
            config = _Settings(**settings)
            case = {"trainer": trainer, "inputs": {k: settings[k] for k in ("per_device_train_batch_size", "world_size",
                    "gradient_accumulation_steps", "steps_per_generation", "generation_batch_size", "num_generations")}}
            if any(seen["trainer"] == trainer and seen["inputs"] == case["inputs"] for seen in cases):
                continue
            try:
                run(config)
                case["steps_per_generation"], case["generation_batch_size"] = config.steps_per_generation, config.generation_batch_size
            except ValueError as exc:
                case["refused"] = str(exc)
            cases.append(case)
    defaults = {trainer: _default(source_dir, module, cls, "num_generations") for trainer, module, cls in _online_trainers(source_dir)}
    return {"release": release, "how": "the release's own __post_init__ run on the settings (tools/record_trl_config.py)",
            "num_generations_default": defaults, "cases": cases}


def _online_trainers(source_dir: pathlib.Path) -> list[tuple[str, str, str]]:
    """GRPO, and RLOO where its config samples groups as GRPO does (`num_generations`; before 1.0 RLOO was the
    on-policy trainer with `rloo_k`)."""
    found = [("grpo", "grpo_config", "GRPOConfig")]
    rloo = source_dir / "trl" / "trainer" / "rloo_config.py"
    if rloo.is_file() and "num_generations" in rloo.read_text():
        found.append(("rloo", "rloo_config", "RLOOConfig"))
    return found


def _default(source_dir: pathlib.Path, module: str, cls: str, name: str):
    """A dataclass field's `default=` as the source writes it."""
    tree = ast.parse((source_dir / "trl" / "trainer" / f"{module}.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and getattr(item.target, "id", None) == name:
            call = item.value
            return next(ast.literal_eval(k.value) for k in call.keywords if k.arg == "default")
    raise LookupError(name)


if __name__ == "__main__":
    source, release = pathlib.Path(sys.argv[1]), sys.argv[2]
    out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rl" / f"config-trl-{release}.json"
    data = record(source, release)
    rows = ",\n".join(json.dumps(case) for case in data.pop("cases"))
    out.write_text(json.dumps(data)[:-1] + ', "cases": [\n' + rows + "\n]}\n")
    print(out, len(json.loads(out.read_text())["cases"]), "cases")
