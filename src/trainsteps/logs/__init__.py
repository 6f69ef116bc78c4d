"""Readers of training logs."""
