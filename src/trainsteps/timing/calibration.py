"""The calibration corpus read as the time model sees it: a published measurement -> its setup facts, FLOPs per
token and the MFU it implies (against the BF16 dense peak). Pure: the caller parses the JSON
(tests/fixtures/timing/time_corpus.json); tools/fit_efficiency.py and bench/bench_time_model.py share these rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.timing.architectures import ModelShape, shape_from_config
from trainsteps.timing.efficiency import SetupFacts
from trainsteps.timing.flops import eval_flops_per_token, preference_per_token, train_flops_per_token
from trainsteps.timing.gpus import find_gpu


@dataclass(frozen=True, slots=True)
class Measurement:
    """One corpus row, ready to fit or score."""

    row_id: int
    category: str
    group: str
    split: str
    facts: SetupFacts
    flops_per_token: float
    """Model FLOPs per token (timing.flops, with the attention term)."""
    peak: float
    """BF16 dense peak FLOP/s of one GPU."""
    tokens_per_second_per_gpu: float
    shape: ModelShape

    @property
    def mfu(self) -> float:
        return self.tokens_per_second_per_gpu * self.flops_per_token / self.peak


def measurement(row: dict, models: dict, evaluations: bool = True) -> Measurement:
    """A corpus row as a Measurement. With `evaluations`, a wall time that holds evaluations is costed as a plan costs
    them: their forward FLOPs at the run's MFU (timing.request's modelled evaluation), spread over the trained tokens."""
    shape = _shape(row, models)
    method = row["method"]
    per_token = _flops_per_counted_token(row, shape)
    if evaluations:
        per_token *= 1 + _evaluation_share(row, shape, per_token)
    peak = find_gpu(row["gpu"]).peak("bf16")
    measured = row["measured"]
    tps = measured.get("tokens_per_second_per_gpu") or measured["tflops_per_gpu"] * 1e12 / per_token
    tokens = row["micro_batch"] * (row.get("tokens_per_row") or row["seq"])
    checkpointing = None if row["checkpointing"] == "not stated" else row["checkpointing"]
    stack = "megatron" if row["stack"].startswith("megatron") else row["stack"]
    facts = SetupFacts(method=method, stack=stack, checkpointing=checkpointing, dtype=row["dtype"],
                       tokens_per_micro_batch=tokens, active_params=shape.matmul_params, moe=shape.experts_active < 0.9,
                       gpu=row["gpu"], gpus=row["gpus"], base_quant=row.get("base_quant"),
                       offload=bool(row.get("offload")), whole_run="wall_seconds" in measured,
                       pretraining=row["category"] == "pretraining", packed=row.get("packing"))
    return Measurement(row["id"], row["category"], row["group"], row["split"], facts, per_token, peak, float(tps), shape)


def _flops_per_counted_token(row: dict, shape: ModelShape) -> float:
    """Model FLOPs per token the source counts. A preference row counts every policy row (chosen and rejected), so
    its FLOPs per counted token are the example's passes over the rows it trains."""
    training = "full" if row["method"] == "full" else "lora"
    if not row.get("trainer"):
        return train_flops_per_token(shape, row["seq"], training).expected
    cost = preference_per_token(shape, row["seq"], row["trainer"], training, bool(row.get("precompute_reference")))
    return cost.train.expected / cost.trained_rows


def _evaluation_share(row: dict, shape: ModelShape, per_token: float) -> float:
    """The forward FLOPs of the validation rows a wall time holds (`validation_rows_forward`, rows the policy scores),
    over its training FLOPs. What one validation row costs is timing.flops' rule, as a plan costs an evaluation: a
    preference row's forwards are its trainer's (the reference's unless precomputed, none for SimPO, ORPO, CPO)."""
    measured = row["measured"]
    if not row.get("validation_rows_forward") or "wall_seconds" not in measured or not measured.get("examples"):
        return 0.0
    tokens = row.get("tokens_per_row") or row["seq"]
    forward, rows_per_example = eval_flops_per_token(shape, tokens), 1
    if row.get("trainer"):
        cost = preference_per_token(shape, tokens, row["trainer"], "full" if row["method"] == "full" else "lora",
                                    bool(row.get("precompute_reference")))
        forward, rows_per_example = cost.evaluate / cost.trained_rows, cost.trained_rows
    trained_rows = measured["examples"] * rows_per_example  # a row's tokens are on both sides: they cancel
    return row["validation_rows_forward"] * forward / (trained_rows * per_token)


def _shape(row: dict, models: dict) -> ModelShape:
    if "shape" in row:  # MPT rows: NumParams as published, less the learned positions (a lookup, not a multiply)
        s = row["shape"]
        return ModelShape(float(s["matmul_params"]), float(s["total_params"]), s["layers"], s["attention_width"], row["model"])
    config = row.get("shape_config") or models[row["model"]]["config"]
    return shape_from_config(config, row["model"])


def napkin_tokens_per_second(m: Measurement) -> float:
    """The rule users apply: 6·N·D / (peak x GPUs x 0.4), N the active parameters, per GPU."""
    return m.peak * 0.4 / (6 * m.shape.matmul_params)
