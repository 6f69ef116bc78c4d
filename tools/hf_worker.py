"""Runs recorded cases with the REAL transformers Trainer (inside a per-release virtualenv).

Started by tools/record_hf.py, either as a plain process (world_size 1) or under
``python -m torch.distributed.run --nproc_per_node W`` (CPU, gloo).  Every rank runs the same
list of cases, one fresh Trainer per case, and appends one JSON line per case to
``<results_dir>/rank<R>.jsonl``:

* rank 0: the full record (banner, log text, callback events, state, counters, error);
* other ranks: only their own counters (rows forwarded, forward calls, optimizer updates),
  which record_hf.py sums into ``samples_seen``.

Nothing here predicts anything: every recorded value is read from the running Trainer, its
callbacks, its logger, the LR scheduler it built, or counters in the model/optimizer.
"""
from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import logging
import os
import shutil
import sys
import time
import traceback

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # old releases + torch>=2.6 resume
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))

# Forward passes per rank above which a case is aborted (guards against loops that never end).
FORWARD_LIMIT = 60000
# Epoch-end events above which a case is aborted (e.g. an empty loader with max_steps set).
EPOCH_LIMIT = 5000

# Inputs that are TrainingArguments fields with the same name.
ARG_KEYS = [
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps",
    "dataloader_drop_last", "warmup_ratio", "warmup_steps", "logging_strategy", "logging_steps",
    "logging_first_step", "eval_strategy", "eval_steps", "save_strategy", "save_steps",
    "eval_delay", "metric_for_best_model", "greater_is_better",
]
# Inputs handled by the harness itself, with their defaults.
HARNESS_DEFAULTS = {"world_size": 1, "split_batches": False, "streaming": False, "resume_from_step": None}
# Harness choices that differ from the Trainer's defaults (applied unless the case sets them).
HARNESS_OVERRIDES = {"save_strategy": "no"}
EVAL_ROWS = 6

COUNTERS = {"forward_calls": 0, "samples": 0, "optimizer_updates": 0}


# --------------------------------------------------------------------------------------------
# model and data
class TinyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(1, 1)

    def forward(self, x, labels=None):
        if self.training:
            COUNTERS["forward_calls"] += 1
            COUNTERS["samples"] += int(x.shape[0])
            if COUNTERS["forward_calls"] > FORWARD_LIMIT:
                raise RuntimeError(f"harness: more than {FORWARD_LIMIT} forward passes on one rank, aborted")
        out = self.lin(x)
        loss = ((out - labels) ** 2).mean()
        return {"loss": loss}


def _row(i):
    v = (i % 97) / 97.0
    return {"x": [v], "labels": [2.0 * v + 1.0]}


class MapDataset(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i < 0 or i >= self.n:
            raise IndexError(i)
        return _row(i)


class StreamDataset(torch.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield _row(i)


PATCHES_USED: list = []
_orig_torch_load = torch.load


def _torch_load_compat(*args, **kwargs):
    """Environment shim: torch 2.13 cannot restore storages to map_location 'cpu:N', which older
    releases pass (map_location=args.device) when resuming under torch.distributed on CPU."""
    ml = kwargs.get("map_location")
    if ml is not None and str(ml).startswith("cpu:"):
        kwargs["map_location"] = "cpu"
        note = f"torch.load map_location {ml} -> cpu"
        if note not in PATCHES_USED:
            PATCHES_USED.append(note)
    return _orig_torch_load(*args, **kwargs)


torch.load = _torch_load_compat


def _opt_post_hook(optimizer, args, kwargs):
    COUNTERS["optimizer_updates"] += 1


import torch.optim.optimizer as _torch_optimizer  # noqa: E402

_torch_optimizer.register_optimizer_step_post_hook(_opt_post_hook)


# --------------------------------------------------------------------------------------------
# log capture
FORMAT = "[%(levelname)s|%(filename)s:%(lineno)s] >> %(message)s"


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records = []
        self.setFormatter(logging.Formatter(FORMAT))

    def emit(self, record):
        try:
            self.records.append((record.name, record.getMessage(), self.format(record)))
        except Exception:  # pragma: no cover
            pass


CAPTURE = Capture()


def install_capture():
    transformers.utils.logging.set_verbosity_info()
    lg = logging.getLogger("transformers")
    lg.addHandler(CAPTURE)


def extract_banner(records):
    lines = []
    for i, (_, msg, _) in enumerate(records):
        if msg.strip() == "***** Running training *****":
            lines = [msg]
            for _, m2, _ in records[i + 1:]:
                if m2.startswith("  "):
                    lines.append(m2)
                else:
                    break
            break  # first banner
    banner = {}
    for ln in lines[1:]:
        if " = " in ln:
            k, v = ln.strip().split(" = ", 1)
            banner[k] = v
        elif ": " in ln and "adjusted to" in ln:
            k, v = ln.strip().rsplit(": ", 1)
            banner[k] = v
    return banner, lines


# --------------------------------------------------------------------------------------------
class Recorder(TrainerCallback):
    def __init__(self):
        self.epoch_end, self.logs, self.evals, self.saves = [], [], [], []
        self.epoch_end_state, self.eval_losses = [], []

    def on_epoch_end(self, args, state, control, **kw):
        self.epoch_end.append(state.global_step)
        self.epoch_end_state.append(state.epoch)
        if len(self.epoch_end) > EPOCH_LIMIT:
            raise RuntimeError(f"harness: more than {EPOCH_LIMIT} epochs ended, aborted (the loop would not end)")

    def on_log(self, args, state, control, logs=None, **kw):
        if logs and "loss" in logs:
            self.logs.append(state.global_step)

    def on_evaluate(self, args, state, control, metrics=None, **kw):
        self.evals.append(state.global_step)
        self.eval_losses.append((metrics or {}).get("eval_loss"))

    def on_save(self, args, state, control, **kw):
        self.saves.append(state.global_step)


def _fields():
    return {f.name: f for f in dataclasses.fields(TrainingArguments)}


def _plain(v):
    if isinstance(v, enum.Enum):
        return v.value
    return v


def field_default(name):
    f = _fields().get(name)
    if f is None:
        return None
    if f.default is not dataclasses.MISSING:
        return _plain(f.default)
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return _plain(f.default_factory())  # type: ignore[misc]
    return None


def filled_inputs(case):
    inp = {"num_examples": case["num_examples"]}
    for k, d in HARNESS_DEFAULTS.items():
        inp[k] = case.get(k, d)
    fields = _fields()
    for k in ARG_KEYS:
        if k in case:
            inp[k] = case[k]
        elif k in HARNESS_OVERRIDES:
            inp[k] = HARNESS_OVERRIDES[k]
        else:
            name = k
            if k == "eval_strategy" and "eval_strategy" not in fields:
                name = "evaluation_strategy"
            inp[k] = field_default(name) if name in fields else None
    return inp


class Skip(Exception):
    pass


def build_args(case, output_dir, overrides=None):
    fields = _fields()
    kw = {"output_dir": output_dir, "report_to": "none", "disable_tqdm": True, "seed": 42}
    if "use_cpu" in fields:
        kw["use_cpu"] = True
    else:
        kw["no_cuda"] = True
    if WORLD > 1 and "ddp_backend" in fields:
        kw["ddp_backend"] = "gloo"
    if "prediction_loss_only" in fields:
        kw["prediction_loss_only"] = True
    for k, v in HARNESS_OVERRIDES.items():
        kw[k] = v
    for k in ARG_KEYS:
        if k in case:
            name = k
            if k == "eval_strategy" and "eval_strategy" not in fields:
                name = "evaluation_strategy"
            kw[name] = case[k]
    if case.get("split_batches"):
        if "accelerator_config" in fields:
            kw["accelerator_config"] = {"split_batches": True}
        else:
            raise Skip("TrainingArguments has no accelerator_config in this release")
    if overrides:
        kw.update(overrides)
    return TrainingArguments(**kw)


def reset_accelerate_state():
    """Fresh accelerate singletons per case (as in a fresh process), keeping the process group."""
    try:
        from accelerate.state import AcceleratorState, GradientState
    except Exception:
        return
    try:
        import inspect
        if "reset_partial_state" in inspect.signature(AcceleratorState._reset_state).parameters:
            AcceleratorState._reset_state(reset_partial_state=False)
        elif WORLD == 1:
            AcceleratorState._reset_state()
    except Exception:
        pass
    try:
        GradientState._reset_state()
    except Exception:
        pass


def reset_counters():
    for k in COUNTERS:
        COUNTERS[k] = 0


def warmup_from_scheduler(trainer, max_steps):
    sched = getattr(trainer, "lr_scheduler", None)
    if sched is None:
        return None
    inner = getattr(sched, "scheduler", sched)
    lambdas = getattr(inner, "lr_lambdas", None)
    if not lambdas:
        return None
    fn = lambdas[0]
    top = int(max_steps or 0)
    for s in range(0, top + 1):
        try:
            if fn(s) >= 1.0 - 1e-12:
                return s
        except Exception:
            return None
    return None


def make_trainer(case, args, cb):
    n = case["num_examples"]
    train_ds = StreamDataset(n) if case.get("streaming") else MapDataset(n)
    eval_ds = None
    if case.get("eval_strategy", "no") != "no":
        eval_ds = MapDataset(EVAL_ROWS)
    torch.manual_seed(0)
    model = TinyModel()
    return Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds, callbacks=[cb])


def run_case(case, workdir):
    cid = case["id"]
    out_dir = os.path.join(workdir, cid)
    if RANK == 0 and os.path.isdir(out_dir):
        shutil.rmtree(out_dir, ignore_errors=True)
    rec = {"case": cid, "inputs": filled_inputs(case)}
    trainer = None
    cb = Recorder()
    t0 = time.time()
    error = None
    try:
        resume = case.get("resume_from_step")
        ckpt = None
        if resume:
            # first run: same config, saving checkpoint-K; not recorded
            reset_accelerate_state()
            args0 = build_args(case, out_dir, {"save_strategy": "steps", "save_steps": resume})
            t_first = make_trainer(case, args0, Recorder())
            t_first.train()
            ckpt = os.path.join(out_dir, f"checkpoint-{resume}")
            del t_first
        reset_counters()
        PATCHES_USED.clear()
        CAPTURE.records.clear()
        reset_accelerate_state()
        args = build_args(case, out_dir)
        trainer = make_trainer(case, args, cb)
        if ckpt is not None:
            trainer.train(resume_from_checkpoint=ckpt)
        else:
            trainer.train()
    except Skip as e:
        return {"case": cid, "skipped": str(e)}
    except BaseException as e:  # noqa: BLE001 - record whatever the Trainer raised
        if isinstance(e, KeyboardInterrupt):
            raise
        msg = str(e)
        error = f"{type(e).__name__}: {msg}".replace(workdir, "<workdir>")
        rec["traceback_tail"] = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-8:]).replace(workdir, "<workdir>")
    banner, lines = extract_banner(CAPTURE.records)
    rec["banner"] = banner
    rec["banner_lines"] = lines
    rec["log_text"] = "\n".join(r[2] for r in CAPTURE.records).replace(workdir, "<workdir>")
    state = getattr(trainer, "state", None) if trainer is not None else None
    rec["max_steps"] = getattr(state, "max_steps", None) if state is not None else None
    rec["final_global_step"] = getattr(state, "global_step", None) if state is not None else None
    rec["state_epoch"] = getattr(state, "epoch", None) if state is not None else None
    rec["epoch_end_steps"] = cb.epoch_end
    rec["epoch_end_state_epochs"] = cb.epoch_end_state
    rec["eval_losses"] = cb.eval_losses
    rec["log_steps"] = cb.logs
    rec["eval_steps"] = cb.evals
    rec["save_steps"] = cb.saves
    rec["warmup_steps"] = warmup_from_scheduler(trainer, rec["max_steps"]) if trainer is not None else None
    rec["real_optimizer_updates"] = COUNTERS["optimizer_updates"]
    rec["samples_seen"] = COUNTERS["samples"]  # this rank; record_hf.py sums over ranks
    rec["forward_calls_rank0"] = COUNTERS["forward_calls"]
    rec["trainable_parameters"] = None
    if trainer is not None:
        rec["trainable_parameters"] = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    rec["error"] = error
    if PATCHES_USED:
        rec["harness_patches"] = list(PATCHES_USED)
    rec["seconds"] = round(time.time() - t0, 2)
    if RANK == 0:
        shutil.rmtree(out_dir, ignore_errors=True)
    return rec


def probe():
    import importlib.metadata as md
    vers = {}
    for dist in ("transformers", "accelerate", "torch", "numpy", "huggingface_hub", "safetensors", "tokenizers"):
        try:
            vers[dist] = md.version(dist)
        except Exception:
            vers[dist] = None
    vers["python"] = "{}.{}.{}".format(*sys.version_info[:3])
    return vers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", help="JSON file: {'cases': [...], 'workdir': ...}")
    ap.add_argument("--results-dir")
    ap.add_argument("--probe", action="store_true")
    a = ap.parse_args()
    if a.probe:
        print(json.dumps(probe()))
        return
    spec = json.load(open(a.spec))
    install_capture()
    out_path = os.path.join(a.results_dir, f"rank{RANK}.jsonl")
    with open(out_path, "a") as out:
        for case in spec["cases"]:
            rec = run_case(case, spec["workdir"])
            if RANK != 0 and "skipped" not in rec:
                rec = {"case": rec["case"], "samples_seen": rec["samples_seen"],
                       "forward_calls": rec["forward_calls_rank0"],
                       "real_optimizer_updates": rec["real_optimizer_updates"], "error": rec["error"]}
            out.write(json.dumps(rec) + "\n")
            out.flush()
            os.fsync(out.fileno())


if __name__ == "__main__":
    main()
