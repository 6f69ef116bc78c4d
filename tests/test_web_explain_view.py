"""Explain in the page: the cards and the steps-over-time plot come from the CLI's own JSON for the same log, and the
command line shown beside them runs as pasted (it is run here, in bash, and prints the page's text)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trainsteps.web.routes import answer_post

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "fixtures" / "logs"
CRASHED = LOGS / "corpus" / "lf-8261-nccl-timeout.log"


def explained(body: dict, **kw) -> dict:
    status, answer = answer_post("/api/explain", json.dumps(body).encode(), **kw)
    assert status == 200, answer
    return answer


def test_the_cards_of_seed_003_say_its_four_gpus_and_its_release():
    view = explained({"text": (LOGS / "seed_003_4gpu.log").read_text(), "settings": {}})["web"]["explain"]
    assert [v["gpus_text"] for v in view] == ["4"]
    assert view[0]["release_text"] == "4.42.4" and view[0]["release_detail"] == "4.31-4.45"


def test_a_crashed_run_says_where_it_stopped_what_went_wrong_and_plots_its_steps_over_time():
    answer = explained({"text": CRASHED.read_text(), "settings": {}})
    run, view = answer["runs"][0], answer["web"]["explain"][0]
    assert view["status"] == run["status"] == "crashed"
    assert view["at_text"] == f"{run['end_step']:,}" == "24" and view["planned_text"] == f"{run['planned_end_step']:,}"
    assert [f["text"] for f in run["facts"] if f["code"] == "LOG_CRASHED"][0] in view["wrong"]
    trace = run["time"]["trace"]
    assert len(trace) >= 2 and view["plot"]["points"][-1] == [trace[-1][1] / 3600, trace[-1][0]]
    assert view["left_text"] is None and view["left_detail"] == run["time"]["verdict"]["text"]  # stopped: no time left


def test_a_running_log_projects_its_end_at_the_measured_rate():
    log = LOGS / "corpus" / "torchtune-2620-multinode-lora.log"
    answer = explained({"text": log.read_text(encoding="utf-8"), "settings": {"lang": "zh"}})
    spent, view = answer["runs"][0]["time"], answer["web"]["explain"][0]
    assert view["status"] == "running" and len(view["plot"]["points"]) == len(spent["trace"]) >= 2
    projection = view["plot"]["projection"]
    assert projection[1][1] == spent["end_step"]
    assert projection[1][0] - projection[0][0] == pytest.approx(spent["remaining_seconds"]["expected"] / 3600)
    assert view["left_text"].endswith(("分", "秒", "小时", "天"))  # said in the page's language


def trainsteps_command() -> str:
    found = Path(sys.executable).with_name("trainsteps")
    if not found.exists():
        pytest.skip("no trainsteps script beside this Python")
    return str(found)


def run_shown_line(line: str, cwd: Path) -> str:
    bash = shutil.which("bash")
    assert line.startswith("trainsteps ")
    done = subprocess.run([bash, "-c", trainsteps_command() + line[len("trainsteps"):]], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.rstrip("\n")


def test_a_pasted_log_is_shown_as_a_command_that_runs_as_pasted(tmp_path):
    text = CRASHED.read_text() + "LOG\n"  # a line that is the usual closing word: the command picks another
    answer = explained({"text": text, "settings": {"lang": "zh", "raw_examples": "1000"}})
    line = answer["web"]["cli"]
    assert line.startswith("trainsteps explain - --raw-examples 1000 --lang zh <<'LOG_END'\n")
    from trainsteps.i18n import zh

    shown = run_shown_line(line, tmp_path).replace(zh.LABELS["explain.stdin"], zh.LABELS["explain.pasted_text"]).split("\n")
    page = answer["web"]["text"].split("\n")
    # the same report; only the count of lines read may differ (--text counts the empty line after the last newline)
    assert len(shown) == len(page) and all(a == b or re.sub(r"\d+", "N", a) == re.sub(r"\d+", "N", b) for a, b in zip(shown, page, strict=True))
    assert sum(a != b for a, b in zip(shown, page, strict=True)) <= 1


def test_a_log_from_a_file_is_shown_by_its_name_and_the_command_runs_where_the_file_is(tmp_path):
    shutil.copyfile(CRASHED, tmp_path / "train log.txt")
    answer = explained({"text": CRASHED.read_text(), "name": "train log.txt", "settings": {}})
    assert answer["web"]["cli"] == "trainsteps explain 'train log.txt'"
    assert run_shown_line(answer["web"]["cli"], tmp_path) == answer["web"]["text"]


def test_a_log_file_is_read_from_the_static_sites_folder_only_by_a_bare_name(tmp_path):
    shutil.copyfile(CRASHED, tmp_path / "train.log")
    answer = explained({"log_file": "train.log", "settings": {}}, logs=tmp_path)
    assert answer["web"]["cli"] == "trainsteps explain train.log" and str(tmp_path) not in json.dumps(answer)
    for name in ("../train.log", str(tmp_path / "train.log"), "missing.log"):
        status, refused = answer_post("/api/explain", json.dumps({"log_file": name}).encode(), logs=tmp_path)
        assert status == 400 and refused["id"] == "web.error.no_log"
    status, refused = answer_post("/api/explain", json.dumps({"log_file": "train.log"}).encode())  # the server has no such folder
    assert status == 400 and refused["id"] == "web.error.no_log"
