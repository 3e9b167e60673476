"""The phase timer (nli_lib.phases): exclusive accounting of nested phases, the phase file, and the library
steps it is wired into."""
from __future__ import annotations

import pytest

from nli_lib import phases


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(phases.PHASE_FILE_ENV, raising=False)
    phases.reset()
    yield
    phases.reset()


class FakeClock:
    """Stands in for time.perf_counter inside nli_lib.phases: time moves only when a test says so."""

    def __init__(self):
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(phases, "time", fake)
    return fake


def test_time_is_counted_in_the_phase_it_was_spent_in(clock):
    with phases.phase("training"):
        clock.sleep(5)
        with phases.phase("scoring"):
            clock.sleep(10)
        clock.sleep(5)
    assert phases.totals() == {"scoring": 10, "training": 10}  # the nested scoring is not counted twice


def test_repeated_phases_add_up_and_a_decorator_counts_each_call(clock):
    @phases.phase("plotting")
    def draw():
        clock.sleep(2)

    draw()
    draw()
    assert phases.totals() == {"plotting": 4}


def test_a_failing_block_still_counts_and_restores_the_outer_phase(clock):
    with phases.phase("loading"):
        with pytest.raises(RuntimeError), phases.phase("llm"):
            clock.sleep(2)
            raise RuntimeError("boom")
        clock.sleep(3)
    assert phases.totals() == {"llm": 2, "loading": 3}


def test_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="unknown phase"), phases.phase("thinking"):
        pass


def test_phase_file_holds_totals_and_peak_memory(tmp_path, monkeypatch, clock):
    path = tmp_path / "nb.phases.json"
    monkeypatch.setenv(phases.PHASE_FILE_ENV, str(path))
    with phases.phase("scoring"):
        clock.sleep(1.5)
    stored = phases.read_phase_file(path)
    assert stored["phases"] == {"scoring": 1.5}
    assert stored["peak_rss_gib"] > 0


def test_classifier_scoring_is_timed(clock):
    import numpy as np

    from nli_lib.cache import CallCache
    from nli_lib.models.base import Classifier

    class Slow(Classifier):
        labels, name = ("yes", "no"), "slow"

        def _predict_proba_uncached(self, p, h):
            clock.sleep(5)
            return np.tile([0.5, 0.5], (len(p), 1))

    Slow(cache=CallCache(":memory:")).predict(["a"], ["b"])
    assert phases.totals() == {"scoring": 5}


def test_waiting_for_a_lock_another_holder_keeps_counts_as_waiting_and_an_open_lock_does_not(tmp_path):
    """`atomic.exclusive` (the lock around a model being trained or a cache being built): a notebook that finds
    it held, and waits for the other process to finish, shows the wait as 'waiting', not as its own code."""
    import threading
    import time

    from nli_lib.atomic import exclusive

    with exclusive(tmp_path / "model"):
        pass
    assert "waiting" not in phases.totals()  # taken at once: no wait
    held, release = threading.Event(), threading.Event()

    def holder():  # flock locks belong to an open file: a second open, even in this process, has to wait
        with exclusive(tmp_path / "model"):
            held.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    threading.Timer(0.3, release.set).start()
    started = time.perf_counter()
    with exclusive(tmp_path / "model"):
        waited = time.perf_counter() - started
    thread.join()
    assert waited >= 0.25
    assert phases.totals()["waiting"] == pytest.approx(waited, abs=0.05)
