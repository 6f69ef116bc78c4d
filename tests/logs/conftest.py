from pathlib import Path

import pytest

from trainsteps.logs import read_log
from trainsteps.logs.infer import infer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


@pytest.fixture
def explain_file():
    def run(name: str, index: int = -1, raw_examples: int | None = None):
        observations = read_log(str(FIXTURES / name))
        return infer(observations.runs[index], raw_examples)

    return run
