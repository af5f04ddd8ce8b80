"""lasvm_cli.base.clock: a run's seconds leave out numba's compilation (on a fake timer, and on a
real function compiled inside a clock)."""

from numba.core import event

from lasvm_cli.base import clock as clock_module


class FakeTimer:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_compilation_is_left_out(monkeypatch):
    t = FakeTimer()
    monkeypatch.setattr(clock_module.time, "perf_counter", t)
    monkeypatch.setattr(event, "timer", t)
    with clock_module.Clock() as clock:
        t.now += 1.0  # work
        with event.trigger_event("numba:compiler_lock", data={}):
            t.now += 20.0
            with event.trigger_event("numba:compiler_lock", data={}):  # a callee: counted once
                t.now += 5.0
            t.now += 5.0
        t.now += 2.0  # work
        assert clock.seconds() == 3.0
        with event.trigger_event("numba:compiler_lock", data={}):
            t.now += 7.0
        t.now += 0.5
    t.now += 50.0  # after the block: not counted
    assert clock.seconds() == 3.5


def test_stopped_clock_stops_listening(monkeypatch):
    t = FakeTimer()
    monkeypatch.setattr(clock_module.time, "perf_counter", t)
    monkeypatch.setattr(event, "timer", t)
    before = len(event._registered["numba:compiler_lock"])
    clock = clock_module.Clock()
    assert len(event._registered["numba:compiler_lock"]) == before + 1
    t.now += 4.0
    assert clock.stop() == 4.0
    assert len(event._registered["numba:compiler_lock"]) == before


def test_real_compilation_is_left_out():
    import numba

    @numba.njit(cache=False)
    def fresh(x):  # compiled on its first call, inside the clock
        return x + 1

    with clock_module.Clock() as clock:
        fresh(1)
    assert clock._compiling.done
    assert clock.seconds() < clock._compiling.duration
