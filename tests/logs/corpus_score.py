"""Score `explain` on the corpus of real public logs (tests/fixtures/logs/corpus): every inference compared with the
facts the log's thread or repository states. Used by test_corpus.py and by `python -m tests.logs.corpus_score`
(prints the rates that docs/explain.md reports)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log
from trainsteps.logs.pretrain import PretrainObserved
from trainsteps.logs.rl import RLObserved

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "corpus"


def items() -> list[tuple[dict, Path]]:
    out = []
    for meta_path in sorted(CORPUS.glob("*.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or "id" not in meta:
            continue  # a corpus log that is itself JSON (trainer_state.json)
        out.append((meta, paths_of(meta)))
    return out


def paths_of(meta: dict) -> Path | list[Path]:
    """The item's log, with the run's other files (launch script, model card, trainer_state.json) when it has them."""
    main = CORPUS / meta["file"]
    companions = meta.get("companions") or []
    return [main, *(CORPUS / name for name in companions)] if companions else main


def expected_world(facts: dict) -> int | None:
    """The processes that trained, as the thread states them (never computed). GPUs that served generation only
    (`7 for training and 1 for vllm`) are not processes of the training run."""
    for key in ("world_size", "num_processes", "training_gpus"):
        if isinstance(facts.get(key), int):
            return facts[key]
    nodes, per_node = facts.get("nodes"), facts.get("gpus_per_node") or facts.get("nproc_per_node")
    if isinstance(nodes, int) and isinstance(per_node, int):
        return nodes * per_node
    gpus = facts.get("gpus") if "gpus" in facts else facts.get("n_gpu")
    if isinstance(gpus, int) and gpus > 0 and facts.get("nodes", 1) == 1:
        return gpus
    return None


@dataclass
class Outcome:
    id: str
    kinds: list
    found: bool
    """A run (or pretraining lines) was found."""
    phantom: bool = False
    """For a not_a_log item: a run was replayed with transformers' rules as if it were one."""
    world: int | None = None
    releases: object = None
    stopped: str | None = None
    expected: dict = field(default_factory=dict)


def explain_item(path: Path):
    pretrain = PretrainObserved()
    obs = read_log(str(path) if isinstance(path, Path) else [str(p) for p in path], also=pretrain.feed)
    return obs, explain_log(obs), pretrain


def rl_item(path: Path) -> RLObserved:
    """The RL lines of a log (verl / OpenRLHF / EasyR1 / Unsloth), read as `explain` reads them."""
    rl = RLObserved()
    read_log(str(path) if isinstance(path, Path) else [str(p) for p in path], also=rl.feed)
    return rl


RL_FRAMEWORKS = ("verl", "openrlhf", "easyr1")
"""Their logs count as found when explain reads their own lines (logs/rl.py), as `explain` does for them."""


def status_of(inf) -> str:
    """finished / crashed / interrupted / running / unknown, as explain states it (`runs[i].status`)."""
    return inf.status


def score(meta: dict, path: Path) -> Outcome:
    obs, inferences, pretrain = explain_item(path)
    facts = meta["facts"]
    out = Outcome(meta["id"], meta["kinds"], found=bool(inferences) or pretrain.found_anything()
                  or (meta["framework"] in RL_FRAMEWORKS and rl_item(path).found_anything()))
    replayed = [inf for inf in inferences if inf.run.kind in ("hf", "unsloth") and inf.best is not None]
    out.phantom = "not_a_log" in meta["kinds"] and bool(replayed)
    worlds = [inf.world_size for inf in inferences if inf.world_size is not None]
    out.world = worlds[-1] if worlds else None
    if out.world is None and pretrain.found_anything() and "stated_gpus" in obs.stated:
        out.world = obs.stated["stated_gpus"].value  # the pretraining explanation names the GPUs the text states
    known = [inf.inferred["transformers"] for inf in inferences if "transformers" in inf.inferred]
    out.releases = known[-1] if known else None
    if inferences:
        out.stopped = status_of(inferences[-1])
    out.expected = {"world": expected_world(facts), "release": facts.get("transformers_version"), "stopped": facts.get("stopped")}
    return out


@dataclass
class Rates:
    found: tuple[int, int]
    no_phantom: tuple[int, int]
    world: tuple[int, int]
    release: tuple[int, int]
    stop: tuple[int, int]
    misses: dict


def rates(outcomes: list[Outcome]) -> Rates:
    misses: dict[str, list] = {"found": [], "phantom": [], "world": [], "release": [], "stop": []}
    logs = [o for o in outcomes if "not_a_log" not in o.kinds]
    found = sum(o.found for o in logs)
    misses["found"] = [o.id for o in logs if not o.found]
    not_logs = [o for o in outcomes if "not_a_log" in o.kinds]
    misses["phantom"] = [o.id for o in not_logs if o.phantom]
    with_world = [o for o in logs if o.expected["world"] is not None]
    misses["world"] = [(o.id, o.world, o.expected["world"]) for o in with_world if o.world != o.expected["world"]]
    with_release = [o for o in logs if o.expected["release"]]
    misses["release"] = [(o.id, o.releases and o.releases.to_json(), o.expected["release"]) for o in with_release
                         if o.releases is None or not o.releases.contains(o.expected["release"])]
    with_stop = [o for o in logs if o.expected["stopped"]]
    misses["stop"] = [(o.id, o.stopped, o.expected["stopped"]) for o in with_stop if o.stopped != o.expected["stopped"]]
    return Rates((found, len(logs)), (len(not_logs) - len(misses["phantom"]), len(not_logs)),
                 (len(with_world) - len(misses["world"]), len(with_world)),
                 (len(with_release) - len(misses["release"]), len(with_release)),
                 (len(with_stop) - len(misses["stop"]), len(with_stop)), misses)


def main() -> None:
    outcomes = [score(meta, path) for meta, path in items()]
    r = rates(outcomes)
    for name in ("found", "no_phantom", "world", "release", "stop"):
        right, total = getattr(r, name)
        print(f"{name:11s} {right}/{total} = {right / total:.1%}" if total else f"{name:11s} -")
    for key, values in r.misses.items():
        for value in values:
            print("  miss", key, value)


if __name__ == "__main__":
    main()
