import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


def load_json(path: Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def recorded_runs(files) -> list:
    """One pytest param (release, run) per run recorded in fixture files of the form {"transformers": ..., "runs": [...]}."""
    return [pytest.param(data["transformers"], run, id=f"{data['transformers']}-{run['case']}")
            for path in files for data in [load_json(path)] for run in data["runs"]]


def load_fixture(*parts) -> dict:
    return load_json(FIXTURES.joinpath(*parts))


@pytest.fixture
def run_cli():
    """Run the real CLI entry point in-process; returns (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from trainsteps.cli.main import main

    def _run(*args, cwd=None):
        old = os.getcwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            result = CliRunner().invoke(_Entry(main), [str(a) for a in args], catch_exceptions=False)
        finally:
            os.chdir(old)
        return result.exit_code, result.stdout, result.stderr

    return _run


class _Entry:
    """Adapter so CliRunner can call our `main(argv)` wrapper, which owns error formatting."""

    def __init__(self, fn):
        self.fn = fn
        self.name = "trainsteps"

    def main(self, args=None, prog_name=None, **kwargs):
        self.fn(list(args or []))


@pytest.fixture(autouse=True)
def isolated_count_cache(tmp_path_factory, monkeypatch):
    """The count cache lives in the user's cache dir: every test gets its own, so none reads another's counts."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
