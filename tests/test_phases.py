"""The phase timer (nli_lib.phases): exclusive accounting of nested phases, the phase file, and the library
steps it is wired into."""
from __future__ import annotations

import time

import pytest

from nli_lib import phases


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(phases.PHASE_FILE_ENV, raising=False)
    phases.reset()
    yield
    phases.reset()


def test_time_is_counted_in_the_phase_it_was_spent_in():
    with phases.phase("training"):
        time.sleep(0.05)
        with phases.phase("scoring"):
            time.sleep(0.1)
        time.sleep(0.05)
    spent = phases.totals()
    assert 0.1 <= spent["scoring"] < 0.15
    assert 0.1 <= spent["training"] < 0.15  # the nested scoring is not counted twice
    assert sum(spent.values()) < 0.3


def test_repeated_phases_add_up_and_a_decorator_counts_each_call():
    @phases.phase("plotting")
    def draw():
        time.sleep(0.02)

    draw()
    draw()
    assert 0.04 <= phases.totals()["plotting"] < 0.1


def test_a_failing_block_still_counts_and_restores_the_outer_phase():
    with phases.phase("loading"):
        with pytest.raises(RuntimeError):
            with phases.phase("llm"):
                time.sleep(0.02)
                raise RuntimeError("boom")
        time.sleep(0.03)
    spent = phases.totals()
    assert spent["llm"] >= 0.02 and spent["loading"] >= 0.03 and spent["loading"] < 0.05


def test_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="unknown phase"):
        with phases.phase("thinking"):
            pass


def test_phase_file_holds_totals_and_peak_memory(tmp_path, monkeypatch):
    path = tmp_path / "nb.phases.json"
    monkeypatch.setenv(phases.PHASE_FILE_ENV, str(path))
    with phases.phase("scoring"):
        time.sleep(0.01)
    stored = phases.read_phase_file(path)
    assert stored["phases"]["scoring"] >= 0.01
    assert stored["peak_rss_gib"] > 0


def test_classifier_scoring_and_figures_are_timed(tmp_path, monkeypatch):
    import numpy as np

    from nli_lib.cache import CallCache
    from nli_lib.models.base import Classifier

    class Slow(Classifier):
        labels, name = ("yes", "no"), "slow"

        def _predict_proba_uncached(self, p, h):
            time.sleep(0.05)
            return np.tile([0.5, 0.5], (len(p), 1))

    Slow(cache=CallCache(":memory:")).predict(["a"], ["b"])
    assert phases.totals()["scoring"] >= 0.05
