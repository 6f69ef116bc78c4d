"""Every planner that reads a config file reads it through the one guarded reader (configs/files.py)."""

import time
from pathlib import Path

import pytest

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(6))
"""Seven levels of ten aliases: 692 bytes that expand to ten million values."""


@pytest.mark.parametrize("framework", ["hf", "verl", "openrlhf", "easyr1", "trl-ppo"])
def test_an_alias_bomb_is_refused_in_under_a_second_by_every_planner_that_reads_files(run_cli, tmp_path, framework):
    path = Path(tmp_path) / "bomb.yaml"
    path.write_text(BOMB)
    started = time.process_time()
    code, out, err = run_cli("plan", "--framework", framework, str(path), "--num-examples", "100")
    assert time.process_time() - started < 1.0
    assert code == 2 and out == "" and "expands to more than" in err
