"""explain reads the stacks' own progress lines (logs/stack_lines.py) on real logs stored with their source
(tests/fixtures/logs/stacks/SOURCES.json): ms-swift Megatron's `'iteration': 'i/n'` dicts, torchtitan's start-up line and
its `tps`, NeMo Automodel's step lines and its `- Max train steps` line."""

import json
import re
from datetime import datetime
from pathlib import Path

from trainsteps.frameworks.automodel import AutomodelSpec, plan_automodel
from trainsteps.logs import read_log
from trainsteps.logs.explain import explain_log

STACKS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "stacks"


def _explained(name: str = "", text: str | None = None):
    return explain_log(read_log(str(STACKS / name)) if text is None else read_log(text=text))[-1]


def test_every_stored_log_names_its_public_source():
    sources = json.loads((STACKS / "SOURCES.json").read_text())
    assert set(sources) == {p.name for p in STACKS.glob("*.log")}
    assert all(address.startswith("https://github.com/") for address in sources.values())


def test_ms_swift_megatron_dicts_give_the_iteration_its_total_and_the_seconds_an_iteration():
    lines = (STACKS / "swift-megatron-fa2635.log").read_text().splitlines()
    last = re.search(r"'iteration': '(\d+)/(\d+)'", lines[-1])
    speeds = [float(re.search(r"'train_speed\(s/it\)': ([\d.]+)", line).group(1)) for line in lines]
    inference = _explained("swift-megatron-fa2635.log")
    assert (inference.run.last_step.value, inference.planned_end_step) == (int(last.group(1)), int(last.group(2)))
    rate = inference.timing.rate.step_seconds
    assert min(speeds) <= rate.expected <= max(speeds)
    assert inference.timing.remaining.expected > 0
    printed = re.search(r"'remaining_time': '(\d+)d (\d+)h (\d+)m (\d+)s'", lines[-1]).groups()
    assert inference.timing.framework_eta == sum(int(v) * u for v, u in zip(printed, (86400, 3600, 60, 1), strict=True))


def test_torchtitan_steps_count_to_the_total_of_its_start_up_line_and_tps_gives_the_step_time():
    lines = (STACKS / "torchtitan-aurora-blendcorpus.log").read_text().splitlines()
    total = int(re.search(r"total steps (\d+)", lines[0]).group(1))
    stamps = [datetime.strptime(line[1:27], "%Y-%m-%d %H:%M:%S,%f") for line in lines if "step: " in line]
    between = (stamps[-1] - stamps[1]).total_seconds() / (len(stamps) - 2)  # the wall clock between steps 2 and 10
    inference = _explained("torchtitan-aurora-blendcorpus.log")
    assert inference.planned_end_step == total
    assert abs(inference.timing.rate.step_seconds.expected - between) < 0.05 * between


def test_automodel_step_lines_give_the_step_reached():
    lines = (STACKS / "automodel-3473.log").read_text().splitlines()
    assert _explained("automodel-3473.log").run.last_step.value == int(re.search(r"\| step (\d+) \|", lines[-1]).group(1))


def test_automodel_step_lines_count_to_the_max_train_steps_its_step_scheduler_block_prints():
    banner = plan_automodel(AutomodelSpec(num_examples=10_000, max_steps=500, num_epochs=None)).banner_lines
    steps = (STACKS / "automodel-3473.log").read_text()
    inference = _explained(text="\n".join(banner) + "\n" + steps)
    assert inference.planned_end_step == 500


def test_litgpt_s_own_stop_line_ends_the_run_it_recorded():
    recorded = json.loads((STACKS.parents[1] / "pretrain" / "litgpt.json").read_text())["releases"]
    case = next(c for r in recorded if r["version"] == "0.5.13" for c in r["finetune"] if c["stop_lines"])
    inference = _explained(text="\n".join([*case["step_lines"], *case["stop_lines"]]))
    assert inference.run.finished and inference.run.last_step.value == case["optimizer_steps"]


def test_without_its_stop_line_the_same_litgpt_run_is_not_read_as_finished():
    recorded = json.loads((STACKS.parents[1] / "pretrain" / "litgpt.json").read_text())["releases"]
    case = next(c for r in recorded if r["version"] == "0.5.13" for c in r["finetune"] if c["stop_lines"])
    assert not _explained(text="\n".join(case["step_lines"])).run.finished
