"""Runs inside a virtualenv that has one verl release on its path (see tools/record_rl.py); prints one JSON line per case.

For each case it builds verl's real Hydra config (`ppo_trainer.yaml` composed with the case's overrides), writes tiny
parquet prompts, and lets verl's own code do the counting:

- `RayPPOTrainer._create_dataloader` (called on a trainer object made without Ray workers): verl's dataset factory
  (`RLHFDataset`, with `filter_overlong_prompts` and `train_max_samples`), its sampler factory and `StatefulDataLoader`;
  then `len(train_dataloader)`, `total_training_steps` and the value injected into `actor.optim.total_training_steps`;
- the actor's mini-batch loop: 0.3-0.7 (`use_legacy_worker_impl: auto`) `DataParallelPPOActor.update_policy` iterates `data.split(ppo_mini_batch_size)`
  `ppo_epochs` times (one `optimizer.step` each); the 0.8+ engine workers iterate `tensordict_utils.make_iterator`.
  Both are run here on a batch of the size one data-parallel rank receives;
- 0.8+: the LR scheduler through `FSDPEngine._build_lr_scheduler` (warmup and horizon), stepped once per training step;
- 0.9+ cases marked `"trainer": "v1"`: the v1 trainer's `PPOTrainer._init_dataloader` (steps per epoch, total training
  steps, the horizon it writes into `actor.optim.total_training_steps`).

Usage (by record_rl.py): python rl_verl_worker.py CASES_JSON VERL_VERSION TOKENIZER_JSON WORKDIR
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import sys

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|> {% endif %}")
"""A tiny chat template: enough for `apply_chat_template(..., add_generation_prompt=True)`, as verl's filter calls it."""


def words(i: int) -> str:
    """Prompt i: a deterministic sentence of 3..60 words (so prompt lengths spread around max_prompt_length)."""
    vocab = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "it", "is", "what", "how", "many"]
    n = 3 + (i * 37) % 58
    return " ".join(vocab[(i * 7 + k * 3) % len(vocab)] for k in range(n))


def write_parquet(path: pathlib.Path, n: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"data_source": "tiny", "prompt": [{"role": "user", "content": words(i)}], "ability": "math",
             "reward_model": {"style": "rule", "ground_truth": "1"}, "extra_info": {"index": i}} for i in range(n)]
    pq.write_table(pa.Table.from_pylist(rows), path)


def tokenizer(path: str):
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=path, pad_token="[PAD]", unk_token="[UNK]", eos_token="[EOS]")
    tok.chat_template = CHAT_TEMPLATE
    return tok


def compose(version_root: pathlib.Path, overrides: list[str]):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    config_dir = version_root / "verl" / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def build_dataloader(cfg, tok):
    import inspect

    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    trainer = RayPPOTrainer.__new__(RayPPOTrainer)
    trainer.config, trainer.tokenizer, trainer.processor = cfg, tok, None
    params = inspect.signature(RayPPOTrainer._create_dataloader).parameters
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if len(params) == 1:
            trainer._create_dataloader()
        else:
            trainer._create_dataloader(None, None, None, None)
    printed = [line for line in out.getvalue().splitlines() if line.startswith(("Total training steps", "Size of train dataloader"))]
    return trainer, printed


def build_dataloader_v1(cfg, tok):
    """0.9+: the v1 trainer (`trainer.use_v1`, the default of main_ppo from 0.9): `PPOTrainer._init_dataloader` on a
    trainer made without Ray workers, with the mode and `parameter_sync_step` its __init__ sets. `transfer_queue` (a
    dependency of the v1 agent loop only, not on this machine) is a stand-in module: the dataloader never uses it."""
    import logging
    import types

    class _Absent(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {})

    sys.modules.setdefault("transfer_queue", _Absent("transfer_queue"))
    import verl.trainer.ppo.v1  # noqa: F401  (registers the trainers of each mode)
    from verl.trainer.ppo.v1.trainer_base import get_trainer_cls

    cls = get_trainer_cls(cfg.trainer.v1.trainer_mode)
    trainer = cls.__new__(cls)
    trainer.config, trainer.tokenizer, trainer.processor = cfg, tok, None
    trainer.trainer_mode = cfg.trainer.v1.trainer_mode
    trainer.parameter_sync_step = cfg.trainer.v1.get(trainer.trainer_mode, {}).get("parameter_sync_step", 1)
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    logging.getLogger("verl.trainer.ppo.v1.trainer_base").addHandler(handler)
    logging.getLogger("verl.trainer.ppo.v1.trainer_base").setLevel(logging.INFO)
    with contextlib.redirect_stdout(io.StringIO()):
        trainer._init_dataloader()
    return trainer, [line for line in seen if line.startswith("Total training steps")]


class _Rows:
    """A stand-in dataset of N rows: the SFT loaders only need its length (SFTDataset reads parquet with a tokenizer)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


class _Mesh:
    """A device mesh of `size` data-parallel ranks seen from rank 0 (no process group is started)."""

    def __init__(self, size: int):
        self._size = size

    def get_rank(self) -> int:
        return 0

    def get_local_rank(self, dim=None) -> int:
        return 0

    def size(self, dim: int | None = None) -> int:
        return self._size


def run_fsdp_sft(case: dict, version_root: pathlib.Path) -> dict:
    """0.3-0.6 `verl.trainer.fsdp_sft_trainer`: `FSDPSFTTrainer._normalize_config_bsz` and `_build_dataloader` (verl's
    DistributedSampler and loader, both drop_last) on a trainer made without a model, for `prompts` rows over
    `n_gpus_per_node` data-parallel ranks; then `len(train_dataloader)`. 0.3 imports flash_attn's padding helpers at
    module level (training only): a stand-in module lets it import on CPU."""
    import types

    try:
        import flash_attn.bert_padding  # noqa: F401
    except ImportError:
        padding = types.ModuleType("flash_attn.bert_padding")
        for name in ("pad_input", "unpad_input", "rearrange", "index_first_axis"):
            setattr(padding, name, None)
        sys.modules.setdefault("flash_attn", types.ModuleType("flash_attn"))
        sys.modules["flash_attn.bert_padding"] = padding
    import inspect

    import verl.trainer.fsdp_sft_trainer as module
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(version_root / "verl" / "trainer" / "config"), version_base=None):
        cfg = hydra_compose(config_name="sft_trainer", overrides=case["overrides"])
    dp = case["n_gpus_per_node"]
    trainer = module.FSDPSFTTrainer.__new__(module.FSDPSFTTrainer)
    trainer.config, trainer.device_mesh, trainer.ulysses_device_mesh, trainer.tokenizer = cfg, _Mesh(dp), None, None
    with contextlib.redirect_stdout(io.StringIO()):
        trainer._normalize_config_bsz()
        if len(inspect.signature(module.FSDPSFTTrainer._build_dataloader).parameters) == 3:
            trainer._build_dataloader(_Rows(case["prompts"]), _Rows(4))
        else:  # 0.3 builds SFTDataset from data.train_files itself
            module.SFTDataset = lambda parquet_files, **kw: _Rows(case["prompts"] if parquet_files == "train" else 4)
            trainer._build_dataloader()
    return {"name": case["name"], "trainer": "fsdp_sft", "per_rank_batch": cfg.data.train_batch_size,
            "len_train_dataloader": len(trainer.train_dataloader),
            "defaults": {key: _select(cfg, key) for key in ("data.train_batch_size", "trainer.total_epochs", "trainer.total_training_steps",
                                                            "trainer.save_freq", "trainer.test_freq", "optim.warmup_steps_ratio",
                                                            "optim.lr_warmup_steps_ratio", "optim.lr_scheduler")}}


def actor_updates(case: dict, cfg) -> int:
    """Optimizer steps of one actor update on one data-parallel rank, through verl's own mini-batch iteration."""
    import torch

    dp = case["n_gpus_per_node"] * case.get("nnodes", 1)
    n = cfg.actor_rollout_ref.rollout.n
    per_rank = cfg.data.train_batch_size * n // dp
    epochs = cfg.actor_rollout_ref.actor.ppo_epochs
    import importlib.util

    legacy = importlib.util.find_spec("verl.workers.fsdp_workers") is not None  # the default ("auto") up to 0.7
    try:
        if legacy:
            raise ImportError("the release's default actor is the FSDP worker's DataParallelPPOActor")
        from verl.utils import tensordict_utils as tu  # 0.8+: engine workers' TrainingWorker.train_mini_batch
        mini = cfg.actor_rollout_ref.actor.ppo_mini_batch_size * n // dp
        from tensordict import TensorDict

        data = TensorDict({"x": torch.arange(per_rank)}, batch_size=[per_rank])
        iterator = tu.make_iterator(data, mini_batch_size=mini, epochs=epochs, seed=42, dataloader_kwargs={"shuffle": True})
        return sum(1 for _ in iterator)
    except ImportError:
        from verl import DataProto

        mini = cfg.actor_rollout_ref.actor.ppo_mini_batch_size * n // dp  # fsdp_workers: *= rollout.n, //= dp size
        data = DataProto.from_single_dict({"x": torch.arange(per_rank)})
        # update_policy: for epoch: for mini-batch: optimizer step. 0.3-0.4 split the TensorDict (`batch.split`),
        # 0.5-0.7 the DataProto (`data.split`)
        mini_batches = data.split(mini) if hasattr(data, "split") else data.batch.split(mini)
        return len(mini_batches) * epochs


def scheduler(cfg, total: int):
    """0.8+: FSDPEngine._build_lr_scheduler with the actor's optim config; None where it is inline in the workers."""
    import torch

    try:
        from verl.utils.config import omega_conf_to_dataclass
        from verl.workers.engine.fsdp.transformer_impl import FSDPEngine
    except ImportError:
        return None
    holder = type("EngineStandIn", (), {})()
    holder.optimizer_config = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor.optim)
    holder.rank = 0
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=1.0)
    with contextlib.redirect_stdout(io.StringIO()):
        sched = FSDPEngine._build_lr_scheduler(holder, opt)
    lrs = []
    for _ in range(total + 2):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    peak = max(lrs)
    warmup = next(i for i, lr in enumerate(lrs) if lr >= peak - 1e-12)
    return {"warmup_steps": warmup, "lr_at_steps": [round(x, 6) for x in lrs], "type": cfg.actor_rollout_ref.actor.optim.get("lr_scheduler_type")}


def run_case(case: dict, version_root: pathlib.Path, tok_path: str, work: pathlib.Path) -> dict:
    if case.get("trainer") == "fsdp_sft":
        return run_fsdp_sft(case, version_root)
    train = work / f"{case['name']}_train.parquet"
    val = work / f"{case['name']}_val.parquet"
    write_parquet(train, case["prompts"])
    write_parquet(val, 4)
    overrides = [f"data.train_files={train}", f"data.val_files={val}", *case["overrides"]]
    cfg = compose(version_root, overrides)
    if case.get("trainer") == "v1":
        trainer, printed = build_dataloader_v1(cfg, tokenizer(tok_path))
        return {"name": case["name"], "trainer": "v1", "trainer_mode": trainer.trainer_mode,
                "parameter_sync_step": trainer.parameter_sync_step, "dataset_len": len(trainer.train_dataset),
                "len_train_dataloader": len(trainer.train_dataloader), "steps_per_epoch": trainer.steps_per_epoch,
                "total_training_steps": trainer.total_training_steps,
                "actor_optim_total_training_steps": cfg.actor_rollout_ref.actor.optim.total_training_steps,
                "gen_batch_size": cfg.data.get("gen_batch_size"), "printed": printed,
                "defaults": {key: _select(cfg, key) for key in DEFAULT_KEYS + ("trainer.use_v1", "trainer.v1.trainer_mode")}}
    trainer, printed = build_dataloader(cfg, tokenizer(tok_path))
    total = trainer.total_training_steps
    record = {
        "name": case["name"],
        "dataset_len": len(trainer.train_dataset),
        "len_train_dataloader": len(trainer.train_dataloader),
        "total_training_steps": total,
        "actor_optim_total_training_steps": cfg.actor_rollout_ref.actor.optim.total_training_steps,
        "printed": printed,
        "actor_updates_per_step": actor_updates(case, cfg),
        "defaults": {key: _select(cfg, key) for key in DEFAULT_KEYS},
    }
    try:  # verl's console logger line for the last step, to test `explain` on verl's own format
        from verl.utils.logger.aggregate_logger import concat_dict_to_str

        epochs = (total - 1) // max(len(trainer.train_dataloader), 1)
        record["console_line"] = concat_dict_to_str({"actor/pg_loss": 0.01, "training/global_step": total, "training/epoch": epochs}, total)
    except ImportError:
        pass
    sched = scheduler(cfg, total)
    if sched is not None:
        record["scheduler"] = sched
    return record


DEFAULT_KEYS = ("data.train_batch_size", "data.gen_batch_size", "data.filter_overlong_prompts", "data.max_prompt_length",
                "data.train_max_samples", "actor_rollout_ref.actor.ppo_mini_batch_size", "actor_rollout_ref.actor.ppo_epochs",
                "actor_rollout_ref.rollout.n", "actor_rollout_ref.actor.optim.lr_warmup_steps",
                "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio", "actor_rollout_ref.actor.optim.lr_scheduler_type",
                "actor_rollout_ref.actor.optim.warmup_style", "trainer.total_epochs", "trainer.total_training_steps",
                "trainer.test_freq", "trainer.save_freq", "trainer.critic_warmup", "trainer.val_before_train",
                "algorithm.adv_estimator", "critic.ppo_mini_batch_size", "critic.ppo_epochs")


def _select(cfg, key: str):
    from omegaconf import OmegaConf

    try:
        value = OmegaConf.select(cfg, key, throw_on_missing=False)
    except Exception as exc:  # an interpolation that needs runtime values
        return f"<{type(exc).__name__}>"
    return OmegaConf.to_container(value) if OmegaConf.is_config(value) else value


def main() -> None:
    cases = json.loads(pathlib.Path(sys.argv[1]).read_text())
    version_root, tok_path, work = pathlib.Path(sys.argv[2]), sys.argv[3], pathlib.Path(sys.argv[4])
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for case in cases:
        try:
            record = run_case(case, version_root, tok_path, work)
        except Exception as exc:  # recorded: the release refuses or lacks this setting
            record = {"name": case["name"], "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        print("RLCASE " + json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
