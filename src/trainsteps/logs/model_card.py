"""The model card the Trainer writes beside its checkpoints (README.md, `trainer.create_model_card`):

    - train_batch_size: 8
    - gradient_accumulation_steps: 4
    - total_train_batch_size: 32
    - distributed_type: multi-GPU
    - num_devices: 4
    ### Framework versions
    - Transformers 4.34.1

transformers' modelcard.py prints `num_devices` only for a distributed run, and `total_train_batch_size` as
train_batch_size x gradient_accumulation_steps x processes; the card's numbers are lent to the run of a log read
together with it (trainer_log.jsonl, trainer_state.json).
"""

from __future__ import annotations

from trainsteps.logs.context import ScanContext
from trainsteps.patterns import lazy

_CARD = lazy(r"^\s*-\s+(train_batch_size|gradient_accumulation_steps|total_train_batch_size|num_devices|training_steps)"
                   r":\s*(\d+)\s*$")
_FRAMEWORK = lazy(r"^\s*-\s+Transformers\s+(\d+\.\d+\.\d+)\s*$")


def scan(line: str, ctx: ScanContext) -> bool:
    if "- " not in line:
        return False
    match = _CARD.match(line)
    if match:
        ctx.out.state("card_" + match.group(1), ctx.reading(int(match.group(2))), ctx.file)
        return True
    match = _FRAMEWORK.match(line)
    if match:
        ctx.transformers_version = ctx.reading(match.group(1))
        return True
    return False
