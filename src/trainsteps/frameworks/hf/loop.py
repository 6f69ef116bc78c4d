"""What the training loop really does: when it steps the optimizer and where it stops.

The loop walks epochs (or passes over a stream) and, within each, decides after every
micro-batch whether to step. Families differ in three ways (see releases.Family):
the accumulation counter (cumulative across epochs, or reset per epoch), the 4.46-4.51
prefetch bug that never reads some batches, and how a resumed epoch is indexed.
Positions are computed arithmetically per epoch, so a plan costs microseconds.
"""

from __future__ import annotations

import math

from trainsteps.errors import InputError
from trainsteps.frameworks.hf.releases import Family
from trainsteps.record import field, record
from trainsteps.steps import Steps


@record
class LoopResult:
    global_step: int
    """Optimizer steps at the end (the Trainer's final `state.global_step`)."""
    epoch_end_steps: Steps = field(default_factory=Steps)
    epoch_end_states: list[float | None] = field(default_factory=list)
    """`state.epoch` at the end of the epochs `LoopInput.track_epoch_states` asks for (the first is epoch_end_steps'
    entry `track_epoch_states[0] - first_epoch`, or 0). It moves only
    when the optimizer steps, so an epoch whose last batches do not step ends below its whole number."""
    state_epoch: float | None = 0.0
    """The Trainer's `state.epoch` at the end: set at every optimizer step to epoch + position / steps_in_epoch."""
    batches_consumed: int = 0
    """Micro-batches fed to the model on each rank."""
    last_batches_consumed: int = 0
    """How many of those were the (possibly short) last batch of an epoch."""
    batches_never_read: int = 0
    """Batches per epoch the 4.46-4.51 prefetch skips."""
    real_updates: int = 0
    """Optimizer steps that really changed the parameters (4.30 can step without syncing)."""
    reached_max_steps: bool = False
    first_epoch: int = 0
    """The epoch the loop starts in (a resume starts inside the checkpoint's epoch): epoch_end_steps' first entry."""
    never_ends: bool = False
    """The loop can make no progress (a stream shorter than one accumulation window in 4.47+)."""


@record(frozen=True)
class LoopInput:
    family: Family
    batches_per_epoch: int
    """Batches one pass yields on a rank."""
    steps_in_epoch: int
    """What the loop believes an epoch holds (`len(dataloader)`, or max_steps * GA for a stream)."""
    grad_accum: int
    max_steps: int
    epochs: int
    """Epoch-loop iterations available (the printed Num Epochs)."""
    num_examples: int
    """`num_examples` as the 4.46-4.51 prefetch uses it (dataset rows, not batches)."""
    resume_step: int = 0
    nupe: int = 1
    track_epoch_states: tuple = (0, 0)
    """(first, end): record `state.epoch` at the end of these epochs, walked one by one (epoch-strategy evaluation with
    eval_delay compares with it); the epochs before and after them are jumped as usual."""


MAX_EPOCH_ENDS = 1_000_000
"""Most epoch ends a plan lists, as many as the largest num_train_epochs accepted: a run that ends more epochs (a
handful of rows and a huge max_steps) is refused before its list is built, like MAX_EVENTS for log/eval/save steps."""


def _room_for(out: LoopResult, inp: LoopInput, more: int) -> None:
    if len(out.epoch_end_steps) + more > MAX_EPOCH_ENDS:
        raise InputError("hf.error.too_many_epochs", "hf.hint.too_many_epochs", limit=MAX_EPOCH_ENDS, max_steps=inp.max_steps)


def run_loop(inp: LoopInput) -> LoopResult:
    fam, ga, L = inp.family, inp.grad_accum, inp.steps_in_epoch
    out = LoopResult(global_step=inp.resume_step)
    first_epoch, skip = 0, 0
    if inp.resume_step:
        first_epoch = out.first_epoch = inp.resume_step // inp.nupe
        skip = (inp.resume_step % inp.nupe) * ga
        out.state_epoch = None  # kept from the checkpoint until the first new step
    remainder = inp.num_examples % ga or ga
    counter = 0  # the cumulative accumulation counter (restarts at 0 on resume)
    epoch = first_epoch
    while epoch < inp.epochs:
        first = skip if epoch == first_epoch else 0
        available = inp.batches_per_epoch - first
        pulled = min(available, ga * (L // ga) + remainder) if fam.chunk_bug else available
        out.batches_never_read = max(out.batches_never_read, available - pulled)
        tracked_from, tracked_to = inp.track_epoch_states
        if first == 0 and epoch + 1 < inp.epochs and not tracked_from <= epoch < tracked_to:
            # a jump stops where the tracked epochs begin
            stop = min(inp.epochs, tracked_from + 1) if epoch < tracked_from else inp.epochs
            jumped = _fast_forward(inp, out, epoch, pulled, counter, stop)
            if out.never_ends:
                return out
            if jumped:
                epoch += jumped
                counter += jumped * pulled
                continue
        if fam.counter == "per_epoch":
            start = first if (fam.resume_realigns and epoch == first_epoch) else 0
            offset = start  # sync positions are counted in step+1 space starting at `start`
            multiples = (start + pulled) // ga - start // ga
            extra = 1 if (start + pulled == L and L % ga) else 0
            base = start // ga
        else:
            offset = counter
            multiples = (counter + pulled) // ga - counter // ga
            last_forced = L <= ga and first == 0 and pulled == L
            extra = 1 if (last_forced and (counter + pulled) % ga) else 0
            base = counter // ga
        syncs = multiples + extra
        needed = inp.max_steps - out.global_step
        if syncs >= needed > 0:
            # The step that reaches max_steps: the `needed`-th sync of this epoch.
            position = ga * (base + needed) - offset if needed <= multiples else pulled
            out.real_updates += needed if fam.extra_sync_updates else min(needed, multiples)
            out.global_step = inp.max_steps
            out.batches_consumed += position
            out.last_batches_consumed += 1 if first + position == inp.batches_per_epoch else 0
            out.state_epoch = epoch + (first + position) / L
            out.epoch_end_steps.append(out.global_step)
            if tracked_from <= epoch < tracked_to:
                out.epoch_end_states.append(out.state_epoch)
            out.reached_max_steps = True
            return out
        out.real_updates += syncs if fam.extra_sync_updates else multiples
        if syncs:
            last = ga * (base + multiples) - offset if extra == 0 else pulled
            out.state_epoch = epoch + (first + last) / L
        out.global_step += syncs
        out.batches_consumed += pulled
        out.last_batches_consumed += 1 if first + pulled == inp.batches_per_epoch else 0
        counter += pulled
        _room_for(out, inp, 1)
        out.epoch_end_steps.append(out.global_step)
        if tracked_from <= epoch < tracked_to:
            out.epoch_end_states.append(out.state_epoch)
        epoch += 1
    out.reached_max_steps = out.global_step >= inp.max_steps
    return out


def _fast_forward(inp: LoopInput, out: LoopResult, epoch: int, pulled: int, counter: int, stop: int) -> int:
    """Complete, in one go, the whole epochs from `epoch` on that end before max_steps; return how many.

    Epochs that start at batch 0 repeat: with a per-epoch counter each has the same steps; with the
    cumulative counter the step count after j epochs is floor((counter + j x pulled) / GA). The epoch in
    which max_steps is reached, and epochs whose last batch forces a step (L <= GA), go batch-exact in run_loop.
    """
    fam, ga, L = inp.family, inp.grad_accum, inp.steps_in_epoch
    remaining = stop - epoch  # jumps leave epoch `stop - 1` (the last, or the first tracked) to the loop
    full = 1 if pulled == inp.batches_per_epoch else 0
    gs0 = out.global_step
    if fam.counter == "per_epoch":
        multiples = pulled // ga
        extra = 1 if (pulled == L and L % ga) else 0
        per_epoch = multiples + extra
        if per_epoch == 0:
            if remaining > 10**9:
                out.never_ends = True  # a stream shorter than one window: every pass is identical
            return 0
        k = min(remaining - 1, (inp.max_steps - gs0 - 1) // per_epoch)
        if k <= 0:
            return 0
        _room_for(out, inp, k)
        out.epoch_end_steps.extend_periodic(gs0 + per_epoch, (per_epoch,), k)
        out.global_step = gs0 + k * per_epoch
        out.real_updates += k * (per_epoch if fam.extra_sync_updates else multiples)
        last = ga * multiples if extra == 0 else pulled
        out.state_epoch = epoch + k - 1 + last / L
    else:
        if pulled == 0:
            return 0
        if L <= ga and pulled == L:
            return _fast_forward_forced(inp, out, epoch, pulled, counter, stop)
        target = inp.max_steps - gs0 + counter // ga
        k = min(remaining - 1, (target * ga - counter - 1) // pulled)
        if k <= 0:
            return 0
        _room_for(out, inp, k)
        base = counter // ga
        # gs0 + floor((counter + j x pulled) / GA) - base for j = 1..k: shift by whole windows, then divide
        out.epoch_end_steps.extend_periodic(*_floors(counter + (gs0 - base) * ga, pulled, ga, k))
        steps = (counter + k * pulled) // ga - base
        out.global_step = gs0 + steps
        out.real_updates += steps
        if steps:
            last_sync = ga * ((counter + k * pulled) // ga) - counter  # batches since the jump began
            j = (last_sync - 1) // pulled
            out.state_epoch = epoch + j + (last_sync - j * pulled) / L
    out.batches_consumed += k * pulled
    out.last_batches_consumed += k * full
    return k


def _floors(shift: int, pulled: int, ga: int, k: int) -> tuple[int, tuple, int]:
    """floor((shift + j x pulled) / GA) for j = 1..k, as (first, differences, count) for `Steps.extend_periodic`.

    Their differences repeat every GA / gcd(pulled, GA) terms, so one period is worked out and the rest is that
    period repeated: a million epoch ends are held as one pattern."""
    period = min(k, ga // math.gcd(pulled, ga))
    ends = [(shift + j * pulled) // ga for j in range(1, period + 2)]
    return ends[0], tuple(b - a for a, b in zip(ends, ends[1:], strict=False)), k


def _fast_forward_forced(inp: LoopInput, out: LoopResult, epoch: int, pulled: int, counter: int, stop: int) -> int:
    """The cumulative counter when every epoch's last batch forces a step (L <= GA): complete the whole epochs
    that end before max_steps in one go; return how many.

    The counter never resets, so epoch j's steps depend on `counter + j x pulled` modulo GA, which repeats every
    P = GA / gcd(pulled, GA) epochs: one period is worked out batch-exact, and the rest is that period repeated.
    Every such epoch steps at least once (its last batch), so the run ends after at most max_steps epochs.
    """
    ga = inp.grad_accum
    period = ga // math.gcd(pulled, ga)
    steps, updates, lasts = [], [], []  # per epoch of one period: optimizer steps, real updates, last sync batch
    for j in range(period):
        c = counter + j * pulled
        multiples = (c + pulled) // ga - c // ga
        extra = 1 if (c + pulled) % ga else 0
        steps.append(multiples + extra)
        updates.append(multiples + extra if inp.family.extra_sync_updates else multiples)
        lasts.append(ga * (c // ga + multiples) - c if extra == 0 else pulled)
    prefix = [0]
    for n in steps:
        prefix.append(prefix[-1] + n)
    per_period = prefix[-1]
    budget = inp.max_steps - out.global_step - 1  # jumped epochs must end before max_steps
    if budget < 1:
        return 0
    whole, left = divmod(budget, per_period)
    r = max(i for i in range(period) if prefix[i] <= left)
    k = min(stop - epoch - 1, whole * period + r)
    if k <= 0:
        return 0
    _room_for(out, inp, k)
    whole, r = divmod(k, period)
    gs0 = out.global_step
    # epoch j ends at gs0 + (j // P) x per_period + prefix[j % P + 1]: one pattern of the period's step counts
    out.epoch_end_steps.extend_periodic(gs0 + steps[0], tuple(steps[1:] + steps[:1]), k)
    out.global_step = out.epoch_end_steps[-1]
    out.real_updates += whole * sum(updates) + sum(updates[:r])
    out.state_epoch = epoch + k - 1 + lasts[(k - 1) % period] / inp.steps_in_epoch
    out.batches_consumed += k * pulled
    out.last_batches_consumed += k if pulled == inp.batches_per_epoch else 0
    return k
