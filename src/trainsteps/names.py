"""The names people type for settings and commands (other tools' flags, short forms, HF's underscores), and the
closest name this project has: did-you-mean for the command line and the Python API alike."""

from __future__ import annotations

import difflib

_BATCH = ("--per-device-train-batch-size", "--micro-batch-size", "--train-batch-size")
_EPOCHS = ("--num-train-epochs", "--epochs", "--train-epochs", "--max-epochs")
_GPUS = ("--gpus", "--world-size")
_STEPS = ("--max-steps", "--train-iters")
_EXAMPLES = ("--num-examples", "--examples", "--raw-examples")
_SEQ = ("--seq-length", "--cutoff-len")
_ACCUM = ("--gradient-accumulation-steps",)
# What people type (other tools' flags and short forms) -> this project's names, in order of preference.
USUAL: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("--batch-size", "--bs", "--batch", "--per-device-batch-size", "--micro-batch", "--train-batch",
                     "--per-gpu-batch-size", "--per-gpu-train-batch-size", "--device-batch-size"), _BATCH),
    **dict.fromkeys(("--epochs", "--epoch", "--num-epochs", "--n-epochs", "--train-epoch", "--num-train-epoch"), _EPOCHS),
    **dict.fromkeys(("--gpus", "--gpu", "--num-gpus", "--n-gpus", "--ngpus", "--nproc-per-node", "--num-processes",
                     "--nprocs", "--devices", "--num-devices", "--ranks"), _GPUS),
    **dict.fromkeys(("--steps", "--max-step", "--total-steps", "--num-steps", "--iters", "--iterations"), _STEPS),
    **dict.fromkeys(("--samples", "--num-samples", "--rows", "--num-rows", "--dataset-size", "--size", "--n"), _EXAMPLES),
    **dict.fromkeys(("--seq-len", "--max-seq-length", "--max-seq-len", "--sequence-len", "--max-length", "--context-length",
                     "--block-size", "--model-max-length"), _SEQ),
    **dict.fromkeys(("--grad-accum", "--gradient-accumulation", "--accumulation-steps", "--ga", "--accum",
                     "--grad-accumulation-steps", "--gradient-accumulation-step"), _ACCUM),
    **dict.fromkeys(("--transformers-version", "--hf-version", "--version-transformers"), ("--transformers",)),
    **dict.fromkeys(("--nnodes", "--num-nodes", "--num-machines"), ("--nodes",)),
}
NO_EFFECT = ("--lr", "--learning-rate", "--weight-decay", "--lora-rank", "--lora-r", "--lora-alpha", "--seed-data", "--optim")
USUAL_COMMANDS = {"calc": "plan", "estimate": "plan", "steps": "plan", "parse": "explain", "log": "explain", "logs": "explain",
                  "tokens": "count", "tokenize": "count", "server": "web", "serve": "web", "ui": "web", "max-steps": "solve"}




def closest(typed: str, candidates: list[str]) -> str | None:
    """The candidate `typed` most likely means, in the candidates' own style (`--dashes` or `under_scores`)."""
    dashed = "--" + typed.lstrip("-").replace("_", "-").lower()
    style = (lambda name: name) if any(c.startswith("--") for c in candidates) else (lambda name: name[2:].replace("-", "_"))
    pool = set(candidates)
    for name in (dashed, *USUAL.get(dashed, ())):
        if style(name) in pool and style(name) != typed:
            return style(name)
    if dashed in NO_EFFECT:
        return None
    found = difflib.get_close_matches(style(dashed), candidates, n=1, cutoff=0.6)
    return found[0] if found else None
