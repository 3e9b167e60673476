"""Inference settings (`nli_lib.inference.InferenceSettings`) and the cache keys they feed.

The first test pins today's key values: the classifier fingerprint (the call cache's "model" field) and the
hidden-state cache key, for a few settings. They were written before the settings became one object, so caches
filled before it still hit after it (the weights' identity and the int8 calibration hash are fixed stand-ins
here, so the values do not depend on this machine or the data mirror)."""
from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

from kit import tiny_bert

pytest.importorskip("torch")

INT8 = "int8:calibrated-minmax-smooth0.7-fp32outliers16-clipped-residualadd-onednn:levels=256:weights=127:C"
PINNED = {  # settings -> fingerprint
    (("precision", "float32"),): "W|units=0,1,2|max_len=128",
    (("max_length", 64), ("precision", "bfloat16")): "W|units=0,1,2|max_len=64|bfloat16",
    (("precision", "int8"),): f"W|units=0,1,2|max_len=128|{INT8}|recheck<0.05:float32",
    (("precision", "int8"), ("recheck_margin", 0.02), ("native", True)): f"W|units=0,1,2|max_len=128|{INT8}|"
                                                                         f"recheck<0.02:bfloat16",
    (("precision", "int8"), ("recheck_margin", 0)): f"W|units=0,1,2|max_len=128|{INT8}",
    (("batch_size", 8), ("streams", 1), ("device", "cpu")): "W|units=0,1,2|max_len=128",
    (("label_order", ("contradiction", "neutral", "entailment")),): "W|units=2,1,0|max_len=128",
}
HIDDEN_KEYS = {  # settings -> hidden-state cache file (the pairs below, pooling cls+max)
    (("precision", "float32"),): "0e7ca9a310131873",
    (("max_length", 64), ("precision", "bfloat16")): "f1b3f89edab8f09a",
    (("precision", "int8"),): "9832f3d109f2d4c7",
}


@pytest.fixture
def fixed_identity(monkeypatch):
    """The weights' identity 'W', the int8 calibration hash 'C', 256/127 int8 levels, no native bf16."""
    from nli_lib.models import hf, int8

    monkeypatch.setattr(hf, "source_fingerprint", lambda source: "W")
    monkeypatch.setattr(hf, "int8_calibration_pairs", lambda: ((), (), "C"))
    monkeypatch.setattr(int8, "int8_levels", lambda: (256, 127))
    monkeypatch.setattr(hf, "native_bf16", lambda device: False)
    return monkeypatch


def _classifier(path, settings: tuple, monkeypatch):
    from nli_lib.models import hf

    options = dict(settings)
    if options.pop("native", False):
        monkeypatch.setattr(hf, "native_bf16", lambda device: True)
    return hf.HFClassifier(path, progress=False, **options)


def test_cache_keys_of_identical_settings_are_those_caches_were_filled_with(tmp_path, fixed_identity):
    path = tiny_bert(tmp_path / "m")
    got = {settings: _classifier(path, settings, fixed_identity).fingerprint for settings in PINNED}
    assert got == PINNED


def test_hidden_state_cache_keys_are_those_caches_were_filled_with(tmp_path, fixed_identity):
    from nli_lib.models import speed

    path = tiny_bert(tmp_path / "m")
    files = []
    fixed_identity.setattr(speed, "read_layers", lambda file, n: files.append(file.stem) or [np.zeros((n, 4))])
    for settings in HIDDEN_KEYS:
        _classifier(path, settings, fixed_identity).hidden_states(["A man sleeps."], ["A person sleeps."])
    assert dict(zip(HIDDEN_KEYS, files)) == HIDDEN_KEYS


def test_settings_passed_as_one_object_give_the_keys_of_the_same_settings_passed_one_by_one(tmp_path, fixed_identity):
    from nli_lib.inference import InferenceSettings
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m")
    for settings, key in PINNED.items():
        options = dict(settings)
        if options.pop("native", False) or "label_order" in options:
            continue
        clf = HFClassifier(path, progress=False, settings=InferenceSettings(**options))
        assert (clf.settings, clf.fingerprint) == (InferenceSettings(**options), key)


def test_the_allowed_precisions_are_defined_once():
    import typing

    from nli_lib import inference
    from nli_lib.models import hf
    from nli_lib.profile import Profile, ProfileError, load_profile

    assert typing.get_args(Profile.model_fields["precision"].annotation) == inference.PRECISIONS
    assert hf.PRECISIONS is inference.PRECISIONS
    with pytest.raises(ProfileError, match="precision: Input should be 'float32', 'bfloat16' or 'int8'"):
        load_profile(text="precision: float16")
    for bad, message in (({"precision": "float16"}, "precision must be one of"),
                         ({"recheck_margin": 0.1}, "applies to precision int8"),
                         ({"precision": "int8", "recheck_margin": 2.0}, "within 0..1"),
                         ({"batch_size": 0}, "must be positive")):
        with pytest.raises(ValueError, match=message):
            inference.InferenceSettings(**bad)


def test_the_profile_builds_the_settings_and_the_session_passes_them_to_every_family(monkeypatch):
    from nli_lib import families
    from nli_lib.inference import InferenceSettings
    from nli_lib.notebook import NotebookSession
    from nli_lib.profile import load_profile

    profile = load_profile(text="tier: paper\nprecision: bfloat16\nnli_model: org/m\nextra_models: [tfidf-svm]")
    assert profile.inference == InferenceSettings(precision="bfloat16")
    seen = {}

    def load(ref, **options):  # a loaded model: what the session keeps of it is its name
        seen[ref.id] = options["settings"]
        return types.SimpleNamespace(name=ref.id)

    for kind in ("hf", "baseline"):
        monkeypatch.setitem(families.FAMILIES, kind, dataclasses.replace(families.FAMILIES[kind], load=load))
    nb = NotebookSession.__new__(NotebookSession)
    nb.profile, nb.params, nb.models, nb._used = profile, {"seed": 0}, {}, []
    nb.nli_model(), nb.nli_model("tfidf-svm")
    assert nb._used == ["org/m", "tfidf-svm"]  # the next output saved names both
    assert seen == {"org/m": InferenceSettings(precision="bfloat16"), "tfidf-svm": InferenceSettings("bfloat16")}


def test_a_classifier_says_what_it_ran_with(tmp_path, fixed_identity):
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m")
    ran = HFClassifier(path, progress=False, precision="int8", device="cpu", streams=2).ran
    assert ran == {"precision": "int8", "max_length": 128, "batch_size": 64, "recheck_margin": 0.05, "device": "cpu",
                   "streams": 2, "recheck_precision": "float32"}
    assert HFClassifier(path, progress=False, device="cpu", streams=1).ran["recheck_margin"] == 0.0


# ---- HFClassifier: its speed techniques behind models.speed.SpeedPath; int8's second pass a classifier of its own

def test_every_speed_technique_goes_through_the_speed_path(tmp_path, monkeypatch):
    """Loading hands the plain model to `SpeedPath.prepare` and scoring hands the batches to `SpeedPath.score`;
    with both replaced by plain code the probabilities are those of the fast path (float32: within 1e-5)."""
    from nli_lib.models import speed
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m")
    fast = HFClassifier(path, progress=False, device="cpu", batch_size=2)
    expected = fast._predict_proba_uncached(["a man sleeps", "dogs run", "it rains"], ["a person rests", "cats", "sun"])
    seen = []

    def plain_score(self, model, batches, probabilities):
        seen.append(("score", self.precision, len(batches)))
        return ((idx, probabilities(batch)) for idx, batch in batches)

    monkeypatch.setattr(speed.SpeedPath, "prepare",
                        lambda self, model, probe, calibration: seen.append(("prepare", self.device)) or model)
    monkeypatch.setattr(speed.SpeedPath, "score", plain_score)
    plain = HFClassifier(path, progress=False, device="cpu", batch_size=2)
    got = plain._predict_proba_uncached(["a man sleeps", "dogs run", "it rains"], ["a person rests", "cats", "sun"])
    assert seen == [("prepare", "cpu"), ("score", "float32", 2)]
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_int8s_second_pass_is_a_classifier_of_its_own_that_follows_the_settings(tmp_path, fixed_identity):
    """The unsure pairs go to `second_pass()`: the same files, name and head order at the recheck precision, with
    no recheck of its own, built anew (not a copy) and rebuilt when the first's settings change (a view at
    another token window rechecks at that window)."""
    import copy

    from nli_lib.inference import InferenceSettings
    from nli_lib.models import hf

    monkeypatch = fixed_identity
    monkeypatch.setattr(hf, "native_bf16", lambda device: True)
    path = tiny_bert(tmp_path / "m")
    first = hf.HFClassifier(path, progress=False, device="cpu", precision="int8", name="mine",
                            label_order=("contradiction", "neutral", "entailment"))
    second = first.second_pass()
    assert type(second) is hf.HFClassifier and second is not first and second._rechecker is None
    assert second.settings == InferenceSettings(precision="bfloat16", device="cpu") and second.recheck_margin == 0
    assert (second.name, second.source, second.unit_for_label, second.label_order) == \
        (first.name, first.source, first.unit_for_label, first.label_order)
    assert second.fingerprint == first.fingerprint.split("|int8:")[0] + "|bfloat16"

    scored_at = []
    monkeypatch.setattr(hf.HFClassifier, "_predict_proba_uncached", lambda self, p, h, batch_size=None: scored_at.append(
        (self.precision, self.max_length)) or np.tile([0.2, 0.7, 0.1], (len(p), 1)))
    unsure = np.array([[0.5, 0.49, 0.01], [0.9, 0.05, 0.05]])
    np.testing.assert_array_equal(first._recheck(unsure.copy(), ["p1", "p2"], ["h1", "h2"])[0], [0.2, 0.7, 0.1])
    view = copy.copy(first)
    view.max_length = 64
    view._recheck(unsure.copy(), ["p1", "p2"], ["h1", "h2"])
    assert scored_at == [("bfloat16", 128), ("bfloat16", 64)] and first.rechecked == 1
