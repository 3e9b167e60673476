"""Model layer tests with tiny BERT models created from a config in a temp dir (no hub download)."""
from __future__ import annotations

import contextlib
import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from nli_lib.cache import CallCache
from nli_lib.config import LABELS
from nli_lib.models import heap, hf
from nli_lib.models import training as ft
from nli_lib.models.baselines import NaiveBayesPairClassifier, TfidfPairClassifier, overlap_features
from nli_lib.models.hf import HFClassifier, map_label_order
from nli_lib.models.loading import ModelLoadError

from kit import tiny_bert, tiny_train_frame

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PAIRS = [
    ("a man is sleeping outside .", "a person is sleeping ."),
    ("the dog runs", "a cat sits on the man in the dog , no"),
    ("a woman eats", "a woman is not eating"),
    ("the cat is sleeping in the dog on a man outside , the person is running", "a dog"),
    ("no", "a man"),
]


def raw_probs(path, pairs):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    with torch.no_grad():
        for p, h in pairs:
            out.append(torch.softmax(model(**tok(p, h, return_tensors="pt")).logits, -1)[0].numpy())
    return np.array(out)


def test_label_mapping_and_order_restoration(tmp_path):
    path = tiny_bert(tmp_path / "m", {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})
    clf = HFClassifier(path, batch_size=2, progress=False, cache=CallCache(":memory:"))
    probs = clf.predict_proba([p for p, _ in PAIRS], [h for _, h in PAIRS])
    expected = raw_probs(path, PAIRS)[:, [2, 1, 0]]  # head (c, n, e) -> our (e, n, c)
    np.testing.assert_allclose(probs, expected, atol=1e-5)
    assert clf.predict([PAIRS[0][0]], [PAIRS[0][1]])[0] == LABELS[int(expected[0].argmax())]


def test_generic_labels_need_explicit_order(tmp_path):
    path = tiny_bert(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ModelLoadError, match=r"model .*/m: cannot map its labels \['LABEL_0'.*label_order"):
        HFClassifier(path, progress=False)
    clf = HFClassifier(path, label_order=["neutral", "entailment", "contradiction"], progress=False,
                       cache=CallCache(":memory:"))
    np.testing.assert_allclose(clf.predict_proba(["a man"], ["a dog"]), raw_probs(path, [("a man", "a dog")])[:, [1, 0, 2]],
                               atol=1e-5)


def test_map_label_order_k_way():
    assert map_label_order({0: "b", 1: "a"}, ("a", "b")) == [1, 0]
    with pytest.raises(ModelLoadError, match="cannot map"):
        map_label_order({0: "x", 1: "y"}, ("a", "b"))


def test_predictions_are_cached(tmp_path):
    path = tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    cache = CallCache(tmp_path / "c.sqlite")
    clf = HFClassifier(path, progress=False, cache=cache)
    first = clf.predict_proba(["a man", "a man", "the dog"], ["a dog", "a dog", "a cat"])
    calls = []
    clf._predict_proba_uncached = lambda p, h: calls.append(p) or np.zeros((len(p), 3))
    again = HFClassifier(path, progress=False, cache=CallCache(tmp_path / "c.sqlite"))
    again._predict_proba_uncached = clf._predict_proba_uncached
    np.testing.assert_allclose(again.predict_proba(["a man", "the dog"], ["a dog", "a cat"]), first[[0, 2]])
    assert calls == []
    assert cache.stats()["classifier"]["writes"] == 2  # duplicate pair computed once


def test_hidden_states_layers_and_pooling(tmp_path):
    path = tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    clf = HFClassifier(path, batch_size=2, progress=False)
    layers = clf.hidden_states([p for p, _ in PAIRS], [h for _, h in PAIRS], pooling="cls+max")
    assert len(layers) == 3 and layers[0].shape == (len(PAIRS), 32)
    single = clf.hidden_states([PAIRS[3][0]], [PAIRS[3][1]], pooling="cls")
    np.testing.assert_allclose(single[2][0], layers[2][3, 16:], atol=1e-5)  # [CLS] is the second half


def test_finetune_trains_once_then_loads_from_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame()
    spec = ft.TrainSpec(base=str(base), epochs=2, batch_size=8, max_length=32, lr=1e-3)
    clf = ft.finetune(spec, df, eval_df=df, name="tiny", progress=False)
    assert [e["epoch"] for e in clf.train_log] == [1, 2] and "eval_accuracy" in clf.train_log[-1]
    assert clf.model_dir.name.startswith("tiny-") and (clf.model_dir / "train_log.json").is_file()

    def boom(*a, **k):
        raise AssertionError("should load the cached model, not train")

    monkeypatch.setattr(ft, "_train", boom)
    again = ft.finetune(spec, df, eval_df=df, name="tiny", progress=False)
    assert again.model_dir == clf.model_dir
    with pytest.raises(AssertionError):  # different hyper-parameters -> different key -> would train
        ft.finetune(ft.TrainSpec(base=str(base), epochs=1, batch_size=8, max_length=32), df, name="tiny", progress=False)


def test_k_way_finetune_single_text(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = pd.DataFrame({"premise": ["a man", "a dog", "a cat", "a woman"] * 3, "hypothesis": [""] * 12,
                       "label": ["x", "y", "z", "w"] * 3})
    spec = ft.TrainSpec(base=str(base), labels=("w", "x", "y", "z"), epochs=1, batch_size=4, max_length=16,
                        text_cols=("premise", None))
    eps_seen = []
    adamw = torch.optim.AdamW
    monkeypatch.setattr(torch.optim, "AdamW", lambda *a, **k: eps_seen.append(k.get("eps")) or adamw(*a, **k))
    clf = ft.finetune(dataclasses.replace(spec, adam_eps=1e-6), df, name="kway", progress=False)
    assert clf.labels == ("w", "x", "y", "z") and clf.predict_proba(["a man"], ["a"]).shape == (1, 4)
    assert eps_seen == [1e-6]  # the spec's AdamW epsilon reaches the optimiser


def test_baselines_protocol_and_learning():
    df = tiny_train_frame(60)
    for clf in (TfidfPairClassifier("logreg"), TfidfPairClassifier("svm"), NaiveBayesPairClassifier()):
        clf._cache = CallCache(":memory:")
        clf.fit(df)
        probs = clf.predict_proba(df.premise, df.hypothesis)
        assert probs.shape == (60, 3) and np.allclose(probs.sum(1), 1)
        assert (clf.predict_frame(df)["correct"]).mean() > 0.9, clf.name
    assert overlap_features(["a man sleeps"], ["no man"]).tolist()[0][4] == 1.0


def test_unfitted_baseline_refuses():
    with pytest.raises(RuntimeError, match="fit"):
        _ = TfidfPairClassifier().fingerprint


def test_hparam_search_with_optuna(tmp_path, monkeypatch):
    pytest.importorskip("optuna")
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(12)
    spec = ft.TrainSpec(base=str(base), batch_size=4, max_length=16)
    best, study = ft.hparam_search(df, df, spec, n_trials=2, name="hp",
                                   space={"lr": (1e-4, 1e-3), "batch_size": [4], "epochs": (1, 1)})
    assert len(study.trials) == 2 and best.epochs == 1 and 1e-4 <= best.lr <= 1e-3
    assert len(list((tmp_path / "cache" / "models").glob("hp-t*"))) == 2  # each trial is a cached model


def test_hidden_states_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    path = tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    clf = HFClassifier(path, progress=False)
    first = clf.hidden_states(["a man"], ["a dog"])
    fresh = HFClassifier(path, progress=False)  # a new process: the second call must not load the model
    monkeypatch.setattr(HFClassifier, "model", property(lambda self: pytest.fail("model loaded for a cached call")))
    again = fresh.hidden_states(["a man"], ["a dog"])
    assert len(again) == len(first) and all(np.array_equal(a, b) for a, b in zip(first, again))


def test_weights_load_only_when_a_prediction_is_not_cached(tmp_path):
    path = tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    cache = CallCache(tmp_path / "calls.sqlite")
    clf = HFClassifier(path, progress=False, cache=cache)
    assert clf._model is None and clf._tokenizer is None  # construction reads the config only
    first = clf.predict_proba(["a man"], ["a dog"])
    assert clf._model is not None
    warm = HFClassifier(path, progress=False, cache=cache)
    assert np.allclose(warm.predict_proba(["a man"], ["a dog"]), first) and warm._model is None


def test_fit_cached_baseline_fits_once(tmp_path, monkeypatch):
    from nli_lib.models import fit_cached

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    df = tiny_train_frame(30)
    first = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    monkeypatch.setattr(TfidfPairClassifier, "_fit", lambda *a: (_ for _ in ()).throw(AssertionError("refit")))
    again = fit_cached(lambda: TfidfPairClassifier("logreg"), df, name="tfidf-logreg")
    assert again.fingerprint == first.fingerprint
    np.testing.assert_allclose(again._predict_proba_uncached(["a man"], ["a dog"]),
                               first._predict_proba_uncached(["a man"], ["a dog"]))
    with pytest.raises(AssertionError, match="refit"):  # other data -> other key -> fits
        fit_cached(lambda: TfidfPairClassifier("logreg"), df.iloc[:20], name="tfidf-logreg")


def test_sentence_encoder_unit_vectors_and_cache(tmp_path):
    """Sentence embeddings through sentence-transformers from a local directory; cached per text."""
    pytest.importorskip("sentence_transformers")
    from nli_lib.models.embeddings import SentenceEncoder, cosine_matrix

    path = tiny_bert(tmp_path / "enc", {0: "entailment", 1: "neutral", 2: "contradiction"})
    enc = SentenceEncoder(str(path), batch_size=2, device="cpu", cache=CallCache(tmp_path / "c.sqlite"), progress=False)
    texts = ["a man is sleeping", "a dog runs", "a man is sleeping", "the cat sits on the man"]
    vecs = enc.encode(texts)
    assert vecs.shape[0] == 4 and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vecs[0], vecs[2])
    np.testing.assert_allclose(cosine_matrix(vecs, vecs).diagonal(), 1.0, atol=1e-5)
    again = SentenceEncoder(str(path), cache=CallCache(tmp_path / "c.sqlite"), progress=False)
    again._model = "must not be used"  # every text is cached: the model is never touched
    np.testing.assert_array_equal(again.encode(texts[::-1]), vecs[::-1])
    assert again.cache.stats()["embedding"] == {"hits": 4, "misses": 0, "writes": 0}


def test_bfloat16_precision_is_close_and_cached_apart(tmp_path):
    path = tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    cache = CallCache(tmp_path / "calls.sqlite")
    fp32 = HFClassifier(path, progress=False, cache=cache)
    bf16 = HFClassifier(path, progress=False, cache=cache, precision="bfloat16")
    assert fp32.fingerprint != bf16.fingerprint  # never answered from each other's cache entries
    p, h = ["a man is sleeping", "a dog runs"], ["a person sleeps", "a cat sits"]
    a, b = fp32.predict_proba(p, h), bf16.predict_proba(p, h)
    assert np.allclose(b.sum(1), 1) and np.abs(a - b).max() < 0.05 and not np.array_equal(a, b)
    with pytest.raises(ValueError, match="precision"):
        HFClassifier(path, precision="float16")


def test_bfloat16_warns_where_the_cpu_only_emulates_it(tmp_path, monkeypatch):
    """On an x86 CPU without bf16 units bfloat16 is ~6x slower than float32: loading the model says so; with bf16
    units, in float32, or on a CPU whose flags we do not read (ARM), nothing is said."""
    import platform

    path = tiny_bert(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})

    def emulated_warnings(has_bf16: bool, precision: str = "bfloat16", machine: str = "x86_64") -> list[str]:
        monkeypatch.setattr(hf, "cpu_has_bf16", lambda: has_bf16)
        monkeypatch.setattr(platform, "machine", lambda: machine)
        clf = HFClassifier(path, progress=False, device="cpu", precision=precision,
                           cache=CallCache(tmp_path / "calls.sqlite"))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            _ = clf.model  # loading is where it warns
        return [str(w.message) for w in seen if "emulated" in str(w.message)]

    found = emulated_warnings(has_bf16=False)
    assert len(found) == 1 and "bf16 units" in found[0] and "int8" in found[0]
    assert emulated_warnings(has_bf16=True) == []
    assert emulated_warnings(has_bf16=False, precision="float32") == []
    assert emulated_warnings(has_bf16=False, machine="aarch64") == []


def test_length_grouped_batches_cut_padding_and_keep_every_row():
    rng = np.random.default_rng(0)
    lengths = np.concatenate([rng.integers(5, 15, 300), rng.integers(60, 90, 100)])
    batches = ft.length_grouped_batches(lengths, 16, np.random.default_rng(1), chunk_batches=25)
    assert sorted(np.concatenate(batches).tolist()) == list(range(400))  # each row once
    padded = sum(len(b) * lengths[b].max() for b in batches)
    order = np.random.default_rng(1).permutation(400)
    plain = sum(len(order[i:i + 16]) * lengths[order[i:i + 16]].max() for i in range(0, 400, 16))
    assert padded < 0.6 * plain  # grouped batches pad far less than random ones
    starts = [int(b[0]) for b in batches]
    assert starts != sorted(starts, key=lambda i: -lengths[i])  # batch order shuffled, not longest first


def test_finetune_groups_by_length_and_autocasts_bf16_when_the_spec_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(16)
    grouped, dtypes = [], []
    real = ft.length_grouped_batches
    monkeypatch.setattr(ft, "length_grouped_batches", lambda *a, **k: grouped.append(1) or real(*a, **k))
    from transformers import BertForSequenceClassification

    forward = BertForSequenceClassification.forward

    def spy(self, *a, **k):
        out = forward(self, *a, **k)
        if self.training:
            dtypes.append((out.logits.dtype, self.classifier.weight.dtype))
        return out

    monkeypatch.setattr(BertForSequenceClassification, "forward", spy)
    spec = ft.TrainSpec(base=str(base), epochs=1, batch_size=4, max_length=32, lr=1e-3)
    ft.finetune(spec, df, name="plain", progress=False)
    assert not grouped and {d for d, _ in dtypes} == {torch.float32}
    dtypes.clear()
    fast = dataclasses.replace(spec, group_by_length=True, train_precision="bfloat16")
    clf = ft.finetune(fast, df, name="fast", progress=False)
    assert grouped == [1]  # one epoch, grouped once
    assert {d for d, _ in dtypes} == {torch.bfloat16} and {w for _, w in dtypes} == {torch.float32}
    assert clf.model_dir != ft.model_dir(spec, df, "fast")  # both fields are in the cache key
    with pytest.raises(ValueError, match="train_precision"):  # refused by the spec, before anything loads
        dataclasses.replace(spec, train_precision="float16")


def test_finetune_updates_with_fused_adamw_unless_the_spec_asks_for_the_loop(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(16)
    made, real = [], torch.optim.AdamW

    def spy(*a, **k):
        made.append(k.get("fused"))
        return real(*a, **k)

    monkeypatch.setattr(torch.optim, "AdamW", spy)
    spec = ft.TrainSpec(base=str(base), epochs=1, batch_size=4, max_length=32, lr=1e-3)
    fused = ft.finetune(spec, df, name="fused", progress=False)
    loop = ft.finetune(dataclasses.replace(spec, optimizer="adamw"), df, name="fused", progress=False)
    assert made == [True, None]  # the default is the fused kernel; "adamw" is torch's default implementation
    assert fused.model_dir != loop.model_dir  # the implementation is in the cache key
    weights = [{n: p.detach() for n, p in clf.model.named_parameters()} for clf in (fused, loop)]
    assert max(float((weights[0][n] - weights[1][n]).abs().max()) for n in weights[0]) < 1e-4  # same algorithm
    with pytest.raises(ValueError, match="optimizer"):  # refused by the spec, before anything loads
        dataclasses.replace(spec, optimizer="sgd")


def _fresh_block(libc, size: int) -> tuple[int, bool]:
    """(minor page faults of writing every byte, whether malloc mapped it) for a block malloc gives us after
    freeing one of the same size; 'mapped' is read from glibc's mallinfo2 (bytes in mapped blocks)."""
    import ctypes
    import resource

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                         "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = MallInfo2
    libc.free(ctypes.memset(libc.malloc(size), 1, size))
    before, mapped_before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, libc.mallinfo2().hblkhd
    block = libc.malloc(size)
    ctypes.memset(block, 1, size)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    mapped = libc.mallinfo2().hblkhd - mapped_before >= size
    libc.free(block)
    return faults, mapped


def _huge_pages_always() -> bool:
    from pathlib import Path

    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return thp.is_file() and "[always]" in thp.read_text()


@pytest.mark.skipif(heap.glibc() is None or not hasattr(heap.glibc(), "mallinfo2"),
                    reason="the setting is glibc's (elsewhere the context does nothing); mallinfo2 needs glibc 2.33")
@pytest.mark.skipif(_huge_pages_always(), reason="with huge pages always on, a mapped block faults in 2 MiB pages")
def test_large_blocks_stay_in_the_heap_while_a_model_trains_and_are_mapped_again_after():
    libc, size = heap.glibc(), 64 << 20  # 16,384 pages of 4 KiB, above glibc's largest mmap threshold
    pages = size // 4096
    faults, mapped = _fresh_block(libc, size)
    assert mapped and faults > pages // 2  # mapped anew, faulted in page by page
    with heap.large_blocks_on_heap() as active:
        assert active
        faults, mapped = _fresh_block(libc, size)
        assert not mapped and faults < pages // 10  # the freed block is taken again from the heap
    faults, mapped = _fresh_block(libc, size)
    assert mapped and faults > pages // 2  # glibc's mappings are back
    small = 4 << 20  # under the mmap threshold left behind: kept in the heap, as glibc's dynamic scheme does
    faults, mapped = _fresh_block(libc, small)
    assert not mapped and faults < small // 4096 // 10


def test_finetune_steps_run_with_large_blocks_kept_in_the_heap(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    inside, steps = [], []

    @contextlib.contextmanager
    def recorder():
        inside.append(True)
        yield True
        inside.append(False)

    clip = torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(ft, "large_blocks_on_heap", recorder)
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", lambda *a, **k: steps.append(inside[-1]) or clip(*a, **k))
    ft.finetune(ft.TrainSpec(base=str(base), epochs=2, batch_size=4, max_length=32), tiny_train_frame(16),
                name="heap", progress=False)
    assert inside == [True, False] and len(steps) == 8 and all(steps)  # both epochs' 4 steps, inside the context


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="GPU drivers are looked up on Linux")
def test_the_offline_spec_is_built_without_importing_torch_on_a_machine_without_gpu_driver():
    """A warm notebook builds `offline_spec` (the cached model's key) without paying torch's import when no GPU
    driver is present; with one (faked), torch is asked."""
    import subprocess
    import sys

    code = ("import sys; from nli_lib.models import hf; hf.GPU_DRIVER_PATHS = {paths!r}; "
            "from nli_lib.models.named import offline_spec; offline_spec(quick=True); "
            "print('torch' in sys.modules, hf.pick_device())")
    run = lambda paths: subprocess.run([sys.executable, "-c", code.format(paths=paths)], capture_output=True,  # noqa: E731
                                       text=True, check=True).stdout.split()
    assert run(("/nonexistent-gpu-driver",)) == ["False", "cpu"]
    assert run(("/",))[0] == "True"  # a driver path exists: torch decides


def test_auto_train_precision_follows_the_hardware(monkeypatch):
    import platform

    monkeypatch.setattr(platform, "machine", lambda: "x86_64")  # the CPU flags are read on x86 only
    monkeypatch.setattr(hf, "cpu_has_bf16", lambda: True)
    assert ft.auto_train_precision("cpu") == "bfloat16"
    monkeypatch.setattr(hf, "cpu_has_bf16", lambda: False)
    assert ft.auto_train_precision("cpu") == "float32"
    from nli_lib.models.named import offline_spec

    spec = offline_spec(quick=True)
    assert spec.group_by_length and spec.train_precision == "float32"


def test_emulated_bf16_on_a_gpu_is_neither_trained_in_nor_scored_silently(monkeypatch):
    """torch's is_bf16_supported() says yes on a T4 or V100, which only emulate bf16: training picks float32
    there, and bfloat16 scoring warns; an Ampere GPU trains in bf16 and is not warned about."""
    import torch

    from nli_lib.models.hf import warn_if_bf16_emulated

    def t4(including_emulation: bool = True) -> bool:  # compute capability 7.5: bf16 by emulation only
        return including_emulation

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", t4)
    assert hf.native_bf16("cuda") is False and ft.auto_train_precision("cuda") == "float32"
    with pytest.warns(RuntimeWarning, match="cuda, a GPU without bf16 units"):
        assert warn_if_bf16_emulated("cuda")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)  # an A100
    assert hf.native_bf16("cuda") is True and ft.auto_train_precision("cuda") == "bfloat16"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_if_bf16_emulated("cuda")


def test_finetune_waits_for_a_process_training_the_same_model(tmp_path, monkeypatch):
    import shutil
    import threading
    import time

    from nli_lib.atomic import exclusive

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(8)
    spec = ft.TrainSpec(base=str(base), epochs=1, batch_size=4, max_length=32)
    done = ft.finetune(spec, df, name="shared", progress=False).model_dir
    shutil.move(done, tmp_path / "elsewhere")
    holding = threading.Event()

    def other_trainer():  # holds the model's lock, "trains" for a while, then publishes the folder
        with exclusive(done):
            holding.set()
            time.sleep(0.5)
            shutil.move(tmp_path / "elsewhere", done)

    thread = threading.Thread(target=other_trainer)
    thread.start()
    holding.wait()
    monkeypatch.setattr(ft, "_train", lambda *a, **k: pytest.fail("trained a model another process was training"))
    assert ft.finetune(spec, df, name="shared", progress=False).model_dir == done
    thread.join()
