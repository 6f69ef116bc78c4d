"""The JSON answers of the web server's GET routes, as it sends them, for a fixed set of queries: 300 distinct plans
of the load bench (bench_web.py), plans with LR curves, events and both languages, a Megatron plan, solve, compare,
time, and refusals. A change meant only to make the server faster must leave this file byte for byte the same.

Run: `PYTHONPATH=src .venv/bin/python bench/web_answers.py OUT.tsv` before and after the change, then `cmp` the two
files (one line per query: the query, the status, the answer's bytes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).parent))

from bench_web import _distinct  # noqa: E402
from trainsteps.web import routes  # noqa: E402

_EVENTS = dict(per_device_train_batch_size=4, num_train_epochs=3, logging_steps=5, eval_strategy="steps", eval_steps=50,
               save_steps=100, warmup_ratio=0.1, transformers="4.49.0", lr_scheduler_type="cosine")
QUERIES = (
    [_distinct(n) for n in range(300)]
    + ["/api/plan?" + urlencode(dict(_EVENTS, num_examples=5000 + i, lang="zh" if i % 2 else "en", families="1" if i % 3 == 0 else "0"))
       for i in range(40)]
    + ["/api/plan?" + urlencode(dict(framework="megatron", train_iters=1000 + i, global_batch_size=64, micro_batch_size=2,
                                     seq_length=2048, train_tokens=10**9 + i)) for i in range(10)]
    + ["/api/plan?num_examples=nan", "/api/plan?num_examples=1e400", "/api/plan?bogus=1",
       "/api/plan?num_examples=%EF%BC%91%EF%BC%90%EF%BC%94%EF%BC%97", "/api/plan?num_examples=007&num_train_epochs=3.0",
       "/api/plan?num_examples=+5&max_steps=-1", "/api/plan?num_examples=-5", "/api/plan?num_examples=1047&num_train_epochs=1e2&warmup_steps=0.5",
       "/api/plan?num_examples=1047&num_train_epochs=%EF%BC%93", "/api/plan?num_examples=100&per_device_train_batch_size=0",
       "/api/plan?num_examples=100&framework=nope", "/api/plan?num_examples=100&eval_strategy=sometimes",
       "/api/plan?num_examples=100&max_steps=5&streaming=1", "/api/solve?num_examples=1000&epochs=3&streaming=1",
       "/api/solve?global_batch=128&gpus=6", "/api/compare?num_examples=1047&per_device_train_batch_size=10",
       "/api/plan?num_examples=1000&step_time=2&price_per_gpu_hour=3&families=1", "/api/plan?num_examples=1000&step_time=2&lang=zh"]
)


def main(out: str) -> None:
    with open(out, "w", encoding="utf-8") as file:
        for query in QUERIES:
            path, _, params = query.partition("?")
            status, body = routes.answer_query(path, params)
            file.write(f"{query}\t{status}\t{routes.encode(body).decode()}\n")


if __name__ == "__main__":
    main(sys.argv[1])
