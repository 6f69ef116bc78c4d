"""A tiny causal LM and datasets for live runs: the model counts the rows and non-padding tokens
its forward really receives, so a test can compare them with what a callback reports."""

from __future__ import annotations

import torch
from torch import nn

VOCAB, WIDTH, SEQ = 32, 8, 12


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)
        self.rows_seen = 0
        self.tokens_seen = 0
        self.ids_seen: list[int] = []

    def forward(self, input_ids=None, attention_mask=None, labels=None, row_id=None, **kwargs):
        if self.training:
            self.rows_seen += int(input_ids.shape[0])
            self.tokens_seen += int(attention_mask.sum())
            if row_id is not None:
                self.ids_seen += [int(x) for x in row_id]
        logits = self.head(self.embed(input_ids))
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)
        return {"loss": loss, "logits": logits}


def row(i: int) -> dict:
    """Row i: a length between 3 and SEQ, padded to SEQ (a fixed shape, as dispatching needs)."""
    length = 3 + (i * 7) % (SEQ - 2)
    ids = [(i + j) % VOCAB for j in range(length)] + [0] * (SEQ - length)
    mask = [1] * length + [0] * (SEQ - length)
    labels = ids[:length] + [-100] * (SEQ - length)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels, "row_id": i}


def tokens_of(n: int) -> int:
    return sum(sum(row(i)["attention_mask"]) for i in range(n))


class MapRows(torch.utils.data.Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict:
        return row(i)


class StreamRows(torch.utils.data.IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield row(i)


def collate(rows: list[dict]) -> dict:
    return {k: torch.tensor([r[k] for r in rows]) for k in rows[0]}


def close_process_group() -> None:
    """Leave torch.distributed cleanly: gloo threads still running at interpreter exit can abort the process."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
