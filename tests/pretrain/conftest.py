"""Fixtures recorded from the real frameworks by tools/record_pretrain.py."""

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pretrain"


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


@pytest.fixture(scope="session")
def mcore() -> dict:
    return load("mcore")


@pytest.fixture(scope="session")
def neox() -> dict:
    return load("neox")


@pytest.fixture(scope="session")
def deepspeed_cases() -> dict:
    return load("deepspeed")
