"""TrainstepsCallback passed to TRL's SFTTrainer (`callbacks=[...]`): its rows and tokens equal what
the batches really fed to the model (counted independently, at the collator). A tiny Llama and a word-level tokenizer are built in memory."""

from __future__ import annotations

import pytest

from .conftest import needs

pytestmark = pytest.mark.live
needs("torch", "transformers", "trl", "datasets", "tokenizers")


def tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<eos>", "<unk>"] + [f"w{i}" for i in range(40)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")


def test_sft_trainer_with_the_callback(tmp_path):
    import datasets
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import SFTConfig, SFTTrainer

    from trainsteps.integrations.hf import TrainstepsCallback

    tokenizer = tiny_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    model = LlamaForCausalLM(config)
    texts = [" ".join(f"w{(i + j) % 40}" for j in range(3 + i % 9)) for i in range(30)]
    train = datasets.Dataset.from_dict({"text": texts})
    cb = TrainstepsCallback()
    args = SFTConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, gradient_accumulation_steps=2, num_train_epochs=2,
                     logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, disable_tqdm=True, max_length=32)
    trainer = SFTTrainer(model=model, args=args, train_dataset=train, processing_class=tokenizer, callbacks=[cb])
    # an independent count: one process and no loader workers, so every collated batch reaches the model once
    seen = {"rows": 0, "tokens": 0}
    collate = trainer.data_collator

    def counting_collator(features):
        batch = collate(features)
        seen["rows"] += int(batch["input_ids"].shape[0])
        mask = batch.get("attention_mask")
        seen["tokens"] += int((mask != 0).sum()) if mask is not None else int(batch["input_ids"].numel())
        return batch
    trainer.data_collator = counting_collator
    trainer.train()
    assert seen["rows"] == 60  # 2 epochs of 30 rows on one process
    assert (cb.samples_seen, cb.tokens_seen) == (seen["rows"], seen["tokens"])
    last = trainer.state.log_history[-1]
    assert last["samples_seen"] == 60 and last["equivalent_epoch"] == 2.0
    assert cb.schedule is not None and cb.schedule.run.samples_seen == 60
