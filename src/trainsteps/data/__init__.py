"""Readers of tokenized datasets (numpy behind the `data` extra)."""
