"""How many processes a run has, from what the user gave: the one owner of "world size = GPUs per node x nodes".

Every surface asks here: `plan` on every framework, `solve`, the Python API, the time model's GPU count and the data
options (Axolotl's ranks). Launchers and log evidence (`configs/launch.py`, `logs/`) read a world size from other
sources and hand it over as `world_size`.
"""

from __future__ import annotations

from trainsteps.errors import InputError
from trainsteps.numbers import to_whole

WORLD_NAMES = ("world_size", "gpus", "nodes")
"""The settings that give the world size; a planner that takes one takes all three."""


def world_size(world_size: object = None, gpus: object = None, nodes: object = None) -> int | None:
    """The number of processes: `world_size`, or `gpus` (per node) x `nodes` (default 1); None when none is given.

    Both forms at once, `nodes` without `gpus`, and a count below 1 are refused in one line."""
    world = _count(world_size, "world_size")
    per_node, machines = _count(gpus, "gpus"), _count(nodes, "nodes")
    if world is not None and per_node is not None:
        raise InputError("cli.error.world_twice", "cli.hint.world_twice")
    if per_node is not None:
        return per_node * (machines or 1)
    if machines is not None:
        raise InputError("cli.error.nodes_without_gpus", "cli.hint.world_twice")
    return world


def world_or_one(world_size: object = None, gpus: object = None, nodes: object = None) -> int:
    """`world_size(...)`, with one process when nothing is given (a single-GPU run)."""
    world = globals()["world_size"](world_size, gpus, nodes)
    return 1 if world is None else world


def _count(value: object, name: str) -> int | None:
    if value is None:
        return None
    number = to_whole(value, name)
    if number < 1:
        raise InputError("input.positive_int", "input.hint.positive_int", name=name, value=number)
    return number
