"""Time of one RL training step (verl, OpenRLHF, EasyR1, TRL GRPO/RLOO/PPO, and any RL planner that hands over a
`RolloutShape`): generation, forwards, updates, weight sync, async overlap.

The entry for a planner: build a `RolloutShape` (prompts per step, samples per prompt, training steps, prompt and
response caps, sync or async, training GPUs and separate rollout GPUs, rollout tensor parallel size, ppo epochs,
reference / critic / old-log-prob forwards, weight copy), then `setup_from_shape(shape, model, gpu, prompt_tokens=,
response_tokens=)` and `rl_step_time(setup)`; planners/time.py does this for every RL plan.

One step, synchronous (the rollout engine and the trainer share the GPUs, as verl's hybrid engine does):

    step = generation + old log-probs + reference + critic values + actor update + critic update + weight sync
           + engine switch + reward + step overhead

    generation    prefill: 2·N FLOPs per prompt token, compute bound (prefill MFU);
                  decode: memory-bandwidth bound, continuous batching. Each rollout engine (tensor-parallel group of
                  `rollout_tp` GPUs) decodes its share of prompts x n sequences `concurrency` at a time (at most
                  `max_num_seqs`, and no more than the KV cache holds), then drains its longest response alone
                  (DECODE_TAIL_SHARE of the way from the mean to the cap). A decode step reads the engine's
                  weights (every expert of a mixture of experts) and the running sequences' KV cache at DECODE_BANDWIDTH_SHARE of peak HBM
                  bandwidth, less with a small batch (x concurrency / (concurrency + DECODE_HALF_BATCH)), and is
                  never faster than its FLOPs (the active parameters) nor than DECODE_STEP_FLOOR (HF_GENERATE_STEP
                  where the trainer generates with its own model: TRL without use_vllm).
    forwards      2·N (+ attention) FLOPs per token over prompts x n x (prompt + response) tokens, at the forward MFU
    updates       6·N (LoRA 4·N) per token x ppo_epochs, at the training MFU of timing.flops x UPDATE_EFFICIENCY
                  (x MOE_TRAIN_SHARE for a mixture of experts, forwards too; x LIGHT_CARD_TRAIN on a card whose dense
                  BF16 peak is under LIGHT_CARD_PEAK: light_card)
    weight sync   the policy's weights (all of them) copied to the rollout engine each step: bytes/param x N over
                  the copy bandwidth (SYNC_GB_PER_S, fitted on published copy times when rl_fit has one; else
                  per GPU of a rollout engine at an assumed NVLink rate)
    engine switch a colocated engine's sleep and wake-up: its weight shard out and back at ENGINE_SWITCH_GB_PER_S
                  (when fitted; else the step overhead carries it)
    reward        responses x REWARD_SECONDS_PER_ROLLOUT (when fitted)
    multi-turn    a rollout of T turns (agent and tool-calling runs) decodes in T sequential rounds: each extra round
                  re-prefills the grown context (prompt + the turns before it) and waits on the tool or environment,
                  (T - 1) x TURN_SECONDS (when fitted; the interval x/÷ TURN_SPREAD: the tool's latency is not known)
    stack level   the step x STACK_LEVELS[stack] - 1 for a stack whose steps run slower than the model (when fitted)
    step overhead a fixed time per step (scheduling, and whatever the lines above do not carry), fitted; below one
                  8-GPU node it and the weight copy x (GPUs / 8) ** SMALL_SETUP_EXPONENT

Asynchronous (one-step off-policy: generation of step k+1 overlaps training on step k):

    step = max(generation, forwards + updates) + weight sync + engine switch + reward + step overhead
           (the `overlap` part is the time taken off)

The step's interval is its parts' (each efficiency at its best and worst); a run on one GPU widens it x/÷
ONE_GPU_SPREAD around the same expected step (when fitted): such steps scatter furthest from the model.

DECODE_BANDWIDTH_SHARE, DECODE_HALF_BATCH, UPDATE_EFFICIENCY, STEP_OVERHEAD, the copy bandwidth and the typical
response length (used when only the cap is known) are fitted on published step times (timing/rl_fit.py, written by tools/fit_rl_time.py from
tests/fixtures/timing/rl_step_corpus.json); the held-out score is in rl_fit.HELD_OUT (the leave-one-source-out score in rl_fit.LOSO until a held-out split is scored) and docs/time.md. A measured
step time (`--step-time`) replaces the model: wall = training steps x step time, exactly.
Pure: no I/O, no CLI; numbers recorded in a `Derivation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.timing import rl_fit
from trainsteps.timing.estimate import Interval
from trainsteps.timing.flops import MFU_DEFAULTS, ModelShape, eval_flops_per_token, train_flops_per_token
from trainsteps.timing.gpus import Gpu
from trainsteps.timing.overheads import ADAPTER_SHARE

HBM_TB_PER_S = {
    "gh200": 4.0, "gb200": 8.0, "h100-sxm": 3.35, "h100-pcie": 2.0, "h100-nvl": 3.9, "h200": 4.8, "h800": 3.35, "h20": 4.0, "b200": 8.0,
    "a100-80g": 2.039, "a100-40g": 1.555, "a800": 2.039, "l40s": 0.864, "l20": 0.864, "rtx4090": 1.008, "rtx3090": 0.936,
    "v100": 0.9, "t4": 0.32, "mi300x": 5.3, "ascend-910b": 1.6, "ascend-910c": 3.2,
    "l4": 0.3, "a10": 0.6, "a10g": 0.6, "rtx-a6000": 0.768, "rtx-6000-ada": 0.96, "rtx5090": 1.792, "b300": 8.0,
    "mi250x": 3.2, "mi325x": 6.0, "mi355x": 8.0, "gaudi2": 2.46, "gaudi3": 3.7,
}
"""Peak memory bandwidth per device (TB/s), from the same vendor datasheets as timing/gpus.py (the 910B: third-party
reports; the 910C: third-party reports for one package, two 910B-class dies; the L4, A10, A10G and the RTX cards:
GDDR6/GDDR6X/GDDR7 bandwidth as NVIDIA's datasheets print it; the MI250X per OAM, both dies). TPUs have none here: an
RL step on them is not modelled."""

DECODE_BANDWIDTH_SHARE = Interval(rl_fit.DECODE_SHARE / rl_fit.SPREAD, rl_fit.DECODE_SHARE, min(rl_fit.DECODE_SHARE * rl_fit.SPREAD, 1.0))
"""Share of peak HBM bandwidth a rollout engine's decode reaches, fitted on published RL steps (timing/rl_fit.py):
scheduling, sampling, long tails and engine restarts included."""
ONE_GPU_DECODE = rl_fit.ONE_GPU_DECODE
"""The decode share of a run on one GPU, as a multiple of DECODE_BANDWIDTH_SHARE (at most the whole bandwidth; fitted
as a variant on one-GPU steps; 1: the same share as every run): one engine, no tensor-parallel collectives, no
scheduling across workers."""
ONE_GPU_SPREAD = rl_fit.ONE_GPU_SPREAD
"""How much wider a one-GPU step's interval is than the step its parts sum to (x/÷; 1: no wider): one-GPU runs
(notebooks on T4s to H100s, transformers or vLLM generation, 4-bit bases) scatter further from the model than runs on
a node or more, and the interval says so. Fitted to hold the same share of the calibration's one-GPU steps as the
shared spread holds of all."""
PREFILL_MFU = Interval(0.3, 0.45, 0.6)
"""Prefill MFU (assumed: long, batched prompts are compute bound)."""
FORWARD_MFU = Interval(0.2, 0.3, 0.45)
"""Log-prob / reference / value forwards (assumed: forward-only micro-batches of the training engine)."""
SYNC_GB_PER_S = Interval(20.0, 50.0, 150.0)
"""Effective bandwidth of the per-step weight sync per GPU of a rollout engine (GB/s; assumed: NVLink resharding
in-node), used when rl_fit has no fitted copy bandwidth."""
SYNC_COPY_GB_PER_S = (None if rl_fit.SYNC_GB_PER_S is None else
                      Interval(rl_fit.SYNC_GB_PER_S / rl_fit.SYNC_SPREAD, rl_fit.SYNC_GB_PER_S, rl_fit.SYNC_GB_PER_S * rl_fit.SYNC_SPREAD))
"""Bandwidth of the per-step weight copy (GB/s of the policy's bytes; per training GPU when SYNC_PER_TRAINING_GPU),
fitted on published copy times (timing/rl_fit.py); None: SYNC_GB_PER_S per rollout GPU."""
SYNC_SEPARATE_ONLY = rl_fit.SYNC_SEPARATE_ONLY
"""The fitted copy bandwidth is for rollout engines on their own GPUs (a copy over the network); colocated engines
reshard in place at SYNC_GB_PER_S per GPU."""
SYNC_PER_TRAINING_GPU = rl_fit.SYNC_PER_TRAINING_GPU
"""Each training GPU sends its shard of the weights at SYNC_COPY_GB_PER_S (the copy shortens with more training
GPUs), rather than the whole copy running at that rate."""
DECODE_HALF_BATCH = rl_fit.DECODE_HALF_BATCH
"""Sequences decoding at once at which an engine reaches half its bandwidth share (fitted; 0: the share does not
depend on the batch): a small batch spends its decode step on kernel launches and sampling, not on reading weights."""
ASYNC_STREAMING = rl_fit.ASYNC_STREAMING
"""Asynchronous engines stream across steps (fitted as a variant: True when it scores better on calibration)."""
STEP_OVERHEAD = Interval(rl_fit.STEP_OVERHEAD / rl_fit.SPREAD, rl_fit.STEP_OVERHEAD, rl_fit.STEP_OVERHEAD * rl_fit.SPREAD)
"""Seconds every step spends outside generation, forwards, updates, the copy and the parts below (fitted): scheduling,
and whatever the engine switch and reward lines do not carry."""
ENGINE_SWITCH_GB_PER_S = (None if not rl_fit.SWITCH_GB_PER_S else
                          Interval(rl_fit.SWITCH_GB_PER_S / rl_fit.SPREAD, rl_fit.SWITCH_GB_PER_S, rl_fit.SWITCH_GB_PER_S * rl_fit.SPREAD))
"""Rate (GB/s per GPU) at which a colocated rollout engine releases and reloads its weights each step (sleep and
wake-up: the weight shard out and back), fitted; None: no engine switch line (the fixed overhead carries it)."""
REWARD_SECONDS_PER_ROLLOUT = rl_fit.REWARD_MS_PER_ROLLOUT / 1000
"""Seconds of reward scoring and per-response handling per response (fitted; 0: the fixed overhead carries it)."""
REWARD_PER_GPU = rl_fit.REWARD_PER_GPU
"""The per-response time is spread over the training GPUs (a worker per GPU) rather than spent in one driver."""
TRAIN_TOKEN_FLOOR = rl_fit.TRAIN_TOKEN_FLOOR_US / 1e6
"""Shortest seconds per token per GPU of one training-engine forward (an update counts three): a small model's
forwards are bound by the vocabulary's log-softmax, padding and launches, not by its matmul FLOPs (fitted; 0: none)."""
DECODE_TAIL_SHARE = rl_fit.DECODE_TAIL_SHARE
"""How far from the mean toward the cap the longest response of an engine runs (fitted; 0.5: halfway): the drain in
which it decodes alone."""
DECODE_STEP_FLOOR = rl_fit.DECODE_STEP_FLOOR
"""Shortest decode step in seconds (fitted; 0: none): a small model's decode step is bound by kernel launches and
sampling on the CPU, not by reading its weights."""
TURN_SECONDS = rl_fit.TURN_SECONDS
"""Seconds each extra turn of a multi-turn rollout adds to the step (the tool or environment's answer, the round's own
decode tail and scheduling), fitted on the calibration steps that state their turns; 0: turns are not modelled."""
TURN_SPREAD = 3.0
"""The multi-turn line's interval (x/÷): a run states its turn cap, never its tool's latency (assumed)."""
SMALL_SETUP_EXPONENT = rl_fit.SMALL_SETUP_EXPONENT
"""The per-step fixed costs (the step overhead and the weight copy) of a setup smaller than one 8-GPU node scale by
(GPUs / 8) ** this (fitted as a variant; 0: one constant for every setup): on one GPU a colocated engine reloads its
weights in device memory and no Ray workers or collectives are scheduled."""
ONE_NODE = 8
"""GPUs of the node the fixed costs are fitted at (the corpus's runs are mostly one or more 8-GPU nodes)."""
MOE_TRAIN_SHARE = rl_fit.MOE_TRAIN_SHARE
"""A mixture of experts' forwards and updates run at this share of the dense model's efficiency (fitted as a variant;
1: none): expert-parallel all-to-all, uneven expert loads and grouped GEMMs (Megatron's MoE layers) cost what the active
parameters' FLOPs do not count."""
HF_GENERATE_STEP = rl_fit.HF_GENERATE_STEP
"""Shortest decode step (seconds) of a trainer that generates with its own model (TRL's GRPOTrainer without `use_vllm`:
`unwrapped_model.generate` in grpo_trainer.py of 0.23.1: one eager forward per token, no paged KV cache or CUDA graphs),
fitted on the calibration steps that state it (0: not modelled, decoded as an engine would)."""
LIGHT_CARD_TRAIN = rl_fit.LIGHT_CARD_TRAIN
"""The training engine's efficiency on a compute-light card (light_card) x this (fitted as a variant; 1: none)."""
LIGHT_CARD_PEAK = 200e12
"""Dense BF16 FLOP/s under which a card is compute-light: the H20's 148 TFLOPS and the 4090's 165 below it, the A100's
312 above."""
STACK_LEVELS = dict(rl_fit.STACK_LEVELS)
"""A stack's own level: its steps x this factor (fitted on its calibration sources; a stack not named: 1)."""
LORA_COPY = rl_fit.LORA_COPY
"""With LoRA, the per-step copy is what the stack sends (fitted as a variant): the merged weights where it merges the
adapters first (TRL's GRPOTrainer: merge_adapter, then every base weight), nothing where the engine shares the trained
model's weights (Unsloth's fast_inference: its trainer's _move_model_to_vllm is a no-op), the adapters alone where the
engine loads them as a LoRA request after the first full copy (verl's TensorLoRARequest, Megatron-SWIFT's adapter sync).
False: every run copies all its weights."""
ADAPTER_STACKS = ("verl", "ms-swift")
"""Stacks that copy only the adapters of a LoRA run each step."""
SHARED_WEIGHT_STACKS = ("trl-unsloth",)
"""Stacks whose rollout engine reads the trained model's own weights (no copy)."""
LOCAL_COPY = rl_fit.LOCAL_COPY
"""A run on one GPU copies its weights inside that GPU's memory (read and written once, at its HBM bandwidth) rather
than at the copy bandwidth fitted on multi-GPU runs (fitted as a variant; False: every run at the fitted rate)."""
QUANT_DECODE = rl_fit.QUANT_DECODE
"""QLoRA: the rollout engine holds the 4-bit base (Unsloth loads it into vLLM; HF generate runs the trained model), so a
decode step reads half a byte per parameter (fitted as a variant; False: the 16-bit bytes)."""
KV_MEMORY_SHARE = 0.9
"""Share of a rollout GPU's memory its engine holds for weights and KV cache (vLLM's gpu_memory_utilization in verl's
and NeMo RL's defaults: 0.5-0.6)."""
KV_GROUPS = 4
"""Query heads per KV head assumed when the model's K/V width is not known (grouped-query attention; Llama 3 8B: 4)."""
UPDATE_EFFICIENCY = Interval(rl_fit.UPDATE_EFFICIENCY / rl_fit.SPREAD, rl_fit.UPDATE_EFFICIENCY, rl_fit.UPDATE_EFFICIENCY * rl_fit.SPREAD)
"""The training engine's MFU in an RL step (its forwards and updates) relative to timing.flops' training MFU, fitted
on published RL steps (variable-length micro-batches, offload and resharding included)."""
PARTS = ("generation", "multi_turn", "old_log_prob", "reference", "critic_values", "actor_update", "critic_update", "weight_sync",
         "engine_switch", "reward", "step_overhead", "stack_level", "overlap")
"""The Time section's lines, in the order a step runs them."""
OUTSIDE_TRAINING = ("generation", "multi_turn", "weight_sync", "engine_switch", "reward", "step_overhead")
"""Parts that are not the training engine's forwards and updates (an asynchronous step overlaps only generation)."""


@dataclass(frozen=True, slots=True)
class RLStepSetup:
    """What one RL step does and on what hardware."""

    shape: ModelShape
    """The policy model (timing.flops: --params or config.json)."""
    gpu: Gpu
    """The accelerator (timing.gpus.find_gpu)."""
    gpus: int
    """GPUs the step runs on (rollout and training share them)."""
    prompts_per_step: int
    """Prompts per training step (the plan's `prompts_per_step`)."""
    samples_per_prompt: int
    """Responses per prompt (rollout.n, n_samples_per_prompt, num_generations)."""
    prompt_tokens: float
    """Mean prompt length in tokens."""
    response_tokens: Interval
    """Mean response length in tokens: a user's figure, or an interval when it drifts over the run."""
    response_cap: int | None = None
    """The response length limit (max_response_length, generate_max_len, max_completion_length)."""
    rollout_tp: int = 1
    """Tensor-parallel size of one rollout engine."""
    rollout_ep: int = 1
    """Expert-parallel size of the rollout (a mixture of experts served with vLLM's expert parallelism: each GPU holds
    1/rollout_ep of the routed experts and its attention ranks' share of the rest); 1: every engine holds every expert."""
    max_num_seqs: int = 256
    """Sequences one rollout engine decodes at once (vLLM's `max_num_seqs`)."""
    ppo_epochs: int = 1
    """Passes of the update over the step's responses."""
    reference: bool = True
    """A reference model forward (KL loss or KL in reward)."""
    critic: bool = False
    """A critic (PPO with GAE): values forward and critic update."""
    training: str = "full"
    """full, lora, qlora or frozen (timing.flops)."""
    asynchronous: bool = False
    """One-step off-policy: the next step's generation overlaps this step's training."""
    dtype: str = "bf16"
    """Data type of the weights and of the peak FLOP/s."""
    rollout_gpus: int | None = None
    """GPUs of the rollout engines when they are not the training GPUs (OpenRLHF's vLLM engines, slime, AReaL);
    None: rollout and training share `gpus` (verl's hybrid engine, colocated runs)."""
    weight_sync: bool = True
    """The policy's weights are copied to a separate rollout engine each step (not when the trainer generates with
    its own model, as TRL PPO does)."""
    training_mfu: Interval | None = None
    """The update's MFU (`--mfu`); None: timing.flops.MFU_DEFAULTS for the training kind."""
    old_log_prob: bool = True
    """A forward for the old policy's log-probs each step."""
    turns: int = 1
    """Assistant turns of one rollout (agent and tool-calling runs: the turn cap or the mean); 1: single-turn."""
    stack: str = ""
    """The RL stack (the planner's framework name) whose own level applies (STACK_LEVELS)."""
    rollout_engine: bool = True
    """A rollout engine (vLLM, SGLang) decodes; False: the trainer generates with its own model (TRL without use_vllm)."""

    @property
    def total_gpus(self) -> int:
        """GPUs the run holds: the training GPUs and a separate rollout server's."""
        return self.gpus + (self.rollout_gpus or 0)


@dataclass(slots=True)
class RLStepTime:
    """Seconds of one RL step, by part."""

    parts: dict[str, Interval]
    """Part -> seconds (PARTS; a part the run does not have is absent)."""
    step: Interval
    """Seconds of the whole step (the sum, or the async overlap)."""
    derivation: Derivation
    assumptions: list[str] = field(default_factory=list)
    """What the figures assume (message-free English names of the constants above, for the report's notes)."""

    def to_dict(self) -> dict:
        return {"step_seconds": self.step.to_dict(), "parts": {name: part.to_dict() for name, part in self.parts.items()},
                "assumptions": list(self.assumptions)}


def rl_step_time(setup: RLStepSetup) -> RLStepTime:
    """The modelled seconds of one step, each part an interval (low = every efficiency at its best)."""
    _check(setup)
    d = Derivation()
    n_params = setup.shape.matmul_params
    peak = setup.gpu.peak(setup.dtype)
    bytes_per_param = 1 if setup.dtype == "fp8" else 2
    rollouts = setup.prompts_per_step * setup.samples_per_prompt
    mean_response = setup.response_tokens
    tokens = Interval(*(rollouts * (setup.prompt_tokens + r) for r in (mean_response.low, mean_response.expected, mean_response.high)))
    d.add("rl_tokens_per_step", round(tokens.expected), "prompts x n x (prompt + mean response)",
          f"{setup.prompts_per_step} x {setup.samples_per_prompt} x ({setup.prompt_tokens:g} + {mean_response.expected:g})")
    parts = {"generation": _generation(setup, d, n_params, peak, bytes_per_param, rollouts)}
    if setup.turns > 1 and TURN_SECONDS:
        parts["multi_turn"] = _multi_turn(setup, d, n_params, peak, rollouts)
    attended = setup.prompt_tokens + mean_response.expected
    if (light := _light_card_multiple(setup.gpu)) != 1.0:
        d.add("rl_light_card_train", light, f"training efficiency x this on a card whose dense BF16 peak is under {LIGHT_CARD_PEAK / 1e12:g} TFLOP/s",
              f"{setup.gpu.name}: {setup.gpu.peak('bf16') / 1e12:g} TFLOP/s")
    forward = eval_flops_per_token(setup.shape, attended)
    forward_mfu = _times(FORWARD_MFU, _training_efficiency(setup.shape, setup.gpu))
    forward_seconds = _at_least(_compute(tokens, forward, setup.gpus, peak, forward_mfu), tokens.scaled(TRAIN_TOKEN_FLOOR / setup.gpus))
    _note(d, "rl_old_log_prob_seconds", forward_seconds, "tokens x FLOPs/token / (GPUs x peak x forward MFU)",
          f"{tokens.expected:.4g} x {forward:.4g} / ({setup.gpus} x {peak:.4g} x {forward_mfu.expected:.3g})")
    if setup.old_log_prob:
        parts["old_log_prob"] = forward_seconds
    if setup.reference:
        parts["reference"] = forward_seconds
    if setup.critic:
        parts["critic_values"] = forward_seconds
    train = train_flops_per_token(setup.shape, attended, setup.training)
    mfu = setup.training_mfu or _times(MFU_DEFAULTS[setup.training].mfu, _training_efficiency(setup.shape, setup.gpu))
    update = _at_least(_compute(tokens.scaled(setup.ppo_epochs), train.expected, setup.gpus, peak, mfu),
                       tokens.scaled(3 * setup.ppo_epochs * TRAIN_TOKEN_FLOOR / setup.gpus))
    parts["actor_update"] = _note(d, "rl_actor_update_seconds", update, "tokens x ppo_epochs x training FLOPs/token / (GPUs x peak x MFU)",
                                  f"{tokens.expected:.4g} x {setup.ppo_epochs} x {train.expected:.4g} / "
                                  f"({setup.gpus} x {peak:.4g} x {mfu.expected:.3g})")
    if setup.critic:
        parts["critic_update"] = update
    fixed_scale = _small_setup_scale(setup.total_gpus)
    if setup.weight_sync and _copy_share(setup):
        parts["weight_sync"] = _weight_sync(setup, d, bytes_per_param).scaled(fixed_scale)
    if ENGINE_SWITCH_GB_PER_S is not None and setup.rollout_gpus is None and setup.weight_sync:
        parts["engine_switch"] = _engine_switch(setup, d, bytes_per_param)
    if REWARD_SECONDS_PER_ROLLOUT:
        workers = setup.gpus if REWARD_PER_GPU else 1
        parts["reward"] = _note(d, "rl_reward_seconds", Interval.exact(rollouts * REWARD_SECONDS_PER_ROLLOUT / workers),
                                "responses x fitted seconds per response / workers", f"{rollouts} x {REWARD_SECONDS_PER_ROLLOUT:.3g} s / {workers}")
    if STEP_OVERHEAD.expected:
        parts["step_overhead"] = _note(d, "rl_step_overhead_seconds", STEP_OVERHEAD.scaled(fixed_scale),
                                       "fitted seconds per step (scheduling, what no other line carries) x (GPUs / 8) ** exponent below a node",
                                       f"{STEP_OVERHEAD.expected:g} s x {fixed_scale:.3g}")
    training = _sum(part for name, part in parts.items() if name not in OUTSIDE_TRAINING)
    level = _stack_level(setup.stack, setup.total_gpus)
    sync = _sum(part for name, part in parts.items() if name in OUTSIDE_TRAINING and name != "generation")
    if setup.asynchronous:
        gen = parts["generation"]
        step = Interval(max(gen.low, training.low), max(gen.expected, training.expected), max(gen.high, training.high)) + sync
        parts["overlap"] = Interval(*(max(g, t) - g - t for g, t in zip((gen.high, gen.expected, gen.low),
                                                                        (training.high, training.expected, training.low), strict=True)))
        _note(d, "rl_step_seconds", step, "max(generation, forwards + updates) + weight sync + step overhead (one-step off-policy)")
    else:
        step = _sum(parts.values())
        _note(d, "rl_step_seconds", step, "generation + forwards + updates + weight sync + step overhead")
    if level != 1:
        parts["stack_level"] = _note(d, "rl_stack_level_seconds", step.scaled(level - 1), "step x (stack level - 1)",
                                     f"{step.expected:.4g} s x ({level:g} - 1), {setup.stack}")
        step = step.scaled(level)
    spread = step_spread(setup)
    if spread > 1:
        step = Interval(step.low / spread, step.expected, step.high * spread)
        _note(d, "rl_one_gpu_spread", step, "step interval x/÷ the one-GPU spread (one-GPU runs scatter wider)", f"x/÷ {spread:g}")
    assumptions = [f"decode bandwidth share {DECODE_BANDWIDTH_SHARE.low:.2g}-{DECODE_BANDWIDTH_SHARE.high:.2g}",
                   f"prefill MFU {PREFILL_MFU.low:g}-{PREFILL_MFU.high:g}", f"forward MFU {forward_mfu.low:.2g}-{forward_mfu.high:.2g}",
                   f"training MFU {mfu.low:.2g}-{mfu.high:.2g}", _sync_assumption()]
    if not (setup.shape.layers and setup.shape.attention_width):
        assumptions.append("no KV-cache reads (the model's layers are unknown)")
    return RLStepTime(parts, step, d, assumptions)


def step_spread(setup: RLStepSetup) -> float:
    """How much wider than its parts' the step's interval is (x/÷): ONE_GPU_SPREAD for a run on one GPU, else 1."""
    return ONE_GPU_SPREAD if setup.total_gpus == 1 else 1.0


def _small_setup_scale(gpus: int) -> float:
    """The share of the fitted fixed costs a setup of `gpus` pays: (GPUs / 8) ** SMALL_SETUP_EXPONENT below one node, 1 from it."""
    return (min(gpus, ONE_NODE) / ONE_NODE) ** SMALL_SETUP_EXPONENT


def _training_efficiency(shape: ModelShape, gpu: Gpu) -> Interval:
    """UPDATE_EFFICIENCY, x MOE_TRAIN_SHARE for a mixture of experts (fewer than 90% of its parameters active per token)
    and x LIGHT_CARD_TRAIN on a compute-light card (light_card)."""
    efficiency = UPDATE_EFFICIENCY
    if shape.experts_active < 0.9 and MOE_TRAIN_SHARE != 1.0:
        efficiency = efficiency.scaled(MOE_TRAIN_SHARE)
    return efficiency.scaled(_light_card_multiple(gpu))


def _light_card_multiple(gpu: Gpu) -> float:
    """LIGHT_CARD_TRAIN on a compute-light card (light_card), 1 on any other."""
    return LIGHT_CARD_TRAIN if LIGHT_CARD_TRAIN != 1.0 and light_card(gpu) else 1.0


def light_card(gpu: Gpu) -> bool:
    """A card with BF16 tensor cores whose dense BF16 peak is under LIGHT_CARD_PEAK (H20, L20, L4, A10G, RTX 3090/4090,
    RTX A6000): its forwards and updates reach a larger share of that peak than a data-centre flagship's."""
    return "bf16" in gpu.tflops and gpu.peak("bf16") < LIGHT_CARD_PEAK


def _weight_sync(setup: RLStepSetup, d: Derivation, bytes_per_param: int) -> Interval:
    """The per-step copy of every parameter (all experts) to the rollout engine: over the fitted copy bandwidth, or
    each rollout GPU's shard over the assumed per-GPU rate."""
    total = bytes_per_param * setup.shape.total_params * _copy_share(setup)
    if LOCAL_COPY and setup.total_gpus == 1:  # the generation line has already refused a GPU without a bandwidth
        return _note(d, "rl_weight_sync_seconds", Interval.exact(2 * total / (HBM_TB_PER_S[setup.gpu.name] * 1e12)),
                     "2 x bytes/param x all parameters / HBM bandwidth (one GPU: the copy stays in its memory)",
                     f"2 x {bytes_per_param} x {setup.shape.total_params:.4g} / {HBM_TB_PER_S[setup.gpu.name]:g} TB/s")
    fitted = SYNC_COPY_GB_PER_S is not None and not (SYNC_SEPARATE_ONLY and setup.rollout_gpus is None)
    if fitted and SYNC_PER_TRAINING_GPU:
        return _note(d, "rl_weight_sync_seconds", SYNC_COPY_GB_PER_S.inverse(total / setup.gpus / 1e9),
                     "bytes/param x all parameters / training GPUs / copy bandwidth per GPU",
                     f"{bytes_per_param} x {setup.shape.total_params:.4g} / {setup.gpus} / {SYNC_COPY_GB_PER_S.expected:.3g} GB/s")
    if fitted:
        return _note(d, "rl_weight_sync_seconds", SYNC_COPY_GB_PER_S.inverse(total / 1e9), "bytes/param x all parameters / copy bandwidth",
                     f"{bytes_per_param} x {setup.shape.total_params:.4g} / {SYNC_COPY_GB_PER_S.expected:.3g} GB/s")
    tp = setup.rollout_tp
    return _note(d, "rl_weight_sync_seconds", SYNC_GB_PER_S.inverse(total / tp / 1e9), "bytes/param x all parameters / rollout tp / sync bandwidth",
                 f"{bytes_per_param} x {setup.shape.total_params:.4g} / {tp}")


def _copy_share(setup: RLStepSetup) -> float:
    """The share of the weights the per-step copy sends (LORA_COPY): 1 for full-parameter runs and stacks that merge."""
    if not LORA_COPY or setup.training not in ("lora", "qlora"):
        return 1.0
    if setup.stack.startswith(SHARED_WEIGHT_STACKS):
        return 0.0
    return ADAPTER_SHARE if setup.stack.startswith(ADAPTER_STACKS) else 1.0


def _engine_params(setup: RLStepSetup) -> float:
    """Parameters one engine of `rollout_tp` GPUs holds and reads per decode step: all of them, or with expert
    parallelism its ranks' share of the routed experts (the parameters beyond the active ones, spread over
    `rollout_ep` GPUs) and the rest (the active parameters, held by every attention rank)."""
    total, active = setup.shape.total_params, setup.shape.active_params
    if setup.rollout_ep <= 1 or not active or active >= total:
        return total
    return active + (total - active) * min(setup.rollout_tp / setup.rollout_ep, 1.0)


def _decode_weight_bytes(setup: RLStepSetup, bytes_per_param: int) -> float:
    """Bytes per parameter a decode step reads (QUANT_DECODE: half a byte for a QLoRA run's 4-bit base)."""
    return 0.5 if QUANT_DECODE and setup.training == "qlora" else bytes_per_param


def _multi_turn(setup: RLStepSetup, d: Derivation, n_params: float, peak: float, rollouts: int) -> Interval:
    """What T sequential rounds add to one round's generation: each extra round re-prefills the prompt and the turns
    before it (compute bound), and waits TURN_SECONDS on the tool or environment (its latency unknown: x/÷ TURN_SPREAD)."""
    extra = setup.turns - 1
    reread = rollouts * extra * (setup.prompt_tokens + setup.response_tokens.expected / 2)
    prefill = _compute(Interval.exact(reread), 2 * n_params, setup.rollout_gpus or setup.gpus, peak, PREFILL_MFU)
    wait = Interval(extra * TURN_SECONDS / TURN_SPREAD, extra * TURN_SECONDS, extra * TURN_SECONDS * TURN_SPREAD)
    return _note(d, "rl_multi_turn_seconds", prefill + wait,
                 "(turns - 1) x (re-prefill of prompt + earlier turns + fitted seconds per turn)",
                 f"({setup.turns} - 1) x ({rollouts} x {setup.prompt_tokens + setup.response_tokens.expected / 2:.4g} tokens "
                 f"+ {TURN_SECONDS:g} s)")


def _stack_level(stack: str, gpus: int) -> float:
    """The fitted level of the stack whose name `stack` starts with (trl-grpo -> trl); a level fitted on the stack's
    one-GPU runs alone (`trl 1 gpu`) where there is one and the run holds one GPU; 1 for the others."""
    single = next((level for name, level in STACK_LEVELS.items() if name.endswith(" 1 gpu") and stack.startswith(name.removesuffix(" 1 gpu"))),
                  None)
    if gpus == 1 and single is not None:
        return single
    return next((level for name, level in STACK_LEVELS.items() if not name.endswith(" 1 gpu") and stack.startswith(name)), 1.0)


def _engine_switch(setup: RLStepSetup, d: Derivation, bytes_per_param: int) -> Interval:
    """A colocated engine's sleep and wake-up: each rollout GPU's weight shard released and reloaded."""
    moved = 2 * bytes_per_param * setup.shape.total_params / setup.rollout_tp / 1e9
    return _note(d, "rl_engine_switch_seconds", ENGINE_SWITCH_GB_PER_S.inverse(moved),
                 "2 x bytes/param x all parameters / rollout tp / switch bandwidth",
                 f"2 x {bytes_per_param} x {setup.shape.total_params:.4g} / {setup.rollout_tp} / {ENGINE_SWITCH_GB_PER_S.expected:.3g} GB/s")


def _sync_assumption() -> str:
    if SYNC_COPY_GB_PER_S is not None:
        return (f"weight copy {SYNC_COPY_GB_PER_S.low:.2g}-{SYNC_COPY_GB_PER_S.high:.2g} GB/s"
                + (" per training GPU" if SYNC_PER_TRAINING_GPU else "")
                + (f" (separate rollout GPUs; colocated {SYNC_GB_PER_S.low:g}-{SYNC_GB_PER_S.high:g} GB/s per GPU)" if SYNC_SEPARATE_ONLY else ""))
    return f"weight sync {SYNC_GB_PER_S.low:g}-{SYNC_GB_PER_S.high:g} GB/s per GPU"


def _generation(setup: RLStepSetup, d: Derivation, n_params: float, peak: float, bytes_per_param: int, rollouts: int) -> Interval:
    """Prefill (compute bound) + continuous-batching decode (memory bound, never faster than its FLOPs): each engine
    decodes its sequences `concurrency` at a time (vLLM's max_num_seqs, or fewer when their KV cache does not fit),
    then drains the longest response alone. An asynchronous engine streams (ASYNC_STREAMING): the next step's prompts
    fill the slots the finished sequences leave, so it decodes up to two steps' sequences at once and no step waits
    for a drain."""
    rollout_gpus = setup.rollout_gpus or setup.gpus
    engines = max(rollout_gpus // setup.rollout_tp, 1)
    per_engine = math.ceil(rollouts / engines)
    bandwidth = HBM_TB_PER_S.get(setup.gpu.name)
    if bandwidth is None:
        raise InputError("time.error.gpu_bandwidth", "time.hint.gpu_bandwidth", gpu=setup.gpu.name, known=", ".join(HBM_TB_PER_S))
    kv_per_token = _kv_bytes_per_token(setup.shape, bytes_per_param)
    weight_bytes = _decode_weight_bytes(setup, bytes_per_param)
    engine_params = _engine_params(setup)
    streaming = setup.asynchronous and ASYNC_STREAMING
    concurrency = _concurrency(setup, per_engine * (2 if streaming else 1), kv_per_token, weight_bytes * engine_params)
    bounds = []
    for mean in (setup.response_tokens.low, setup.response_tokens.expected, setup.response_tokens.high):
        cap = setup.response_cap or 3 * mean  # no cap: the longest is taken as twice the mean (the fitted share 0.5)
        longest = min(mean + DECODE_TAIL_SHARE * max(cap - mean, 0), cap)
        context = setup.prompt_tokens + mean / 2
        steps = per_engine * mean / concurrency + (0 if streaming else max(longest - mean, 0))
        read_per_gpu = (weight_bytes * engine_params + concurrency * context * kv_per_token) / setup.rollout_tp
        bounds.append((steps, read_per_gpu, concurrency))
    shares = _decode_share(setup)
    memory = [read / (bandwidth * 1e12) / (share * _batch_factor(c)) for (_, read, c), share in
              zip(bounds, (shares.high, shares.expected, shares.low), strict=True)]
    compute = [2 * n_params * c / (setup.rollout_tp * peak) / mfu for (_, _, c), mfu in
               zip(bounds, (PREFILL_MFU.high, PREFILL_MFU.expected, PREFILL_MFU.low), strict=True)]
    floor = _decode_floor(setup)
    decode_step = Interval(*sorted(max(m, c, floor) for m, c in zip(memory, compute, strict=True)))
    decode = Interval(*sorted(step * b[0] for step, b in zip((decode_step.low, decode_step.expected, decode_step.high), bounds,
                                                            strict=True)))
    prefill = _compute(Interval.exact(rollouts * setup.prompt_tokens), 2 * n_params, rollout_gpus, peak, PREFILL_MFU)
    _note(d, "rl_decode_step_seconds", decode_step,
          "max(bytes read per GPU / (HBM x share x batch / (batch + half batch)), 2N x concurrency / (tp x peak x MFU), "
          f"{floor:g} s floor)",
          f"({weight_bytes:g} x {engine_params:.4g} + {bounds[1][2]:.0f} x "
          f"{setup.prompt_tokens + setup.response_tokens.expected / 2:.4g} x {kv_per_token:.4g}) / {setup.rollout_tp} / "
          f"({bandwidth} TB/s x {shares.expected:.2g} x {_batch_factor(bounds[1][2]):.2g})")
    return _note(d, "rl_generation_seconds", prefill + decode,
                 "prefill + (sequences x mean response / concurrency + tail) x decode step" + (" (streaming: no tail)" if streaming else ""),
                 f"{per_engine} sequences on each of {engines} engines, {bounds[1][2]:.0f} at a time, {bounds[1][0]:.4g} decode steps")


def _decode_share(setup: RLStepSetup) -> Interval:
    """DECODE_BANDWIDTH_SHARE, x ONE_GPU_DECODE for a run on one GPU, each bound at most 1 (the whole bandwidth)."""
    if ONE_GPU_DECODE == 1.0 or setup.total_gpus != 1:
        return DECODE_BANDWIDTH_SHARE
    return Interval(*(min(share * ONE_GPU_DECODE, 1.0) for share in
                      (DECODE_BANDWIDTH_SHARE.low, DECODE_BANDWIDTH_SHARE.expected, DECODE_BANDWIDTH_SHARE.high)))


def _decode_floor(setup: RLStepSetup) -> float:
    """The shortest decode step: HF_GENERATE_STEP where the trainer generates itself (when fitted), else DECODE_STEP_FLOOR."""
    return HF_GENERATE_STEP if not setup.rollout_engine and HF_GENERATE_STEP else DECODE_STEP_FLOOR


def _batch_factor(concurrency: float) -> float:
    """The share of the fitted decode bandwidth an engine reaches with `concurrency` sequences at once."""
    return concurrency / (concurrency + DECODE_HALF_BATCH)


def _concurrency(setup: RLStepSetup, per_engine: int, kv_per_token: float, weight_bytes: float) -> float:
    """Sequences an engine decodes at once: its share of the rollouts, at most max_num_seqs, at most what its KV cache
    holds (KV_MEMORY_SHARE of the engine's memory less the `weight_bytes` it holds, over the sequences' mean context)."""
    concurrency = min(per_engine, setup.max_num_seqs)
    if kv_per_token:
        free = KV_MEMORY_SHARE * setup.gpu.memory_gb * 1e9 * setup.rollout_tp - weight_bytes
        sequence = setup.prompt_tokens + setup.response_tokens.expected
        concurrency = min(concurrency, max(free / (sequence * kv_per_token), 1.0))
    return max(concurrency, 1.0)


def _note(d: Derivation, key: str, seconds: Interval, formula: str, values: str = "") -> Interval:
    """Record an interval of seconds as `expected s (low-high)`; return it."""
    d.add(key, f"{seconds.expected:.4g} s ({seconds.low:.4g}-{seconds.high:.4g})", formula, values)
    return seconds


def _kv_bytes_per_token(shape: ModelShape, bytes_per_param: int) -> float:
    """K and V of every layer for one token: the config's K/V width, else grouped-query attention assumed (KV_GROUPS)."""
    if not (shape.layers and shape.attention_width):
        return 0.0
    width = shape.kv_width or shape.attention_width / KV_GROUPS
    return 2 * shape.layers * width * bytes_per_param


def _compute(tokens: Interval, flops_per_token: float, gpus: int, peak: float, mfu: Interval) -> Interval:
    """Seconds for `tokens` at `flops_per_token` on `gpus`, the fastest with the most tokens' lower bound and best MFU."""
    return Interval(tokens.low * flops_per_token / (gpus * peak * mfu.high), tokens.expected * flops_per_token / (gpus * peak * mfu.expected),
                    tokens.high * flops_per_token / (gpus * peak * mfu.low))


def _at_least(seconds: Interval, floor: Interval) -> Interval:
    """Bound by bound the larger of a FLOPs time and a throughput floor."""
    return Interval(max(seconds.low, floor.low), max(seconds.expected, floor.expected), max(seconds.high, floor.high))


def _times(a: Interval, b: Interval) -> Interval:
    """Bound by bound product of two efficiencies (at most 1)."""
    return Interval(min(a.low * b.low, 1.0), min(a.expected * b.expected, 1.0), min(a.high * b.high, 1.0))


def _sum(parts) -> Interval:
    total = Interval.exact(0.0)
    for part in parts:
        total = total + part
    return total


def _check(setup: RLStepSetup) -> None:
    for name in ("gpus", "prompts_per_step", "samples_per_prompt", "rollout_tp", "rollout_ep", "max_num_seqs", "ppo_epochs"):
        if getattr(setup, name) < 1:
            raise InputError("rl.error.positive", "rl.hint.positive", key=name, value=getattr(setup, name))
    rollout_gpus = setup.rollout_gpus or setup.gpus
    if rollout_gpus % setup.rollout_tp:
        raise InputError("rl.error.rollout_tp", "rl.hint.rollout_tp", gpus=rollout_gpus, tp=setup.rollout_tp)
    if setup.response_tokens.low <= 0 or setup.prompt_tokens < 0:
        raise InputError("rl.error.above_zero", "rl.hint.above_zero", key="response length", value=f"{setup.response_tokens.low:g}")


@dataclass(frozen=True, slots=True)
class RolloutShape:
    """One RL training step as its planner knows it: what any RL planner (verl, OpenRLHF, EasyR1, TRL, slime,
    AReaL, prime-rl, ROLL, open-instruct, ...) hands to the step-time model. The planner fills it from its
    framework's settings and defaults; the user's model, GPU and lengths complete it (`setup_from_shape`)."""

    framework: str
    """The planner's name (verl, openrlhf, ...), for the report."""
    training_steps: int
    """Training (rollout) steps of the run: the steps whose time is counted."""
    prompts_per_step: int
    """Prompts generated for per training step."""
    samples_per_prompt: int
    """Responses per prompt (rollout.n, n_samples_per_prompt, num_generations, group size)."""
    max_prompt_length: int | None = None
    """The prompt length limit (tokens), where the framework has one."""
    max_response_length: int | None = None
    """The response length limit (tokens): the longest a decode wave can run."""
    asynchronous: bool = False
    """Generation of the next step overlaps training on this one (one-step off-policy, fully async)."""
    gpus: int = 1
    """GPUs that train (and that generate, when `rollout_gpus` is None)."""
    rollout_gpus: int | None = None
    """GPUs that only generate (separate vLLM/SGLang engines); None: the training GPUs generate too."""
    rollout_tp: int = 1
    """Tensor-parallel size of one rollout engine."""
    rollout_ep: int = 1
    """Expert-parallel size of the rollout (verl `actor_rollout_ref.rollout.expert_parallel_size`); 1: none."""
    ppo_epochs: int = 1
    """Passes of the update over one step's responses."""
    reference: bool = True
    """A reference-model forward each step (KL loss or KL in the reward)."""
    critic: bool = False
    """A critic: a values forward and a critic update each step (PPO with GAE)."""
    weight_sync: bool = True
    """The trained weights are copied to the rollout engine each step (False: the trainer generates itself)."""
    max_num_seqs: int = 256
    """Sequences one rollout engine decodes at once."""
    old_log_prob: bool = True
    """A forward for the old policy's log-probs each step (TRL GRPO skips it when each generation is trained on once)."""
    training: str | None = None
    """What the config trains: lora or qlora where its LoRA settings say so (verl `lora_rank` > 0, TRL `use_peft`);
    None: not stated (full-parameter unless `--training` says otherwise)."""
    rollout_engine: bool = True
    """A rollout engine (vLLM, SGLang) decodes; False: the trainer generates with its own model (TRL's `use_vllm`
    off, its default: transformers generate), at the fitted HF_GENERATE_STEP."""
    turns: int = 1
    """Assistant turns of one rollout; 1: single-turn. Plans leave it at 1 (the multi-turn line is not fitted:
    TURN_SECONDS 0, docs/time.md); the corpus rows set it for tools/fit_rl_time.py's multi-turn variant."""

    @property
    def total_gpus(self) -> int:
        """GPUs the run holds (billed)."""
        return self.gpus + (self.rollout_gpus or 0)


def own_generate_batch(rollouts_per_step: int, processes: int) -> int:
    """Sequences one process decodes at once when the trainer generates with its own model (TRL with `use_vllm` off):
    its share of one optimizer step's rollouts, the last process taking the remainder (TRL splits the generation
    batch evenly over processes; a batch TRL refuses is refused before this)."""
    return max(-(-rollouts_per_step // max(processes, 1)), 1)


TYPICAL_RESPONSE_SPREAD = rl_fit.RESPONSE_SPREAD
"""Without a stated mean, the mean response is RESPONSE_SHARE_OF_CAP of the cap when rl_fit has a fitted share, kept
between RESPONSE_FLOOR and RESPONSE_CEILING tokens (else TYPICAL_RESPONSE tokens, bounded by a quarter to 0.8 of the
cap), within a factor of this (fitted so that the steps stating only their cap are held as often as the others) and
never above the cap."""
PROMPT_SHARE_OF_CAP = 0.5
"""Mean prompt length as a share of the prompt cap when no mean is given (prompts are filtered to fit the cap)."""
DEFAULT_PROMPT_TOKENS = 256
"""Mean prompt length when neither a mean nor a cap is known."""


def response_interval(mean: Interval | None, cap: int | None) -> tuple[Interval, str]:
    """The mean response length to model with, and where it came from (`given`, `cap` or a refusal)."""
    if mean is not None:
        return mean, "given"
    if cap and rl_fit.RESPONSE_SHARE_OF_CAP:
        expected = min(max(rl_fit.RESPONSE_SHARE_OF_CAP * cap, rl_fit.RESPONSE_FLOOR), rl_fit.RESPONSE_CEILING or cap, cap)
        return Interval(expected / TYPICAL_RESPONSE_SPREAD, expected, min(expected * TYPICAL_RESPONSE_SPREAD, cap)), "cap"
    if cap:
        typical = rl_fit.TYPICAL_RESPONSE
        return Interval(min(typical / TYPICAL_RESPONSE_SPREAD, 0.25 * cap), min(typical, 0.5 * cap),
                        min(typical * TYPICAL_RESPONSE_SPREAD, 0.8 * cap)), "cap"
    raise InputError("rl.error.response_length", "rl.hint.response_length")


def prompt_mean(mean: float | None, cap: int | None) -> tuple[float, str]:
    """The mean prompt length to model with, and where it came from (`given`, `cap` or `default`)."""
    if mean is not None:
        return mean, "given"
    if cap:
        return PROMPT_SHARE_OF_CAP * cap, "cap"
    return float(DEFAULT_PROMPT_TOKENS), "default"


def setup_from_shape(rollout: RolloutShape, shape: ModelShape, gpu: Gpu, *, prompt_tokens: float, response_tokens: Interval,
                     training: str = "full", dtype: str = "bf16", training_mfu: Interval | None = None) -> RLStepSetup:
    """The step of a planner's RolloutShape on the user's model and GPU."""
    return RLStepSetup(shape=shape, gpu=gpu, gpus=rollout.gpus, prompts_per_step=rollout.prompts_per_step,
                       samples_per_prompt=rollout.samples_per_prompt, prompt_tokens=prompt_tokens, response_tokens=response_tokens,
                       response_cap=rollout.max_response_length, rollout_tp=rollout.rollout_tp, rollout_ep=rollout.rollout_ep,
                       max_num_seqs=rollout.max_num_seqs,
                       ppo_epochs=rollout.ppo_epochs, reference=rollout.reference, critic=rollout.critic, training=training,
                       asynchronous=rollout.asynchronous, dtype=dtype, rollout_gpus=rollout.rollout_gpus,
                       weight_sync=rollout.weight_sync, training_mfu=training_mfu, old_log_prob=rollout.old_log_prob,
                       turns=rollout.turns, stack=rollout.framework, rollout_engine=rollout.rollout_engine)
