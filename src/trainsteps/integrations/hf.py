"""A `transformers.TrainerCallback` that checks the plan at train begin and tracks progress in data.

    from trainsteps.integrations.hf import TrainstepsCallback
    trainer = Trainer(..., callbacks=[TrainstepsCallback(dataset_size=1_000_000)])

* train begin: plans the run with `trainsteps.plan` from the Trainer's own arguments, dataset and
  world size, logs it, and warns when the Trainer's `state.max_steps` disagrees or when the
  release will not do what the settings suggest (e.g. the 4.47-4.51 early stop).
* every log: adds `samples_seen`, `tokens_seen` and `equivalent_epoch` (samples seen / dataset
  size) to the Trainer's logs, so the console, TensorBoard, W&B and `trainer_state.json` show them.
  They count the rows and non-padding tokens the model really received, summed over ranks.
* optional: evaluate and/or save every N minutes of wall clock.
* every log: `eta_seconds` (remaining time to the step where the run really ends, evaluations and saves ahead
  included), `tokens_per_second`, and `mfu` when the GPU's peak is known (`gpu="h100-sxm"` or `peak_tflops=`). The
  rate skips the first steps after a (re)start, leaves out evaluation and save pauses, and re-bases on a resume; until
  it has warmed up the ETA is unknown and not logged.

It never breaks a run: any internal error becomes one warning and the callback switches itself
off (on every rank at once). transformers is imported only when `TrainstepsCallback` is first used,
so `import trainsteps` stays light.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from trainsteps.derivation import format_epochs
from trainsteps.integrations._counting import Clock, Counter, FaultGuard, RankSync, get_logger
from trainsteps.integrations._counting import dataset_length as _length

__all__ = ["TrainstepsCallback"]  # noqa: F822 - built on first access, see __getattr__

logger = get_logger("transformers.trainsteps")


def _message(msg_id: str, **params) -> str:
    from trainsteps.i18n import message

    return message(msg_id, "en", **params)


class _Tracker(FaultGuard):
    """The callback's behaviour; mixed into `transformers.TrainerCallback` on first use."""

    _logger = logger

    def __init__(self, dataset_size: int | None = None, dataset_tokens: int | None = None, seq_length: int | None = None,
                 eval_every_minutes: float | None = None, save_every_minutes: float | None = None, log_plan: bool = True,
                 eta: bool = True, gpu: str | None = None, peak_tflops: float | None = None, eta_warmup_steps: int = 2):
        """
        dataset_size: rows in one pass over the training data; needed for iterable datasets (a map-style
            dataset's `len()` is used otherwise).
        dataset_tokens: tokens in one pass (gives `equivalent_epoch` from tokens when the size in rows is unknown).
        seq_length: tokens per packed row, for the plan of a packed stream.
        eval_every_minutes / save_every_minutes: also evaluate / save when this much wall-clock time has passed.
        log_plan: log the plan and its warnings at train begin.
        eta: log `eta_seconds` and `tokens_per_second` (and `mfu` with `gpu` or `peak_tflops`).
        gpu: accelerator name from trainsteps' table (e.g. "h100-sxm", "a100-80g"), for `mfu`.
        peak_tflops: peak dense TFLOP/s of one device, instead of `gpu`.
        eta_warmup_steps: steps after a (re)start that the rate does not use (compile, first dataloader fill).
        """
        self.dataset_size = dataset_size
        self.dataset_tokens = dataset_tokens
        self.seq_length = seq_length
        self.log_plan = log_plan
        self.enabled = True
        self.schedule = None
        """The trainsteps plan made at train begin (None when it could not be made)."""
        self.samples_seen = 0
        self.tokens_seen = 0
        self._counter = Counter()
        self._hook = None
        self._sync = RankSync.__new__(RankSync)
        self._sync.active, self._sync.world = False, 1
        self._eval_clock = Clock(eval_every_minutes)
        self._save_clock = Clock(save_every_minutes)
        self._size = dataset_size
        self.eta_enabled = eta
        self._gpu, self._peak_tflops = gpu, peak_tflops
        from trainsteps.integrations._eta import EtaState

        self.eta = EtaState(warmup_steps=eta_warmup_steps)
        """The ETA's state; `eta.estimate` is the latest remaining-time estimate (None while unknown)."""
        self._said_unknown = False

    # --- events -------------------------------------------------------------------------------

    def on_train_begin(self, args, state, control, model=None, train_dataloader=None, **kwargs):
        self._sync = RankSync()  # first, and trivially safe: every rank must know whether to take part in sums
        return self._guard(self._train_begin, args, state, control, model, train_dataloader)

    def on_step_begin(self, args, state, control, **kwargs):
        if self.eta_enabled and self.enabled:
            self._guard(self.eta.step_begin)

    def on_step_end(self, args, state, control, **kwargs):
        if self.eta_enabled and self.enabled:
            self._guard(self.eta.step_end, state.global_step)
        if self._eval_clock.seconds is None and self._save_clock.seconds is None:
            return None
        return self._guard(self._timed, args, state, control, collective=True)

    def on_evaluate(self, args, state, control, **kwargs):
        if self.eta_enabled and self.enabled:
            self._guard(self.eta.event, "eval")

    def on_save(self, args, state, control, **kwargs):
        if self.eta_enabled and self.enabled:
            self._guard(self.eta.event, "save")

    def on_log(self, args, state, control, logs=None, **kwargs):
        return self._guard(self._log, args, state, control, logs, collective=True)

    def on_train_end(self, args, state, control, **kwargs):
        self._remove_hook()

    # --- train begin ------------------------------------------------------------------------------

    def _train_begin(self, args, state, control, model, train_dataloader):
        self._counter = Counter()
        self._move_before_reporters()
        if model is not None:
            self._hook = model.register_forward_pre_hook(self._count_forward, with_kwargs=True)
        loader = train_dataloader if train_dataloader is not None else getattr(state, "train_dataloader", None)
        dataset = getattr(loader, "dataset", None)
        if dataset is None:  # releases that pass no dataloader to callbacks (e.g. 4.49): ask the Trainer
            dataset = getattr(_caller_with("train_dataset"), "train_dataset", None)
        sized = _length(dataset)
        if self._size is None:
            self._size = sized
        if self.log_plan or self.eta_enabled:
            self._check_plan(args, state, sized)
        if self.eta_enabled:
            self._start_eta(args, state, model)
        self._eval_clock.reset()
        self._save_clock.reset()
        if self._eval_clock.seconds is not None and _strategy(getattr(args, "eval_strategy", "no")) == "no":
            logger.warning("trainsteps: eval_every_minutes needs an eval_dataset and eval_strategy other than 'no'; timed evaluation is off")
            self._eval_clock.seconds = None

    def _check_plan(self, args, state, sized: int | None) -> None:
        import transformers

        from trainsteps import plan
        from trainsteps.spec import RunSpec

        streaming = sized is None
        timing = _timing_settings(args)
        try:
            spec = RunSpec(
                num_examples=sized if not streaming else self.dataset_size,
                per_device_train_batch_size=args.per_device_train_batch_size,
                gradient_accumulation_steps=args.gradient_accumulation_steps,
                world_size=max(1, int(args.world_size)),
                num_train_epochs=float(args.num_train_epochs),
                max_steps=int(args.max_steps),
                dataloader_drop_last=bool(args.dataloader_drop_last),
                streaming=streaming,
                resume_from_step=state.global_step or None,
                dataset_tokens=self.dataset_tokens if streaming and self.dataset_size is None else None,
                seq_length=self.seq_length,
                transformers=transformers.__version__,
            )
            try:  # with the evaluation/save schedule, for the ETA; without it when the engine refuses those settings
                self.schedule = plan(replace(spec, **timing))
            except Exception:  # noqa: BLE001
                self.schedule = plan(spec)
        except Exception as exc:  # noqa: BLE001 - a setting the engine does not model: say so, keep counting
            if state.is_world_process_zero and self.log_plan:
                logger.warning(_message("integration.plan_failed", error=f"{type(exc).__name__}: {exc}"))
            return
        if not state.is_world_process_zero or not self.log_plan:
            return
        s = self.schedule
        r = s.run
        epochs = r.equivalent_epochs if streaming else r.epochs_completed
        logger.info(_message("integration.plan", steps=r.optimizer_steps, version=s.version, family=s.family,
                             samples="?" if r.samples_seen is None else f"{r.samples_seen:,}", epochs=format_epochs(epochs)))
        if state.max_steps and state.max_steps != r.max_steps:
            logger.warning(_message("integration.steps_differ", trainer=state.max_steps, planned=r.max_steps, version=s.version))
        for trap in s.warnings:
            logger.warning(_message("integration.warning", code=trap.code, text=trap.message("en")))

    def _start_eta(self, args, state, model) -> None:
        eta = self.eta
        eta.begin(state.global_step)
        run = self.schedule.run if self.schedule is not None else None
        eta.final_step = run.optimizer_steps if run is not None else (state.max_steps or None)
        eta.eval_steps = list(run.eval_steps) if run is not None else []
        eta.save_steps = list(run.save_steps) if run is not None else []
        eta.devices = max(1, int(getattr(args, "world_size", 1) or 1))
        eval_rows = _length(getattr(_caller_with("eval_dataset"), "eval_dataset", None))
        if eval_rows and eta.eval_steps:  # forward only: a third of a training pass per row
            per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps
            eta.eval_share = eval_rows / eta.devices / per_step / 3
        if model is not None:
            from trainsteps.integrations._eta import model_flops_per_token

            eta.flops_per_token = model_flops_per_token(model, self.seq_length)
        if self._peak_tflops:
            eta.peak_flops = float(self._peak_tflops) * 1e12
        elif self._gpu:
            from trainsteps.timing.gpus import find_gpu

            eta.peak_flops = find_gpu(self._gpu).peak("bf16" if getattr(args, "bf16", False) or not getattr(args, "fp16", False) else "fp16")

    def _eta_values(self, state, tokens: int, logs) -> dict:
        if not self.eta_enabled or (logs is not None and any(str(k).startswith("eval_") for k in logs)):
            return {}
        values = self.eta.metrics(state.global_step, tokens or None)
        if not values and not self._said_unknown and state.is_world_process_zero:
            self._said_unknown = True
            logger.info(_message("integration.eta_unknown", steps=self.eta.clock.warmup_steps + self.eta.clock.min_steps))
        return values

    def _move_before_reporters(self) -> None:
        """Run right after DefaultFlowCallback, so TensorBoard/W&B callbacks see the added log values.

        User callbacks come after the reporting ones; the handler is found up the call stack and its
        list is replaced (not mutated), so the event loop in progress is not disturbed."""
        frame = sys._getframe(1)
        while frame is not None:
            handler = frame.f_locals.get("self")
            callbacks = getattr(handler, "callbacks", None)
            if type(handler).__name__ == "CallbackHandler" and isinstance(callbacks, list) and self in callbacks:
                rest = [c for c in callbacks if c is not self]
                flow = [c for c in rest if type(c).__name__ == "DefaultFlowCallback"]
                handler.callbacks = flow + [self] + [c for c in rest if c not in flow]
                return
            frame = frame.f_back

    # --- counting -------------------------------------------------------------------------------

    def _count_forward(self, module, args, kwargs):
        if not self.enabled or not module.training:
            return None
        try:
            self._counter.add(kwargs if kwargs else args)
        except Exception as exc:  # noqa: BLE001 - never break the forward pass
            self._switch_off(exc)
        return None

    def _totals(self) -> tuple[int, int, bool]:
        """(samples, tokens) over all ranks, and whether every rank is still counting."""
        ok = self.enabled
        try:
            values = list(self._counter.local()) if ok else [0, 0]
        except Exception as exc:  # noqa: BLE001
            self._switch_off(exc)
            ok, values = False, [0, 0]
        device = self._counter.tokens.device if (ok and self._counter.tokens is not None) else None
        (samples, tokens), everyone_ok = self._sync.sum(values, ok, device)
        return samples, tokens, everyone_ok

    def _log(self, args, state, control, logs):
        samples, tokens, everyone_ok = self._totals()
        if not everyone_ok:
            self._switch_off(RuntimeError("another rank switched its counting off"), collective=False)
            return None
        self.samples_seen, self.tokens_seen = samples, tokens
        values = {"samples_seen": samples, "tokens_seen": tokens}
        values.update(self._eta_values(state, tokens, logs))
        size = self._size
        if size:
            values["equivalent_epoch"] = round(samples / size, 6)
        elif self.dataset_tokens:
            values["equivalent_epoch"] = round(tokens / self.dataset_tokens, 6)
        if logs is not None:
            entry = state.log_history[-1] if state.log_history else None
            if isinstance(entry, dict) and all(entry.get(k) is v or entry.get(k) == v for k, v in logs.items() if k in entry):
                entry.update(values)
            logs.update(values)
        return None

    def _timed(self, args, state, control):
        want_eval, want_save = int(self._eval_clock.due()), int(self._save_clock.due())
        (want_eval, want_save), everyone_ok = self._sync.sum([want_eval, want_save], self.enabled)
        if not everyone_ok:
            self._switch_off(RuntimeError("another rank switched its counting off"), collective=False)
            return None
        # a clock differs a little between ranks: act when any rank is due, on every rank at the same step
        if want_eval:
            control.should_evaluate = True
            self._eval_clock.reset()
        if want_save:
            control.should_save = True
            self._save_clock.reset()
        if (want_eval or want_save) and state.is_world_process_zero:
            what = "evaluation" if want_eval else "checkpoint"
            minutes = (self._eval_clock.seconds if want_eval else self._save_clock.seconds) / 60
            logger.info(_message("integration.timed", minutes=minutes, what=what, step=state.global_step))
        return control


    def _on_switch_off(self) -> None:
        self._remove_hook()

    def _remove_hook(self) -> None:
        hook, self._hook = self._hook, None
        if hook is not None:
            try:
                hook.remove()
            except Exception:  # noqa: BLE001
                pass


def _caller_with(attribute: str):
    """The nearest object up the call stack (as `self`) that has this attribute, e.g. the Trainer."""
    frame = sys._getframe(1)
    while frame is not None:
        obj = frame.f_locals.get("self")
        if obj is not None and type(obj).__name__ != "CallbackHandler" and hasattr(obj, attribute) and hasattr(obj, "args"):
            return obj
        frame = frame.f_back
    return None


def _strategy(value) -> str:
    return str(getattr(value, "value", value))


def _timing_settings(args) -> dict:
    """The Trainer's evaluation and save schedule as RunSpec fields (the ETA adds the evaluations/saves ahead)."""
    out = {}
    eval_strategy = _strategy(getattr(args, "eval_strategy", "no"))
    if eval_strategy in ("steps", "epoch"):
        out["eval_strategy"] = eval_strategy
        if eval_strategy == "steps":
            out["eval_steps"] = float(getattr(args, "eval_steps", None) or getattr(args, "logging_steps", 500))
    save_strategy = _strategy(getattr(args, "save_strategy", "steps"))
    if save_strategy in ("steps", "epoch", "no"):
        out["save_strategy"] = save_strategy
        if save_strategy == "steps":
            out["save_steps"] = float(getattr(args, "save_steps", 500))
    return out


_CLASS = None


def _callback_class():
    global _CLASS
    if _CLASS is None:
        from transformers import TrainerCallback

        class TrainstepsCallback(_Tracker, TrainerCallback):
            __doc__ = _Tracker.__doc__ + "\n\n" + (_Tracker.__init__.__doc__ or "")

        TrainstepsCallback.__module__ = __name__
        _CLASS = TrainstepsCallback
    return _CLASS


def __getattr__(name: str):
    if name == "TrainstepsCallback":
        return _callback_class()
    raise AttributeError(name)
