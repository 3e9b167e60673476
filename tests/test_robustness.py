"""Interrupted or damaged runs: finished work is kept, damage is reported clearly, nothing is silently reused."""
from __future__ import annotations

import numpy as np
import pytest

from nli_lib.cache import CacheCorruptError, CallCache

from kit import RuleClassifier

# Interrupting the runner itself (Ctrl-C while a notebook executes) is tested in test_runner.py
# (test_ctrl_c_reaches_the_interrupt_branch_and_the_next_run_resumes), through a real SIGINT.


def Flaky(cache) -> RuleClassifier:  # noqa: N802 - reads like the fake it builds
    """Fails on the pair whose premise is 'boom' unless `healed`; `calls` counts model calls."""
    def rule(p, h):
        if p == "boom" and not clf.healed:
            raise RuntimeError("model crashed")
        return [0.2, 0.5, 0.3]

    clf = RuleClassifier(rule, name="flaky", cache=cache)
    clf.healed = False
    return clf


def test_interrupted_prediction_keeps_finished_chunks(tmp_path, monkeypatch):
    import nli_lib.models.base as base

    monkeypatch.setattr(base, "CHUNK", 2)  # two pairs per chunk, so the crash happens in the second chunk
    clf = Flaky(CallCache(tmp_path / "c.sqlite"))
    premises, hyps = ["a", "b", "boom", "d"], ["x", "y", "z", "w"]
    with pytest.raises(RuntimeError, match="crashed"):
        clf.predict_proba(premises, hyps)
    clf2 = Flaky(CallCache(tmp_path / "c.sqlite"))
    clf2.healed = True
    assert clf2.predict_proba(premises, hyps).shape == (4, 3)
    assert clf2.calls == 2  # the first chunk was not recomputed


def test_cache_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "calls.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(CacheCorruptError, match=r"calls\.sqlite.*delete it"):
        CallCache(path)


def test_half_written_model_directory_is_never_reused(tmp_path, monkeypatch):
    """A crash during fine-tuning leaves only `<name>-<hash>.partial`; the next run trains again, never loads it."""
    pytest.importorskip("transformers")
    from nli_lib.models import training

    from kit import tiny_bert, tiny_train_frame

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(12)
    spec = training.TrainSpec(base=str(base), epochs=1, batch_size=8, max_length=32)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed during the epoch-end evaluation")

    monkeypatch.setattr(training, "evaluate", killed)
    with pytest.raises(KeyboardInterrupt):
        training.finetune(spec, df, eval_df=df, name="crashy", progress=False)
    left = sorted(p.name for p in (tmp_path / "cache" / "models").iterdir() if not p.name.endswith(".lock"))
    assert len(left) == 1 and left[0].endswith(".partial")  # weights were written, but only as .partial

    monkeypatch.undo()
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    clf = training.finetune(spec, df, eval_df=df, name="crashy", progress=False)
    assert clf.model_dir.name == left[0].removesuffix(".partial") and (clf.model_dir / "train_log.json").is_file()
    assert "eval_accuracy" in clf.train_log[0]


# Derived on-disk caches (fitted baselines, hidden states, the parsed WordNet): a damaged file is reported
# with a warning naming it and rebuilt from its sources; it is never half-used and never crashes the run.

def test_damaged_baseline_file_is_refitted(tmp_path, monkeypatch):
    from nli_lib.models import fit_cached
    from nli_lib.models.baselines import TfidfPairClassifier

    from kit import tiny_train_frame

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    df = tiny_train_frame(30)
    first = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    (stored,) = (tmp_path / "models").glob("tfidf-logreg-*.skops")
    stored.write_bytes(stored.read_bytes()[:100])  # truncated, as by a full disk
    again = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    with pytest.warns(RuntimeWarning, match=r"tfidf-logreg-.*\.skops is unreadable"):  # read on first use
        probs = again._predict_proba_uncached(["a man"], ["a dog"])
    assert again.fingerprint == first.fingerprint and stored.stat().st_size > 100
    np.testing.assert_array_equal(probs, first._predict_proba_uncached(["a man"], ["a dog"]))


def test_damaged_hidden_state_file_is_recomputed(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from nli_lib.models.hf import HFClassifier

    from kit import tiny_bert

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    clf = HFClassifier(tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"}),
                       progress=False)
    first = clf.hidden_states(["a man", "the dog runs"], ["a dog", "a cat"])
    assert len(first) == 3 and first[0].shape == (2, 32)  # embeddings + 2 layers, cls+max of 16 dims
    (stored,) = (tmp_path / "cache" / "hidden_states").glob("*.npz")
    stored.write_bytes(b"not a zip file")
    with pytest.warns(RuntimeWarning, match="hidden states .* unreadable"):
        again = clf.hidden_states(["a man", "the dog runs"], ["a dog", "a cat"])
    assert len(again) == len(first)  # an empty or partial answer would pass a zip() comparison
    for a, b in zip(first, again):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    fresh = HFClassifier(clf.model_path, progress=False)  # the recomputed file was stored again, intact
    monkeypatch.setattr(HFClassifier, "model", property(lambda self: pytest.fail("recomputed instead of read")))
    assert all(np.array_equal(a, b) for a, b in zip(first, fresh.hidden_states(["a man", "the dog runs"],
                                                                               ["a dog", "a cat"])))


def test_hidden_state_file_of_the_wrong_shape_is_recomputed(tmp_path, monkeypatch):
    """A file that loads but holds the wrong number of rows (or NaN) is not used."""
    pytest.importorskip("transformers")
    from nli_lib.models.hf import HFClassifier

    from kit import tiny_bert

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    clf = HFClassifier(tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"}),
                       progress=False)
    first = clf.hidden_states(["a man", "the dog runs"], ["a dog", "a cat"])
    (stored,) = (tmp_path / "cache" / "hidden_states").glob("*.npz")
    np.savez(stored, layer0=first[0][:1], layer1=first[1], layer2=first[2])  # one row missing
    with pytest.warns(RuntimeWarning, match=r"layer 0 has shape \(1, 32\), expected \(2, d\)"):
        again = clf.hidden_states(["a man", "the dog runs"], ["a dog", "a cat"])
    assert [a.shape for a in again] == [a.shape for a in first]
    np.savez(stored, layer0=first[0], layer1=np.full_like(first[1], np.nan), layer2=first[2])
    with pytest.warns(RuntimeWarning, match="layer 1 holds NaN"):
        again = clf.hidden_states(["a man", "the dog runs"], ["a dog", "a cat"])
    assert np.isfinite(again[1]).all()


def test_damaged_wordnet_cache_is_rebuilt(tmp_path, monkeypatch):
    from nli_lib.data import wordnet as W

    from test_loaders import WORDNET_PATHS

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(W, "_WORDNETS", {})
    wn = W.load_wordnet(paths=WORDNET_PATHS)
    (cached,) = (tmp_path / "wordnet").glob("oewn-*.json")
    cached.write_text('{"format": 1, "synsets": {')  # cut off mid-write by an older version
    monkeypatch.setattr(W, "_WORDNETS", {})
    with pytest.warns(RuntimeWarning, match="WordNet cache .* unreadable"):
        again = W.load_wordnet(paths=WORDNET_PATHS)
    assert again.synsets("wug") == wn.synsets("wug") and len(again) == len(wn)
