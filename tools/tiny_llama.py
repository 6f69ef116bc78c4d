"""The recorders' model: a one-layer Llama sized to the tokenizer already in a folder, built from a config (no
download) and saved beside it. Shared by tools/record_{lf,trl,swift,axolotl}_tokens.py, which run it in their own
virtualenvs (transformers imported here, not at the top)."""

from __future__ import annotations

import pathlib


def save_tiny_llama(folder: pathlib.Path) -> None:
    """Load the tokenizer in `folder` and save a tiny LlamaForCausalLM there (16 hidden units, 2 heads, 4,096 positions)."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    config = LlamaConfig(vocab_size=len(tokenizer) + 64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(folder)
