"""Hugging Face transformers Trainer (also the base of LLaMA-Factory, TRL, Axolotl, ms-swift, Unsloth)."""

from trainsteps.frameworks.hf.plan import plan

__all__ = ["plan"]
