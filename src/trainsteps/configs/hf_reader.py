"""A plain HF Trainer run: the main config is a TrainingArguments file; the row count comes from --num-examples."""

from __future__ import annotations

from trainsteps.configs.hf_args import read_hf_file
from trainsteps.configs.settings import Settings

NEWEST_VERSION = None


def read(cfg, settings: Settings) -> None:
    read_hf_file(cfg, settings)


def outcome(cfg, settings: Settings, version):
    return None
