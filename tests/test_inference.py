"""Inference settings (`nli_lib.inference.InferenceSettings`) and the cache keys they feed.

The first test pins today's key values: the classifier fingerprint (the call cache's "model" field) and the
hidden-state cache key, for a few settings. They were written before the settings became one object, so caches
filled before it still hit after it (the weights' identity and the int8 calibration hash are fixed stand-ins
here, so the values do not depend on this machine or the data mirror)."""
from __future__ import annotations

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
    from nli_lib.models import hf

    path = tiny_bert(tmp_path / "m")
    files = []
    fixed_identity.setattr(hf, "read_layers", lambda file, n: files.append(file.stem) or [np.zeros((n, 4))])
    for settings in HIDDEN_KEYS:
        _classifier(path, settings, fixed_identity).hidden_states(["A man sleeps."], ["A person sleeps."])
    assert dict(zip(HIDDEN_KEYS, files)) == HIDDEN_KEYS
