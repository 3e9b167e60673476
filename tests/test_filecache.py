"""One mechanism for atomic writes and file caches (nli_lib.atomic, nli_lib.filecache), and the content hashes
(nli_lib.hashing) whose recipes stored caches depend on."""
from __future__ import annotations

import json

import numpy as np
import pytest

from nli_lib import atomic, filecache, hashing


def test_a_failed_write_leaves_neither_the_file_nor_a_temporary(tmp_path):
    (tmp_path / "old.json").write_text('{"v": 0}')
    with pytest.raises(ValueError):
        with atomic.atomic_path(tmp_path / "old.json") as tmp:
            tmp.write_text('{"v": 1')
            raise ValueError("crash mid-write")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]
    assert json.loads((tmp_path / "old.json").read_text()) == {"v": 0}  # the old content stays whole


def test_a_folder_appears_only_complete_and_a_crashed_one_is_cleared(tmp_path):
    dest = tmp_path / "model"

    def broken(tmp):
        (tmp / "weights.bin").write_bytes(b"x")
        raise RuntimeError("killed mid-save")

    with pytest.raises(RuntimeError):
        filecache.cached_dir(dest, broken)
    assert not dest.exists()  # a build that fails never gets the final name
    (tmp_path / "model.partial").mkdir()  # left by a killed run
    (tmp_path / "model.partial" / "junk").write_text("stale")
    built = filecache.cached_dir(dest, lambda tmp: (tmp / "config.json").write_text("{}"))
    assert sorted(p.name for p in built.iterdir()) == ["config.json"]  # nothing of the killed run
    assert not (tmp_path / "model.partial").exists()
    assert filecache.cached_dir(dest, lambda tmp: pytest.fail("rebuilt a complete folder")) == dest


@pytest.mark.parametrize("damage", [b"", b"not numpy", b"\x93NUMPY\x01\x00"])
def test_a_damaged_file_is_reported_removed_and_recomputed(tmp_path, damage):
    path, calls = tmp_path / "a.npy", []
    compute = lambda: calls.append(1) or np.ones((2, 2))  # noqa: E731
    filecache.cached(path, filecache.NPY, compute, what="demo array")
    path.write_bytes(damage)
    with pytest.warns(RuntimeWarning, match=r"demo array .*a\.npy is unreadable.*recomputing it"):
        again = filecache.cached(path, filecache.NPY, compute, what="demo array")
    assert len(calls) == 2 and np.array_equal(again, np.ones((2, 2)))
    assert np.array_equal(np.load(path), np.ones((2, 2)))  # stored again, intact


def test_a_value_the_check_rejects_is_recomputed(tmp_path):
    path = tmp_path / "a.npy"
    filecache.write(path, np.full(3, np.nan), filecache.NPY)
    check = lambda a: "non-finite values" if not np.isfinite(a).all() else None  # noqa: E731
    with pytest.warns(RuntimeWarning, match="non-finite values"):
        value = filecache.cached(path, filecache.NPY, lambda: np.zeros(3), validate=check)
    assert np.array_equal(value, np.zeros(3))


def test_arrays_that_need_pickle_are_refused(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert filecache.read(path, filecache.NPY) is None
    assert not path.exists()


def test_tsne_cache_damage_is_recomputed(tmp_path, monkeypatch):
    from nli_lib.taxinli import representations as rep

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    X = np.random.default_rng(0).normal(size=(12, 5))
    first = rep.tsne_2d(X, seed=0, perplexity=3)
    (stored,) = (tmp_path / "taxinli_tsne").glob("*.npy")
    np.save(stored, first[:5])  # the wrong number of rows
    with pytest.warns(RuntimeWarning, match=r"t-SNE map .*shape \(5, 2\)"):
        again = rep.tsne_2d(X, seed=0, perplexity=3)
    np.testing.assert_allclose(again, first, rtol=1e-5)


def test_hash_recipes_are_those_the_stored_caches_were_keyed_with():
    """Cache keys, model folder names and fit files are named by these digests: a changed recipe would orphan
    every stored value (values computed with the recipes as they were before nli_lib.hashing)."""
    from nli_lib.cache import key_hash

    assert key_hash({"model": "x", "p": "é", "h": [1, 2]}) == \
        "01edd95e47b203e230937518d7c1f22d2b6869660fc0e7e15ce170ce5b571bbb"
    assert hashing.text_hash("a", "b\x1e", "c") == "103e31d1a512c88a"
    assert hashing.array_hash(np.arange(6.0).reshape(2, 3), 0, 30.0, 50) == "fec2ec738b5061b36dd5"
    assert hashing.stable_json({"b": [1, "x"], "a": None}) == '{"a": null, "b": [1, "x"]}'


def test_cached_frames_returns_the_stored_tables_exactly_and_computes_once(tmp_path):
    import pandas as pd

    calls = []

    def compute():
        calls.append(1)
        return {"rows": pd.DataFrame({"x": [0.1 + 0.2, float("nan")], "s": ["a", None], "b": [True, False],
                                      "n": [1, 2]}, index=[3, 7]),
                "empty": pd.DataFrame({"k": pd.Series([], dtype="int64")})}

    path = tmp_path / f"k{filecache.FRAMES.suffix}"
    first = filecache.cached_frames(path, compute)
    again = filecache.cached_frames(path, compute)
    assert len(calls) == 1 and path.name == "k.frames.json"
    for name in first:  # every bit of the floats, the dtypes, the index
        pd.testing.assert_frame_equal(first[name], again[name], check_exact=True)
    assert again["rows"].loc[3, "x"] == 0.1 + 0.2 and again["rows"]["b"].dtype == bool


def test_frame_hash_sees_values_index_and_dtypes():
    import pandas as pd

    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert hashing.frame_hash(df) == hashing.frame_hash(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}))
    assert hashing.frame_hash(df) != hashing.frame_hash(df.iloc[::-1])
    assert hashing.frame_hash(df) != hashing.frame_hash(df.set_axis([5, 6]))
    assert hashing.frame_hash(df) != hashing.frame_hash(df.astype({"a": "int32"}))


def test_a_derived_result_read_from_the_cache_names_the_data_it_was_computed_from(tmp_path, monkeypatch):
    """A warm run's outputs must record the same data files as a cold run's: the computation noted the POS
    tagger's file when it ran, and a later process that reads the result from the cache notes it again."""
    import pandas as pd

    from nli_lib import provenance

    monkeypatch.setattr(provenance, "DATA", {})
    monkeypatch.delenv(provenance.RECORD_ENV, raising=False)
    path, calls = tmp_path / "t.frames.json", []

    def compute():
        calls.append(1)
        provenance.note_data("nltk/averaged_perceptron_tagger", "aa11")
        return {"t": pd.DataFrame({"a": [1.5]})}

    first = filecache.cached_derived(path, compute, "demo tables", fmt=filecache.FRAMES)
    monkeypatch.setattr(provenance, "DATA", {})  # as in a new process
    again = filecache.cached_derived(path, compute, "demo tables", fmt=filecache.FRAMES)
    assert len(calls) == 1 and again["t"].equals(first["t"])
    assert provenance.used_data() == {"nltk/averaged_perceptron_tagger": "aa11"}
    path.with_name(path.name + filecache.USES_SUFFIX).unlink()  # no record of its data: computed again
    filecache.cached_derived(path, compute, "demo tables", fmt=filecache.FRAMES)
    assert len(calls) == 2 and path.with_name(path.name + filecache.USES_SUFFIX).is_file()


def test_cached_verdicts_are_judged_once_and_a_stored_value_that_does_not_fit_is_judged_again(tmp_path, monkeypatch):
    """Verdicts are kept under the items' hash: the same items read back without judging, other items judged.
    A stored value that is not one (status, reason) pair per item, or names a status outside `statuses`, is
    reported and judged again."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    calls = []

    def judge(verdicts):
        def run():
            calls.append(1)
            return verdicts
        return run

    items = [("a man sleeps", True), ("", False)]
    good = [("ok", ""), ("malformed", "empty")]
    assert filecache.cached_verdicts("demo", items, judge(good), "demo checks", ("ok", "malformed")) == good
    assert filecache.cached_verdicts("demo", items, judge([]), "demo checks", ("ok", "malformed")) == good
    assert len(calls) == 1
    assert filecache.cached_verdicts("demo", items[:1], judge(good[:1]), "demo checks") == good[:1]
    assert len(calls) == 2  # other items: another key
    path = filecache.derived_path("demo", {"items": hashing.json_hash([list(i) for i in items])}, filecache.JSON)
    assert path.is_file()
    for stored in ([["ok", ""]], [["ok", ""], ["unknown", "x"]], [["ok", ""], ["malformed", 3]]):
        path.write_text(json.dumps(stored))
        with pytest.warns(RuntimeWarning, match="demo checks"):
            got = filecache.cached_verdicts("demo", items, judge(good), "demo checks", ("ok", "malformed"))
        assert got == good
    assert len(calls) == 5
