"""The callbacks' ETA with a fake clock: warm-up skipped, pauses taken out, evaluations ahead added, resume re-based."""

import pytest

from trainsteps.integrations._eta import EtaState
from trainsteps.timing.measure import StepClock


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def run_steps(eta: EtaState, clock: FakeClock, first: int, last: int, seconds, evals=(), eval_seconds=0.0):
    for step in range(first, last + 1):
        eta.step_begin()
        clock.t += seconds(step) if callable(seconds) else seconds
        eta.step_end(step)
        if step in evals:
            clock.t += eval_seconds
            eta.event("eval")


def test_the_eta_is_unknown_until_the_rate_has_warmed_up():
    clock = FakeClock()
    eta = EtaState(warmup_steps=2, min_steps=3, now=clock)
    eta.final_step = 100
    eta.begin(0)
    run_steps(eta, clock, 1, 4, 1.0)
    assert eta.metrics(4) == {}  # 2 steps skipped, 2 measured: not yet 3
    run_steps(eta, clock, 5, 5, 1.0)
    assert eta.metrics(5)["eta_seconds"] == pytest.approx(95.0)


def test_a_slow_first_step_does_not_stretch_the_eta():
    clock = FakeClock()
    eta = EtaState(now=clock)
    eta.final_step = 100
    eta.begin(0)
    run_steps(eta, clock, 1, 10, lambda step: 60.0 if step == 1 else 2.0)  # compile on step 1
    assert eta.metrics(10)["eta_seconds"] == pytest.approx(90 * 2.0)


def test_evaluation_pauses_leave_the_step_rate_and_the_evaluations_ahead_are_added():
    clock = FakeClock()
    eta = EtaState(now=clock)
    eta.final_step = 100
    eta.eval_steps = [20, 40, 60, 80, 100]
    eta.begin(0)
    run_steps(eta, clock, 1, 40, 1.0, evals={20, 40}, eval_seconds=30.0)
    eta.step_begin()  # the pause after step 40 closes when step 41 starts
    values = eta.metrics(40)
    assert eta.estimate.step_seconds.expected == pytest.approx(1.0)
    assert values["eta_seconds"] == pytest.approx(60 * 1.0 + 3 * 30.0)  # 3 evaluations ahead at 30 s


def test_the_evaluation_of_the_step_being_logged_is_still_ahead():
    clock = FakeClock()
    eta = EtaState(now=clock)
    eta.final_step = 50
    eta.eval_steps = [10, 20, 30, 40, 50]
    eta.begin(0)
    run_steps(eta, clock, 1, 10, 1.0, evals={10}, eval_seconds=5.0)
    eta.step_begin()
    run_steps(eta, clock, 11, 20, 1.0)
    # the Trainer logs step 20 before it evaluates at step 20: four evaluations are ahead (20, 30, 40, 50)
    assert eta.metrics(20)["eta_seconds"] == pytest.approx(30 * 1.0 + 4 * 5.0)


def test_a_resume_rebases_the_rate_on_the_steps_run_in_this_process():
    clock = FakeClock()
    eta = EtaState(now=clock)
    eta.final_step = 1000
    clock.t = 5000.0  # the process started long ago: only the steps after the resume count
    eta.begin(900)
    run_steps(eta, clock, 901, 910, 3.0)
    assert eta.metrics(910)["eta_seconds"] == pytest.approx(90 * 3.0)


def test_tokens_per_second_and_mfu_come_from_the_counted_tokens():
    clock = FakeClock()
    eta = EtaState(now=clock)
    eta.final_step = 100
    eta.flops_per_token, eta.peak_flops, eta.devices = 6e9, 1e15, 2
    eta.begin(0)
    run_steps(eta, clock, 1, 10, 2.0)
    values = eta.metrics(10, tokens_seen=10 * 4096)
    assert values["tokens_per_second"] == pytest.approx(2048)
    assert values["mfu"] == pytest.approx(2048 * 6e9 / 2e15)


def test_a_drifting_rate_widens_the_interval():
    clock = StepClock(warmup_steps=0, min_steps=1)
    t = 0.0
    for step in range(1, 101):
        t += 1.0 if step <= 50 else 2.0
        clock.step(step, t)
    rate = clock.rate()
    assert rate.step_seconds.expected == pytest.approx(1.5)
    assert rate.step_seconds.high >= 2.0  # the recent quarter runs at 2 s a step
