"""Deadlines stop Python code in the main thread and leave nothing behind."""

import signal
import sys
import threading
import time

import keras
import pytest

from kerasmesh.cost import layout_cost as cost
from kerasmesh.cost import deadline
from kerasmesh.core.errors import KerasmeshError


def test_an_armed_deadline_stops_a_sleep_at_once():
    clock = deadline.Deadline(0.5)
    started = time.monotonic()
    with pytest.raises(deadline.DeadlinePassed):
        with clock.armed():
            time.sleep(20)
    assert time.monotonic() - started < 3
    assert clock.fired and clock.passed()


def test_a_deadline_stops_a_busy_python_loop():
    clock = deadline.Deadline(0.3)
    with pytest.raises(deadline.DeadlinePassed):
        with clock.armed():
            while True:
                pass


def test_deadline_passed_gets_through_except_exception():
    clock = deadline.Deadline(0.2)
    caught = []
    with pytest.raises(deadline.DeadlinePassed):
        with clock.armed():
            try:
                time.sleep(20)
            except Exception as e:  # noqa: BLE001 - what Keras does
                caught.append(e)
    assert caught == []


def test_the_signal_handler_and_threads_are_back_after_a_deadline():
    before = signal.getsignal(signal.SIGALRM)
    threads = threading.active_count()
    for seconds in (0.1, 5):
        clock = deadline.Deadline(seconds)
        try:
            with clock.armed():
                time.sleep(0.3)
        except deadline.DeadlinePassed:
            pass
        assert signal.getsignal(signal.SIGALRM) is before
        assert threading.active_count() == threads
    # A SIGALRM after the scope does what it did before: nothing of ours.
    assert not clock.fired


def test_code_that_ends_in_time_is_not_stopped():
    clock = deadline.Deadline(5)
    with clock.armed():
        time.sleep(0.05)
    assert not clock.fired and not clock.passed()


def test_outside_the_main_thread_nothing_is_armed():
    out = {}

    def run():
        clock = deadline.Deadline(0.1)
        with clock.armed():
            time.sleep(0.3)
        out["passed"] = clock.passed()
        out["fired"] = clock.fired

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert out == {"passed": True, "fired": False}


def data_parallel():
    return keras.distribution.DataParallel(
        devices=keras.distribution.list_devices())


class SlowOnSecondCall(keras.layers.Layer):
    """Traces fast when the model is built, slowly when costed."""

    calls = 0

    def call(self, x):
        SlowOnSecondCall.calls += 1
        if SlowOnSecondCall.calls > 1:
            time.sleep(30)
        return x


def test_layout_cost_stops_a_layer_that_traces_slowly():
    SlowOnSecondCall.calls = 0
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2),
                              SlowOnSecondCall()])
    started = time.monotonic()
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(model, data_parallel(), 8,
                         timeout=2)
    assert time.monotonic() - started < 6
    assert e.value.kind == "timeout"
    assert "tracing the step" in str(e.value)


def test_layout_cost_counts_the_time_spent_before_the_call():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(KerasmeshError) as e:
        cost.layout_cost(model, data_parallel(), 8,
                         timeout=5, spent=5)
    assert e.value.kind == "timeout"


def test_cpu_compiles_schedule_for_memory_and_keep_all_reduces_apart():
    from kerasmesh.cost.target import CPU, GPU, Target

    cpu = {**deadline.MEMORY_SCHEDULE, **deadline.APART_ALL_REDUCES}
    assert Target(CPU, "CPU").compile_options() == cpu
    quick = Target(CPU, "CPU").compile_options(quick=True)
    assert quick == {**cpu, **deadline.QUICK}
    assert Target(GPU, "GPU").compile_options(quick=True) == {}


class SlowCompile:
    """A lowered step whose compile takes `seconds`."""

    def __init__(self, seconds):
        self.seconds = seconds

    def compile(self, compiler_options=None):
        time.sleep(self.seconds)
        return "compiled"


def test_memory_goes_back_while_a_compile_runs(monkeypatch):
    calls = []
    monkeypatch.setattr(deadline.heap, "give_back",
                        lambda: calls.append(time.monotonic()))
    monkeypatch.setattr(deadline, "GIVE_BACK_EVERY", 0.05)
    clock = deadline.Deadline(30)
    assert deadline.compile_within(SlowCompile(0.5), clock, 30) == "compiled"
    # once before, about every 0.05 s while it ran, once after
    assert len(calls) >= 6
    assert max(b - a for a, b in zip(calls, calls[1:])) < 0.4


def test_a_compile_past_its_deadline_is_left_running(monkeypatch):
    monkeypatch.setattr(deadline, "GIVE_BACK_EVERY", 0.05)
    started = time.monotonic()
    with pytest.raises(KerasmeshError) as e:
        deadline.compile_within(SlowCompile(1.0), deadline.Deadline(0.2), 0.2)
    assert e.value.kind == "timeout"
    assert time.monotonic() - started < 0.9
    assert deadline.wait_for_compiles() == 1


def test_a_deadline_landing_in_a_del_is_sent_again_and_not_reported(capsys):
    class Slow:
        def __del__(self):
            time.sleep(0.4)  # the deadline lands here: Python can't raise

    hook, started = sys.unraisablehook, time.monotonic()
    with pytest.raises(deadline.DeadlinePassed):
        with deadline.Deadline(0.1).armed():
            Slow()
            time.sleep(20)
    assert time.monotonic() - started < 5
    assert "Exception ignored" not in capsys.readouterr().err
    assert sys.unraisablehook is hook
