"""Caches and model identity: nothing from the cache executes, every key holds what changes its output, cached
values are checked when read, a damaged or locked database says so, and loading errors name model and fix."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import sqlite3
import threading
import warnings

import numpy as np
import pytest

from nli_lib.cache import CacheCorruptError, CacheLockedError, CallCache
from nli_lib.models.baselines import NaiveBayesPairClassifier, TfidfPairClassifier

from kit import RuleClassifier, constant, tiny_bert, tiny_train_frame
from test_models import raw_probs

torch = pytest.importorskip("torch")


# --------------------------------------------------------------------------------------------------------------
# Nothing from the cache directory executes
# --------------------------------------------------------------------------------------------------------------

class _Payload:
    """Unpickling this runs a shell command that creates `marker`."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_planted_pickles_in_the_model_cache_never_run(tmp_path, monkeypatch):
    from nli_lib.models import fit_cached

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df, marker = tiny_train_frame(30), tmp_path / "pwned"
    first = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    (stored,) = (tmp_path / "cache" / "models").glob("tfidf-logreg-*.skops")
    evil = pickle.dumps(_Payload(marker))
    stored.write_bytes(evil)  # the stored model replaced by a pickle
    stored.with_suffix(".pkl").write_bytes(evil)  # and a pickle where older versions kept the model
    with pytest.warns(RuntimeWarning) as seen:
        again = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
        probs = again._predict_proba_uncached(["a man"], ["a dog"])  # the stored fit is read on first use
    assert not marker.exists()  # nothing ran
    messages = " | ".join(str(w.message) for w in seen)
    assert f"{stored} is unreadable, untrusted or invalid" in messages and "pickled model file(s)" in messages
    np.testing.assert_array_equal(probs, first._predict_proba_uncached(["a man"], ["a dog"]))  # refitted


def test_stored_model_with_an_untrusted_type_is_refused(tmp_path, monkeypatch):
    """A valid skops file whose objects are not on the trusted list (here os.system) is never built."""
    import skops.io as sio

    from nli_lib.models import fit_cached

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df = tiny_train_frame(30)
    fit_cached(lambda: NaiveBayesPairClassifier(), df, name="nb")
    (stored,) = (tmp_path / "cache" / "models").glob("nb-*.skops")
    sio.dump({"vec": os.system, "est": os.system}, stored)
    again = fit_cached(lambda: NaiveBayesPairClassifier(), df, name="nb")
    again._cache = CallCache(":memory:")
    with pytest.warns(RuntimeWarning, match=r"untrusted .*(posix|os)\.system"):
        assert again.predict(["a man is sleeping inside"], ["no man is sleeping"]) == ["contradiction"]


def test_every_stored_classifier_loads_with_the_trusted_list_only(tmp_path, monkeypatch):
    """TF-IDF (logreg and calibrated SVM), naive Bayes and the PhrasIS feature SVM round-trip through skops."""
    from nli_lib.models import fit_cached
    from nli_lib.phrasis.features import toy_wordnet
    from nli_lib.phrasis.models import FeatureSVMClassifier

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df, wordnet = tiny_train_frame(30), toy_wordnet()
    makers = {"lr": lambda: TfidfPairClassifier("logreg"), "svm": lambda: TfidfPairClassifier("svm"),
              "nb": lambda: NaiveBayesPairClassifier(),
              "fsvm": lambda: FeatureSVMClassifier(labels=("entailment", "neutral", "contradiction"),
                                                   wordnet=wordnet, stopwords=["a", "the"])}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a refused type would warn and refit
        for name, make in makers.items():
            first = fit_cached(make, df, name=name)
            first._cache = CallCache(":memory:")
            clf = make()
            monkeypatch.setattr(type(clf), "_fit", lambda *a, name=name: pytest.fail(f"{name} refitted"))
            again = fit_cached(make, df, name=name)
            monkeypatch.undo()
            monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
            np.testing.assert_allclose(again._predict_proba_uncached(list(df.premise), list(df.hypothesis)),
                                       first._predict_proba_uncached(list(df.premise), list(df.hypothesis)))
            assert again.fingerprint == first.fingerprint


def test_stored_tfidf_vocabularies_are_plain_ints_not_a_file_per_term(tmp_path, monkeypatch):
    """skops writes every numpy scalar as a zip member of its own (~40 s for our 60,000-term models): the
    stored vocabularies hold plain ints, and the restored classifier answers as the fitted one."""
    import zipfile

    from nli_lib.models import fit_cached

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df = tiny_train_frame(60)
    df["premise"] += [f" near tree{i} by lake{i}" for i in range(len(df))]  # a vocabulary of hundreds of terms
    first = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    terms = sum(len(v.vocabulary_) for v in (first.feats.vp, first.feats.vh, first.feats.vnew))
    (stored,) = (tmp_path / "cache" / "models").glob("tfidf-logreg-*.skops")
    arrays = [n for n in zipfile.ZipFile(stored).namelist() if n.endswith(".npy")]
    assert terms > 100 and len(arrays) < 20, (terms, len(arrays))
    again = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    p, h = list(df.premise), list(df.hypothesis)
    np.testing.assert_array_equal(again._predict_proba_uncached(p, h), first._predict_proba_uncached(p, h))
    assert type(again.feats.vp.vocabulary_[next(iter(again.feats.vp.vocabulary_))]) is int


# --------------------------------------------------------------------------------------------------------------
# Keys hold every input that changes an output
# --------------------------------------------------------------------------------------------------------------

def test_baseline_fingerprints_hold_every_setting():
    df = tiny_train_frame(30)
    base = TfidfPairClassifier("logreg").fit(df).fingerprint
    assert TfidfPairClassifier("logreg", C=0.1).fit(df).fingerprint != base
    assert TfidfPairClassifier("logreg", seed=1).fit(df).fingerprint != base
    assert TfidfPairClassifier("logreg", labels=("neutral", "entailment", "contradiction")).fit(df).fingerprint != base
    assert NaiveBayesPairClassifier(alpha=0.5).fit(df).fingerprint != NaiveBayesPairClassifier().fit(df).fingerprint


def test_fit_cached_refits_when_a_setting_changes(tmp_path, monkeypatch):
    from nli_lib.models import fit_cached

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df = tiny_train_frame(30)
    strong = fit_cached(lambda: TfidfPairClassifier("logreg", C=100.0), df, name="tfidf-logreg")
    weak = fit_cached(lambda: TfidfPairClassifier("logreg", C=0.001), df, name="tfidf-logreg")
    assert len(list((tmp_path / "cache" / "models").glob("*.skops"))) == 2
    p, h = ["a man is sleeping inside"], ["a person is sleeping"]
    assert weak._predict_proba_uncached(p, h).max() < strong._predict_proba_uncached(p, h).max()  # not the same fit


def test_warm_run_reads_no_stored_fit(tmp_path, monkeypatch):
    """When every prediction is in the call cache, the stored fit is never read (nor skops imported)."""
    from nli_lib.models import fit_cached, fitted

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df, cache = tiny_train_frame(30), CallCache(tmp_path / "calls.sqlite")
    first = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    first._cache = cache
    expected = first.predict_proba(df.premise, df.hypothesis)
    monkeypatch.setattr(fitted, "load_parts", lambda path: pytest.fail("stored fit read on a warm run"))
    warm = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    warm._cache = cache
    np.testing.assert_array_equal(warm.predict_proba(df.premise, df.hypothesis), expected)


def bigger_bert(path, seed=0):
    """A BERT whose weight file is ~1.6 MB: its first layer lies well inside the file (not in the first or last
    64 KiB), so changing it changes only middle bytes."""
    from transformers import AutoModelForSequenceClassification

    return AutoModelForSequenceClassification.from_pretrained(tiny_bert(path, hidden=128, intermediate=512, seed=seed)).eval()


def test_resaved_model_with_changed_middle_layers_is_not_served_old_predictions(tmp_path):
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.loading import weights_fingerprint

    path = tmp_path / "m"
    model = bigger_bert(path)
    cache = CallCache(tmp_path / "calls.sqlite")
    pairs = [("a man is sleeping outside .", "a person is sleeping ."), ("the dog runs", "a cat sits")]
    before = HFClassifier(path, progress=False, cache=cache).predict_proba(*zip(*pairs))
    weights = path / "model.safetensors"
    old_bytes, old_fp = weights.read_bytes(), weights_fingerprint(str(path))
    with torch.no_grad():  # a re-trained first layer, saved again in place
        model.bert.encoder.layer[0].intermediate.dense.weight.mul_(-3.0)
    model.save_pretrained(path)
    new_bytes = weights.read_bytes()
    head = 1 << 16
    assert len(new_bytes) == len(old_bytes) and new_bytes != old_bytes
    assert new_bytes[:head] == old_bytes[:head] and new_bytes[-head:] == old_bytes[-head:]  # only the middle moved
    assert weights_fingerprint(str(path)) != old_fp
    after = HFClassifier(path, progress=False, cache=cache).predict_proba(*zip(*pairs))
    np.testing.assert_allclose(after, raw_probs(path, pairs), atol=1e-5)
    assert not np.allclose(after, before, atol=1e-4)


def test_fingerprint_hashes_are_memoised_by_file_state(tmp_path, monkeypatch):
    """A warm process reads the hashes from the memo on disk; a rewrite with the old size and mtime is seen."""
    from nli_lib import filehash
    from nli_lib.models.loading import weights_fingerprint

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    weights = folder / "model.safetensors"
    weights.write_bytes(bytes(300_000))
    hashed = []
    real = filehash._hash
    monkeypatch.setattr(filehash, "_hash", lambda p: hashed.append(p.name) or real(p))
    first = weights_fingerprint(str(folder))
    assert sorted(hashed) == ["config.json", "model.safetensors"]
    monkeypatch.setattr(filehash, "_MEMO", {})  # a new kernel: only the memo file remains
    hashed.clear()
    assert weights_fingerprint(str(folder)) == first and hashed == []
    st = weights.stat()
    data = bytearray(weights.read_bytes())
    data[150_000] = 1  # one byte in the middle, same size
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime set back, as `cp -p` would
    assert weights_fingerprint(str(folder)) != first and hashed == ["model.safetensors"]


def test_fingerprint_covers_tokenizer_and_subfolders_not_docs(tmp_path):
    from nli_lib.models.loading import weights_fingerprint

    folder = tmp_path / "enc"
    tiny_bert(folder, {0: "entailment", 1: "neutral", 2: "contradiction"})
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    base = weights_fingerprint(str(folder))
    (folder / "README.md").write_text("docs change nothing")
    assert weights_fingerprint(str(folder)) == base
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    pooled = weights_fingerprint(str(folder))
    assert pooled != base
    (folder / "vocab.txt").write_text((folder / "vocab.txt").read_text().replace("dog", "hog"))
    assert weights_fingerprint(str(folder)) != pooled


def test_corrected_label_order_is_not_served_the_swapped_columns(tmp_path):
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    cache = CallCache(tmp_path / "calls.sqlite")
    pair = [("a man is sleeping", "a dog")]
    wrong = HFClassifier(path, label_order=["contradiction", "neutral", "entailment"], progress=False, cache=cache)
    wrong.predict_proba(*zip(*pair))
    right = HFClassifier(path, label_order=["entailment", "neutral", "contradiction"], progress=False, cache=cache)
    assert right.fingerprint != wrong.fingerprint
    np.testing.assert_allclose(right.predict_proba(*zip(*pair)), raw_probs(path, pair), atol=1e-5)


def fake_hub_model(hf_home, model_id, source, commit):
    """Lay out a model in the HF cache as a download would: models--org--name/{refs/main, snapshots/<sha>}."""
    repo = hf_home / "hub" / ("models--" + model_id.replace("/", "--"))
    shutil.copytree(source, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)


def test_hub_commit_is_resolved_offline_and_pins_the_files_loaded(tmp_path, monkeypatch):
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.loading import weights_fingerprint

    hf = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(hf))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    old, new = "a" * 40, "b" * 40
    fake_hub_model(hf, "org/tiny", tiny_bert(tmp_path / "v1", {0: "entailment", 1: "neutral", 2: "contradiction"},
                                                  seed=1), old)
    assert weights_fingerprint("org/tiny") == f"org/tiny@{old}"
    cache = CallCache(tmp_path / "calls.sqlite")
    pair = [("a man is sleeping", "a dog")]
    first = HFClassifier("org/tiny", progress=False, cache=cache)
    assert first.revision == old and first.tier == "paper"
    np.testing.assert_allclose(first.predict_proba(*zip(*pair)), raw_probs(tmp_path / "v1", pair), atol=1e-5)
    # a new commit arrives (refs/main moves): new key, and the weights of that commit are loaded
    fake_hub_model(hf, "org/tiny", tiny_bert(tmp_path / "v2", {0: "entailment", 1: "neutral", 2: "contradiction"},
                                                  seed=2), new)
    second = HFClassifier("org/tiny", progress=False, cache=cache)
    assert second.revision == new and second.fingerprint != first.fingerprint
    np.testing.assert_allclose(second.predict_proba(*zip(*pair)), raw_probs(tmp_path / "v2", pair), atol=1e-5)
    pinned = HFClassifier("org/tiny", revision=old, progress=False, cache=CallCache(":memory:"))  # the old commit
    assert pinned.fingerprint == first.fingerprint
    np.testing.assert_allclose(pinned.predict_proba(*zip(*pair)), raw_probs(tmp_path / "v1", pair), atol=1e-5)


def test_hub_commit_online_comes_from_the_hub(tmp_path, monkeypatch):
    import huggingface_hub

    from nli_lib.models import loading

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(loading, "_RESOLVED", {})
    asked = []

    def model_info(model_id, revision=None, timeout=None):
        asked.append((model_id, revision))
        return type("Info", (), {"sha": "c" * 40})()

    monkeypatch.setattr(huggingface_hub, "model_info", model_info)
    assert loading.weights_fingerprint("org/tiny", revision="v1.0") == "org/tiny@" + "c" * 40
    assert asked == [("org/tiny", "v1.0")]

    def unreachable(*args, **kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(huggingface_hub, "model_info", unreachable)
    with pytest.raises(loading.ModelLoadError, match=r"'org/other': the hub is unreachable .*no cached copy"):
        loading.weights_fingerprint("org/other")


# --------------------------------------------------------------------------------------------------------------
# Loading errors name the model, the cause and the fix
# --------------------------------------------------------------------------------------------------------------

def test_missing_local_folder(tmp_path, monkeypatch):
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.loading import ModelLoadError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelLoadError, match=r"model folder \./models/mine does not exist \(resolved to .*/models/mine\)"):
        HFClassifier("./models/mine")


def test_hub_model_offline_without_a_cached_copy(tmp_path, monkeypatch):
    from nli_lib.models.embeddings import SentenceEncoder
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.loading import ModelLoadError

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    for make in (HFClassifier, SentenceEncoder):
        with pytest.raises(ModelLoadError, match=r"'roberta-large-mnli' .*nor in the Hugging Face cache .*offline "
                                                 r"mode.*Fix: download it once"):
            make("roberta-large-mnli")


def test_missing_tokenizer_dependency(tmp_path):
    pytest.importorskip("transformers")
    import importlib.util

    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.loading import ModelLoadError

    if importlib.util.find_spec("sentencepiece") is not None:
        pytest.skip("sentencepiece is installed here")
    path = tiny_bert(tmp_path / "sp", {0: "entailment", 1: "neutral", 2: "contradiction"})
    for name in ("tokenizer.json", "vocab.txt"):
        (path / name).unlink(missing_ok=True)
    (path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "T5Tokenizer"}))
    (path / "spiece.model").write_bytes(b"\x00" * 64)
    clf = HFClassifier(path, progress=False, cache=CallCache(":memory:"))
    with pytest.raises(ModelLoadError, match=r"tokenizer of model '.*/sp' .*needs the Python package "
                                             r"'sentencepiece'.*Fix: pip install sentencepiece"):
        clf.predict(["a man"], ["a dog"])


def test_unknown_label_names(tmp_path):
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.loading import ModelLoadError

    path = tiny_bert(tmp_path / "odd", {0: "yes", 1: "maybe", 2: "no"})
    with pytest.raises(ModelLoadError, match=r"model .*/odd: cannot map its labels \['yes', 'maybe', 'no'\].*"
                                             r"Fix: pass label_order"):
        HFClassifier(path)
    with pytest.raises(ModelLoadError, match="names 2 output units, but model .* has 3"):
        HFClassifier(path, label_order=["entailment", "neutral"])


# --------------------------------------------------------------------------------------------------------------
# Cached values are checked when read
# --------------------------------------------------------------------------------------------------------------

def Counting(cache) -> RuleClassifier:  # noqa: N802 - reads like the fake it builds
    """Always (0.2, 0.5, 0.3); `computed` lists the premises the model computed."""
    return RuleClassifier(constant([0.2, 0.5, 0.3]), name="counting", cache=cache)


def test_invalid_cached_probabilities_are_recomputed_and_reported(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    clf = Counting(cache)
    premises, hyps = ["a", "b", "c", "d", "e"], ["x"] * 5
    key = lambda p: {"model": clf.fingerprint, "labels": list(clf.labels), "p": p, "h": "x"}  # noqa: E731
    cache.put_many("classifier", [(key("a"), [0.1, 0.8, 0.1]),  # valid: used as is
                                  (key("b"), [0.5, 0.5]),  # wrong length
                                  (key("c"), [float("nan"), 0.5, 0.5]),  # NaN
                                  (key("d"), [0.9, 0.9, 0.9]),  # does not sum to 1
                                  (key("e"), "junk")])  # not a list
    with pytest.warns(RuntimeWarning, match=r"4 invalid cache entries in .*calls\.sqlite \(classifier/[0-9a-f]{12}: "
                                            r"expected 3 probabilities, found 2; .*non-finite.*sum to 2\.7"):
        probs = clf.predict_proba(premises, hyps)
    assert sorted(clf.computed) == ["b", "c", "d", "e"]
    np.testing.assert_allclose(probs, [[0.1, 0.8, 0.1]] + [[0.2, 0.5, 0.3]] * 4)
    assert cache.stats()["classifier"]["invalid"] == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the recomputed values replaced the invalid ones
        np.testing.assert_allclose(Counting(CallCache(tmp_path / "calls.sqlite")).predict_proba(premises, hyps), probs)


def test_invalid_cached_embedding_is_recomputed(tmp_path):
    pytest.importorskip("sentence_transformers")
    import base64

    from nli_lib.models.embeddings import SentenceEncoder

    path = tiny_bert(tmp_path / "enc", {0: "entailment", 1: "neutral", 2: "contradiction"})
    cache = CallCache(tmp_path / "c.sqlite")
    enc = SentenceEncoder(str(path), device="cpu", cache=cache, progress=False)
    good = enc.encode(["a man is sleeping"])
    cache.put("embedding", {"model": enc.fingerprint, "text": "a man is sleeping"},
              base64.b64encode((good[0] * 7).tobytes()).decode())  # not unit length
    with pytest.warns(RuntimeWarning, match=r"invalid cache entry .*embedding/.*norm 7"):
        np.testing.assert_allclose(enc.encode(["a man is sleeping"]), good, atol=1e-6)


# --------------------------------------------------------------------------------------------------------------
# A damaged or locked database
# --------------------------------------------------------------------------------------------------------------

def filled_db(path, n=400):
    cache = CallCache(path)
    cache.put_many("classifier", [({"i": i}, [0.2, 0.3, 0.5]) for i in range(n)])
    cache.close()  # WAL checkpointed into the main file
    return path


def test_garbled_page_names_the_file_and_the_fix(tmp_path):
    path = filled_db(tmp_path / "calls.sqlite")
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page : 4 * page] = os.urandom(2 * page)  # two pages of the table's tree overwritten
    path.write_bytes(bytes(data))
    with pytest.raises(CacheCorruptError, match=r"call cache .*calls\.sqlite is not a readable SQLite database or is "
                                                r"damaged .*Fix: move .*calls\.sqlite aside or delete it"):
        cache = CallCache(path)
        cache.get_many("classifier", [{"i": i} for i in range(400)])


def test_truncated_file_names_the_file_and_the_fix(tmp_path):
    path = filled_db(tmp_path / "calls.sqlite")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    with pytest.raises(CacheCorruptError, match=r"calls\.sqlite .*damaged.*malformed.*Fix: move"):
        cache = CallCache(path)
        cache.get_many("classifier", [{"i": i} for i in range(400)])


def test_lock_held_by_another_process_keeps_the_new_values(tmp_path):
    path = filled_db(tmp_path / "calls.sqlite", n=3)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process writing (or stuck)
    cache = CallCache(path, lock_timeout_s=0.3)
    values = [({"i": i}, [0.1, 0.1, 0.8]) for i in range(10, 15)]
    with pytest.raises(CacheLockedError) as err:
        cache.put_many("classifier", values)
    message, spill = str(err.value), path.with_name("calls.sqlite.pending.jsonl")
    assert f"call cache {path} is locked by another process" in message and "waited 0.3 s" in message
    assert f"the 5 values just computed were saved to {spill}" in message and "Fix: wait for or stop" in message
    assert len(spill.read_text().splitlines()) == 5
    other.execute("ROLLBACK")
    other.close()
    reopened = CallCache(path)  # imports the spilled values
    assert reopened.get_many("classifier", [k for k, _ in values]) == [v for _, v in values]
    assert not spill.exists()


def test_lock_that_frees_in_time_is_waited_for(tmp_path):
    path = filled_db(tmp_path / "calls.sqlite", n=3)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(1.5, lambda: (other.execute("ROLLBACK"), other.close()))
    release.start()
    cache = CallCache(path, lock_timeout_s=20)
    cache.put("classifier", {"i": 99}, [0.3, 0.3, 0.4])  # retried with backoff until the lock is gone
    release.join()
    assert CallCache(path).get("classifier", {"i": 99}) == [0.3, 0.3, 0.4]
    assert not path.with_name("calls.sqlite.pending.jsonl").exists()


def test_predictions_computed_while_locked_reach_the_cache_later(tmp_path):
    """End to end: a classifier's fresh predictions survive a lock that never frees."""
    path = filled_db(tmp_path / "calls.sqlite", n=3)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    clf = Counting(CallCache(path, lock_timeout_s=0.2))
    with pytest.raises(CacheLockedError, match="pending.jsonl"):
        clf.predict_proba(["p1", "p2"], ["h", "h"])
    other.execute("ROLLBACK")
    other.close()
    again = Counting(CallCache(path))
    np.testing.assert_allclose(again.predict_proba(["p1", "p2"], ["h", "h"]), [[0.2, 0.5, 0.3]] * 2)
    assert again.computed == []  # served from the imported values


def test_phrasis_dropout_base_follows_the_base_content(tmp_path, monkeypatch):
    """The head-dropout copy of a base is named by the base's identity: a changed base gets a new copy, not the
    old config over new weights."""
    from nli_lib.phrasis.models import with_head_dropout

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    first = with_head_dropout(str(base), 0.3)
    config = json.loads((base / "config.json").read_text())
    (base / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))  # the base changed
    second = with_head_dropout(str(base), 0.3)
    assert second != first and json.loads((tmp_path / "cache" / "phrasis" / "bases" / second / "config.json")
                                          .read_text())["hidden_act"] == "relu"


def test_fine_tuned_model_folder_key_holds_base_data_eval_and_every_spec_field(tmp_path):
    import dataclasses

    from nli_lib.models.training import DROPOUT_RNGS, OPTIMIZERS, TRAIN_PRECISIONS, TrainSpec, model_dir

    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(12)
    spec = TrainSpec(base=str(base))
    key = model_dir(spec, df, "m", df).name
    for field in dataclasses.fields(TrainSpec):
        if field.name in ("base", "base_revision", "labels", "text_cols"):
            continue
        choices = {"train_precision": TRAIN_PRECISIONS, "optimizer": OPTIMIZERS,
                   "dropout_rng": DROPOUT_RNGS}.get(field.name)
        value = getattr(spec, field.name)
        other = next(v for v in choices if v != value) if choices else type(value)(2)  # a choice: another one
        changed = dataclasses.replace(spec, **{field.name: other})
        assert model_dir(changed, df, "m", df).name != key, field.name
    assert model_dir(dataclasses.replace(spec, labels=("a", "b", "c")), df, "m", df).name != key
    assert model_dir(spec, df.iloc[:6], "m", df).name != key  # training data
    assert model_dir(spec, df, "m", df.iloc[:6]).name != key  # evaluation data (its accuracies are stored)
    (base / "vocab.txt").write_text((base / "vocab.txt").read_text() + "wug\n")
    assert model_dir(spec, df, "m", df).name != key  # the base model's content


def test_a_reused_fit_notes_the_data_its_fit_read(tmp_path, monkeypatch):
    """The outputs of a warm run list the same data files as a cold one: a fit that read a data file (the PhrasIS
    feature SVM reads WordNet) notes it again when the stored fit is reused; a stored fit without that record
    is fitted again."""
    from nli_lib import provenance
    from nli_lib.models import fit_cached

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(provenance, "DATA", {})
    df, fits = tiny_train_frame(30), []

    class Reads(NaiveBayesPairClassifier):
        def _fit(self, *args):
            fits.append(1)
            provenance.note_data("oewn/noun.animal", "ab12")  # what loading WordNet notes
            return super()._fit(*args)

    fit_cached(Reads, df, name="reads")
    assert provenance.used_data() == {"oewn/noun.animal": "ab12"} and fits == [1]
    monkeypatch.setattr(provenance, "DATA", {})  # a new process, with the fit in the cache
    fit_cached(Reads, df, name="reads")
    assert provenance.used_data() == {"oewn/noun.animal": "ab12"} and fits == [1]  # noted, not fitted again
    (stored,) = (tmp_path / "cache" / "models").glob("reads-*.skops.uses.json")
    stored.unlink()
    fit_cached(Reads, df, name="reads")
    assert fits == [1, 1] and stored.is_file()  # no record of its data: fitted again, and recorded
