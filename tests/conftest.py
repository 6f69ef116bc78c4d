import json
import pathlib

import pytest
from click.testing import CliRunner

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture
def run_cli():
    """Run `trainsteps ...` in-process; returns (exit code, stdout, stderr)."""
    from trainsteps.cli.main import cli

    def run(*args, cwd=None):
        runner = CliRunner()
        if cwd is not None:
            import os

            old = os.getcwd()
            os.chdir(cwd)
        try:
            result = runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)
        finally:
            if cwd is not None:
                os.chdir(old)
        return result.exit_code, result.stdout, result.stderr

    return run


def load_fixture(*parts) -> dict:
    return json.loads(FIXTURES.joinpath(*parts).read_text())
