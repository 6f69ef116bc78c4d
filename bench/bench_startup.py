"""Start-up of `trainsteps explain` (a 10-line banner) and `trainsteps plan`, against `python -c "import click"`.

    PYTHONPATH=src python bench/bench_startup.py           # 21 runs of each command, taking turns
    PYTHONPATH=src python bench/bench_startup.py --runs 31 --before /path/to/main/src   # another tree too, same run

Whole processes, as the `trainsteps` console script starts them (`import re, sys; from trainsteps.cli.main import
main`), with bytecode caching on (a temporary PYTHONPYCACHEPREFIX, warmed once) even where the environment sets
PYTHONDONTWRITEBYTECODE: an installed package runs from its bytecode. The commands take turns, so a change of load on a
shared machine touches all of them alike; medians of wall and CPU time (user + system of the child), and each as a
ratio to `import click`. Targets: explain <= 1.6x, plan <= 1.4x.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from bench_explain import BANNER as TRAINER_BANNER  # the same Trainer banner the explain bench writes


def _importable_tree() -> str:
    """The src/ folder whose `trainsteps` this Python imports (PYTHONPATH=<tree>/src), else this checkout's."""
    spec = importlib.util.find_spec("trainsteps")
    if spec is not None and spec.origin:
        return os.path.dirname(os.path.dirname(spec.origin))
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


SRC = _importable_tree()
ENTRY = "import re, sys; from trainsteps.cli.main import main; sys.argv[0] = 'trainsteps'; sys.exit(main())"
BANNER = TRAINER_BANNER + "{'loss': 0.61, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': 0.07}\n" * 2
PLAN = ["plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps", "8",
        "--num-train-epochs", "300"]
TARGETS = {"explain": 1.6, "plan": 1.4}


def commands(banner: str, trees: dict[str, str]) -> dict[str, tuple[list[str], str | None]]:
    """name -> (command line, source tree on PYTHONPATH or None)."""
    out: dict[str, tuple[list[str], str | None]] = {"import click": ([sys.executable, "-c", "import click"], None)}
    for tag, src in trees.items():
        suffix = f" ({tag})" if len(trees) > 1 else ""
        out[f"trainsteps explain{suffix}"] = ([sys.executable, "-c", ENTRY, "explain", banner], src)
        out[f"trainsteps plan{suffix}"] = ([sys.executable, "-c", ENTRY, *PLAN], src)
    return out


def _env(src: str | None, cache: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(cache, "tree" if src is None else src.strip(os.sep).replace(os.sep, "_")))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    return env


def measure(cmds: dict[str, tuple[list[str], str | None]], runs: int) -> dict[str, tuple[float, float]]:
    """name -> (median wall s, median CPU s)."""
    cache = tempfile.mkdtemp(prefix="trainsteps-bench-pycache-")
    envs = {name: _env(src, cache) for name, (_, src) in cmds.items()}
    for name, (command, _) in cmds.items():  # warm the bytecode and page caches; a failing command stops the bench
        subprocess.run(command, env=envs[name], check=True, capture_output=True)
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    cpus: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, (command, _) in cmds.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(command, env=envs[name], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            walls[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in cmds}


def report(results: dict[str, tuple[float, float]], runs: int) -> list[str]:
    click_wall, click_cpu = results["import click"]
    lines = [f"start-up, medians of {runs} runs each, taking turns (load average {os.getloadavg()[0]:.1f}): wall ms, "
             "CPU ms, ratio to import click (wall / CPU)"]
    for name, (wall, cpu) in results.items():
        target = next((f"  (target <= {t}x)" for key, t in TARGETS.items() if name.startswith(f"trainsteps {key}")), "")
        lines.append(f"  {name:<32} {wall * 1000:7.1f} ms {cpu * 1000:7.1f} ms CPU   "
                     f"{wall / click_wall:5.2f}x / {cpu / click_cpu:5.2f}x{target}")
    return lines


def startup_lines(runs: int, tmp: str, trees: dict[str, str] | None = None) -> list[str]:
    banner = os.path.join(tmp, "banner.log")
    with open(banner, "w", encoding="utf-8") as f:
        f.write(BANNER)
    return report(measure(commands(banner, trees or {"this tree": SRC}), runs), runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (default 21)")
    parser.add_argument("--before", help="another tree's src/ folder, measured in the same run (e.g. main's)")
    args = parser.parse_args()
    trees = {"before": args.before, "after": SRC} if args.before else None
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(startup_lines(args.runs, tmp, trees)))


if __name__ == "__main__":
    main()
