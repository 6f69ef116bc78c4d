"""Record the learning rate of transformers' real schedulers, step by step, for tests/test_lr_schedule.py.

Run it with the Python of a virtualenv that has torch and transformers (see README.md, e.g. the live one):
    /tmp/trainsteps-live/bin/python tools/record_lr.py
It builds each case with `transformers.get_scheduler` on a torch optimizer, steps it like the Trainer does (once per
optimizer step) and writes `tests/fixtures/lr/transformers-<version>.json`: the rate after every scheduler step.
"""

from __future__ import annotations

import json
import pathlib
import warnings

# (name, warmup, total, learning_rate, lr_scheduler_kwargs): every curve shape, with and without warmup
CASES = [
    ("linear", 390, 3900, 1e-4, {}),
    ("linear", 0, 40, 5e-5, {}),
    ("cosine", 390, 3900, 1e-4, {}),
    ("cosine", 3, 25, 2e-5, {"num_cycles": 1.5}),
    ("cosine_with_restarts", 10, 120, 3e-4, {"num_cycles": 3}),
    ("polynomial", 5, 60, 1e-3, {"lr_end": 1e-5, "power": 2.0}),
    ("constant", 0, 30, 1e-4, {}),
    ("constant_with_warmup", 7, 30, 1e-4, {}),
    ("inverse_sqrt", 10, 80, 1e-3, {}),
    ("inverse_sqrt", 0, 30, 1e-3, {"timescale": 5}),
    ("cosine_with_min_lr", 20, 200, 2e-4, {"min_lr_rate": 0.1}),
    ("cosine_with_min_lr", 20, 200, 2e-4, {"min_lr": 1e-5}),
    ("cosine_warmup_with_min_lr", 20, 200, 2e-4, {"min_lr_rate": 0.1}),
    ("cosine_warmup_with_min_lr", 20, 200, 2e-4, {"min_lr_rate": 0.05, "warmup_lr_rate": 0.2}),
    ("warmup_stable_decay", 10, 100, 1e-3, {"num_decay_steps": 30}),
    ("warmup_stable_decay", 10, 100, 1e-3, {"num_decay_steps": 20, "warmup_type": "cosine", "decay_type": "1-sqrt",
                                            "min_lr_ratio": 0.1}),
    ("warmup_stable_decay", 10, 100, 1e-3, {"num_decay_steps": 25, "num_stable_steps": 40, "decay_type": "linear",
                                            "warmup_type": "1-sqrt"}),
]


def record(name, warmup, total, lr, kwargs) -> list[float]:
    import torch
    from transformers import get_scheduler

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        extra = {"scheduler_specific_kwargs": dict(kwargs)} if kwargs else {}
        scheduler = get_scheduler(name, optimizer, num_warmup_steps=warmup, num_training_steps=total, **extra)
        rates = [scheduler.get_last_lr()[0]]
        for _ in range(total + 5):  # a few steps past the plan: what a run that overshoots would get
            optimizer.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr()[0])
    return rates


def main() -> None:
    import inspect

    import transformers
    from transformers import get_scheduler
    from transformers.trainer_utils import SchedulerType

    known = {member.value for member in SchedulerType}  # older releases have fewer schedulers: record what they have
    takes_kwargs = "scheduler_specific_kwargs" in inspect.signature(get_scheduler).parameters  # lr_scheduler_kwargs: 4.33+
    cases = [{"name": n, "warmup": w, "total": t, "learning_rate": lr, "kwargs": kw, "rates": record(n, w, t, lr, kw)}
             for n, w, t, lr, kw in CASES if n in known and (takes_kwargs or not kw)]
    out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "lr" / f"transformers-{transformers.__version__}.json"
    lines = ",\n".join(json.dumps(case) for case in cases)  # one case per line
    out.write_text(f'{{"transformers": "{transformers.__version__}", "cases": [\n{lines}\n]}}\n')
    print(f"wrote {out} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
