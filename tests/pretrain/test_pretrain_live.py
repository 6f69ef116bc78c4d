"""Live re-check against megatron-core itself (`pytest -m live`; needs megatron-core, torch and numpy installed).

The full set of cases is recorded in tests/fixtures/pretrain/mcore.json by tools/record_pretrain.py; this re-runs one
split build so a CI job with the framework installed notices when a new release changes the arithmetic."""

import pytest

pytestmark = pytest.mark.live


def test_megatron_core_builds_what_trainsteps_plans(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("megatron.core")
    from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig

    from trainsteps.data.idx import IdxReader, write_idx_from_lengths
    from trainsteps.frameworks.megatron import MegatronSpec, plan_megatron

    lengths = [(i * 37) % 301 + 1 for i in range(800)]
    prefix = write_idx_from_lengths(str(tmp_path / "live"), lengths)

    class Tok:
        eod, pad, vocab_size, unique_identifiers = 0, 1, 1000, {"class": "Tok"}

    config = GPTDatasetConfig(random_seed=1, sequence_length=96, blend=([prefix], None), split="949,50,1", path_to_cache=str(tmp_path / "c"),
                              tokenizer=Tok(), reset_position_ids=False, reset_attention_mask=False, eod_mask_loss=False)
    train, valid, test = BlendedMegatronDatasetBuilder(GPTDataset, [3000, 400, 100], lambda: True, config).build()
    spec = MegatronSpec(world_size=1, micro_batch_size=1, global_batch_size=1, train_samples=3000, eval_interval=1000, eval_iters=1,
                        eval_global_batch_size=100, seq_length=96, split="949,50,1", dataset=IdxReader(prefix))
    d = plan_megatron(spec).derivation
    assert d["train.length"].value == len(train)
    assert d["valid.length"].value == len(valid)
    assert d["test.length"].value == len(test)
