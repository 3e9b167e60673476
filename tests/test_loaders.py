"""Loaders (nli_lib/data/loaders.py) on hand-written fixtures, on the real mirror, and fetch() error paths.

Real-data tests (marker `mirror`) run only when NLI_DATA_MIRROR points at the offline mirror:

    NLI_DATA_MIRROR=/work/shared/data pytest tests/test_loaders.py -q
"""
from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import pickle
import time
import urllib.error
import urllib.request
import warnings
import zipfile
from collections import Counter, OrderedDict
from pathlib import Path

import pandas as pd
import pytest

from nli_lib import provenance
from nli_lib.config import LABELS, REPO_ROOT
from nli_lib.data import loaders as L
from nli_lib.data import nltk_data as N
from nli_lib.data import rows as R
from nli_lib.data import wordnet as W
from nli_lib.data.fetch import DataError
from nli_lib.data.loaders import MalformedDataError, MalformedRowWarning
from nli_lib.ftc import loaders as FL
from nli_lib.phrasis import loaders as PL
from nli_lib.taxinli import loaders as TL

fetch_mod = importlib.import_module("nli_lib.data.fetch")  # the package re-exports fetch() under the module's name

TAXINLI_Q2 = TL.NEUTRAL_FEATURES
FIX = REPO_ROOT / "data" / "fixtures"

ESNLI_PATHS = {name: FIX / "esnli" / f"{name}.dev" for name in L.ESNLI_FILES}


def load_dropping(loader, *args, **kwargs) -> tuple[pd.DataFrame, str]:
    """Run a loader that must warn exactly once about dropped rows; return the frame and the warning text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = loader(*args, **kwargs)
    messages = [str(w.message) for w in caught if issubclass(w.category, MalformedRowWarning)]
    assert len(messages) == 1, messages
    return df, messages[0]


def assert_schema(df: pd.DataFrame, labels=LABELS) -> None:
    assert list(df.columns[:4]) == ["premise", "hypothesis", "label", "pair_id"]
    assert set(df["label"]) <= set(labels)
    for col in ("premise", "hypothesis"):
        assert df[col].map(lambda s: isinstance(s, str) and s == s.strip() and s != "").all(), col


# ---------------------------------------------------------------------------------------------------------------
# Fixtures: schema, label mapping, malformed rows in both modes, path overrides
# ---------------------------------------------------------------------------------------------------------------

def test_esnli_fixture():
    df, message = load_dropping(L.load_esnli, "dev", paths=ESNLI_PATHS)
    assert_schema(df)
    assert list(df.columns) == list(L.ESNLI_COLUMNS)
    assert df["label"].tolist() == ["entailment", "neutral", "contradiction"]
    assert df["pair_id"].tolist() == ["esnli-dev-000000", "esnli-dev-000001", "esnli-dev-000002"]
    assert df.loc[0, "premise"] == "A wug is sitting on a fixture bench ."  # trailing space stripped
    assert df.loc[2, "explanation_2"] == "daxes are somebody ."
    assert df.attrs["dropped"] == 2
    assert df.attrs["source"] == [str(ESNLI_PATHS[n]) for n in L.ESNLI_FILES]
    assert f"{ESNLI_PATHS['labels']}:4" in message and "unknown label" in message
    assert f"{ESNLI_PATHS['s2']}:5" in message and "empty text" in message


def test_parsed_frames_are_kept_per_process_unless_rows_were_dropped(tmp_path, monkeypatch):
    """A clean file set is parsed once per process (callers get copies); a file set with malformed rows is
    parsed, and warned about, at every load."""
    parsed = []
    real = L._parse_esnli
    monkeypatch.setattr(L, "_parse_esnli", lambda *a: parsed.append(1) or real(*a))
    load_dropping(L.load_esnli, "dev", paths=ESNLI_PATHS)
    load_dropping(L.load_esnli, "dev", paths=ESNLI_PATHS)  # warns again
    assert len(parsed) == 2
    clean = {name: tmp_path / f"{name}.dev" for name in L.ESNLI_FILES}
    for name, text in zip(L.ESNLI_FILES, ("A dog runs.", "An animal moves.", "entailment", "e1", "e2", "e3")):
        clean[name].write_text(text + "\n")
    first = L.load_esnli("dev", paths=clean)
    first.loc[0, "premise"] = "changed by a caller"
    again = L.load_esnli("dev", paths=clean)
    assert len(parsed) == 3 and again.loc[0, "premise"] == "A dog runs."


def test_parsed_frames_are_kept_across_processes_in_the_file_cache(tmp_path, monkeypatch):
    """A clean file set is parsed once per content, also by a new process (here: an empty in-process memo); its
    frame and attrs come back exactly. Changed content is parsed again; malformed rows are never cached."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    parsed = []
    real = L._parse_esnli
    monkeypatch.setattr(L, "_parse_esnli", lambda *a: parsed.append(1) or real(*a))
    clean = {name: tmp_path / f"{name}.dev" for name in L.ESNLI_FILES}
    for name, text in zip(L.ESNLI_FILES, ("A dog runs.", "An animal moves.", "entailment", "e1", "e2", "e3")):
        clean[name].write_text(text + "\n")
    first = L.load_esnli("dev", paths=clean)
    monkeypatch.setattr(R, "_FRAMES", {})  # a new process
    again = L.load_esnli("dev", paths=clean)
    assert len(parsed) == 1 and list((tmp_path / "cache" / "parsed_data").glob("*.frames.json"))
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    assert again.attrs == first.attrs and again.attrs["source"] == [str(clean[n]) for n in L.ESNLI_FILES]
    clean["s1"].write_text("A cat runs.\n")
    monkeypatch.setattr(R, "_FRAMES", {})
    assert L.load_esnli("dev", paths=clean).loc[0, "premise"] == "A cat runs." and len(parsed) == 2
    for _ in range(2):  # malformed rows: parsed and warned about every time
        monkeypatch.setattr(R, "_FRAMES", {})
        load_dropping(L.load_esnli, "dev", paths=ESNLI_PATHS)
    assert len(parsed) == 4


def test_esnli_strict_and_misaligned(tmp_path):
    with pytest.raises(MalformedDataError, match=r"labels\.dev:4"):
        L.load_esnli("dev", paths=ESNLI_PATHS, strict=True)
    short = tmp_path / "s2.dev"
    short.write_text("only one line\n")
    with pytest.raises(DataError, match="not line-aligned") as err:
        L.load_esnli("dev", paths={**ESNLI_PATHS, "s2": short})
    assert f"{short}=1" in str(err.value) and "=5" in str(err.value)
    with pytest.raises(ValueError, match="split must be one of"):
        L.load_esnli("validation", paths=ESNLI_PATHS)
    with pytest.raises(ValueError, match="train_1"):  # train reads the train CSVs, not the dev/test files
        L.load_esnli("train", paths=ESNLI_PATHS)


def test_snli_jsonl_fixture():
    path = FIX / "snli" / "snli_1.0_dev.jsonl"
    df, message = load_dropping(L.load_snli_jsonl, "dev", path=path)
    assert_schema(df)
    assert df["label"].tolist() == ["entailment", "neutral", "contradiction"]
    assert df["pair_id"].tolist() == ["fixture.jpg#0r1e", "fixture.jpg#0r1n", "fixture.jpg#0r1c"]
    assert df.loc[2, "annotator_labels"] == ["contradiction"] * 4
    assert df.loc[0, "caption_id"] == "fixture.jpg#0"
    assert df.attrs == {"source": str(path), "dropped": 3, "no_gold": 1}
    for line, kind in ((5, "invalid JSON"), (6, "empty text"), (7, "unknown label")):
        assert f"{path}:{line} ({kind}" in message
    with pytest.raises(MalformedDataError, match="3 malformed"):
        L.load_snli_jsonl("dev", path=path, strict=True)


def test_chaosnli_fixture():
    path = FIX / "chaosnli" / "chaosNLI_snli.jsonl"
    df, message = load_dropping(L.load_chaosnli, "snli", path=path)
    assert_schema(df)
    assert df["label"].tolist() == ["neutral", "entailment", "contradiction"]
    # label_counter {"n": 60, "c": 30, "e": 10} -> our order e, n, c
    assert df.loc[0, "label_count"] == [10, 60, 30]
    assert df.loc[0, "label_dist"] == pytest.approx([0.1, 0.6, 0.3])
    assert df.loc[2, "label_dist"] == pytest.approx([0.3, 0.0, 0.7])
    assert df.loc[0, "old_label"] == "neutral" and df.loc[0, "old_labels"][-1] == "contradiction"
    assert df.loc[0, "pair_id"] == "fixture.jpg#0r1n" and df.loc[0, "origin"] == "snli_agree_3"
    assert df.attrs["dropped"] == 2
    assert f"{path}:4 (unknown label" in message and f"{path}:5 (missing field: 'hypothesis')" in message
    with pytest.raises(MalformedDataError):
        L.load_chaosnli("snli", path=path, strict=True)


def test_taxinli_fixture():
    path = FIX / "taxinli" / "taxinli10k.tsv"
    df, message = load_dropping(TL.load_taxinli, "taxinli10k", path=path)
    assert_schema(df)
    assert len(df) == 6 and df.attrs["dropped"] == 2
    assert f"{path}:6 (wrong column count" in message and f"{path}:7 (unknown label" in message
    assert list(df.columns) == [*TL.BASE_COLUMNS, "annotated_label", *TL.CATEGORIES, *TL.NEUTRAL_FEATURES]
    assert all(df[c].dtype == "int64" for c in TL.CATEGORIES)
    assert all(df[c].dtype == "Int64" for c in TL.NEUTRAL_FEATURES)
    neutral = df[df["pair_id"] == "1003n"].iloc[0]
    assert (neutral["general_q2"], neutral["subject_q2"], neutral["object_q2"]) == (1, 0, 1)
    assert df["general_q2"].isna().sum() == 5
    assert df["annotated_label"].tolist()[:4] == ["neutral", "entailment", "neutral", None]
    assert df.loc[1, "temporal_reasoning"] == 1 and df.loc[1, "world_knowledge"] == 1
    assert df.loc[1, "premise"] == "The dax café opens at nine and closes at five."
    with pytest.raises(MalformedDataError, match="taxinli10k.tsv:6"):
        TL.load_taxinli("taxinli10k", path=path, strict=True)


def test_taxinli_mnli_dev_fixture():
    path = FIX / "taxinli" / "taxinli10k_MNLIDev.tsv"
    df, message = load_dropping(TL.load_taxinli, "mnli_dev", path=path)
    assert_schema(df)
    assert df["taxinli_row"].tolist() == [1, 2]
    assert df[["pred_nb", "pred_bert", "pred_esim"]].values.tolist() == [
        ["neutral", "entailment", "entailment"], ["neutral", "neutral", "contradiction"]]
    assert "annotated_label" not in df and "general_q2" not in df
    assert f"{path}:4 (unknown label: 'positive')" in message


def test_taxinli_constants():
    """The loader reads the taxonomy's category columns (one definition: nli_lib.taxinli.taxonomy)."""
    from nli_lib.taxinli import taxonomy

    assert TL.CATEGORIES == list(taxonomy.COLUMNS) and len(TL.CATEGORIES) == 15 and len(TL.NEUTRAL_FEATURES) == 3
    assert Counter(c.group for c in taxonomy.CATEGORIES) == {"linguistic": 3, "connectives": 5, "deductions": 5,
                                                             "knowledge": 2}
    group_of_suffix = {"linguistic": "linguistic", "logic": "connectives", "reasoning": "deductions",
                       "knowledge": "knowledge"}
    for c in taxonomy.CATEGORIES:
        assert group_of_suffix[c.column.rsplit("_", 1)[1]] == c.group


def test_mnli_from_taxinli_fixture():
    paths = {"taxinli10k": FIX / "taxinli" / "taxinli10k.tsv", "mnli_dev": FIX / "taxinli" / "taxinli10k_MNLIDev.tsv"}
    df, message = load_dropping(TL.load_mnli_from_taxinli, paths=paths)
    assert_schema(df)
    assert list(df.columns) == ["premise", "hypothesis", "label", "pair_id", "genre", "in_mnli_dev"]
    # dev rows 1 and 2 once; row 6 (mojibake copy of row 1) dropped; row 7 shares row 0's pairID but is another pair
    assert df["pair_id"].tolist() == ["1002e", "1003n", "1001c", "1004c", "1001c"]
    assert df["in_mnli_dev"].tolist() == [True, True, False, False, False]
    assert df.attrs["duplicates"] == 3 and df.attrs["dropped"] == 3
    assert "3 malformed" in message


def test_dnli_fixture():
    path = FIX / "dnli" / "snli_test.jsonl"
    df, message = load_dropping(L.load_dnli, "snli", "test", path=path)
    assert_schema(df, labels=L.UPDATE_TYPES)
    assert list(df.columns) == [*L._DNLI_BASE, *L.DNLI_EXTRA["snli"]]
    assert (df["label"] == df["update_type"]).all()
    assert df["impossible"].tolist() == [False, False, True, True]
    assert df.loc[2, "update"] == ""
    assert df.loc[2, "impossible_reason"] == "The hypothesis is too obvious to the premise."
    assert df.loc[3, "impossible_reason"] == ""
    assert df.loc[0, "pair_id"] == "dnli-snli-test-000000" and df.loc[0, "snli_pair_id"] == "fixture.jpg#0r1n"
    assert df.attrs == {"source": str(path), "dropped": 3, "impossible": 2}
    for line in (5, 6, 7):
        assert f"{path}:{line} (" in message
    kept, _ = load_dropping(L.load_dnli, "snli", "test", path=path, drop_impossible=True)
    assert len(kept) == 2 and not kept["impossible"].any() and kept.attrs["impossible"] == 2
    with pytest.raises(MalformedDataError, match="booster"):
        L.load_dnli("snli", "test", path=path, strict=True)


def test_dnli_atomic_fixture():
    path = FIX / "dnli" / "atomic_dev.jsonl"
    df, message = load_dropping(L.load_dnli, "atomic", "dev", path=path)
    assert list(df.columns) == [*L._DNLI_BASE, *L.DNLI_EXTRA["atomic"]]
    assert df["atomic_relation"].tolist() == ["xIntent", "xIntent"]
    assert f"{path}:3 (invalid JSON" in message


def test_dsnli_train_subset_fixture():
    path = FIX / "dsnli" / "aflite_train_examples.json"
    df, message = load_dropping(L.load_dsnli_train_subset, path=path)
    assert_schema(df, labels=L.UPDATE_TYPES)
    assert list(df.columns) == list(L.DSNLI_TRAIN_COLUMNS)
    assert df["pair_id"].tolist() == ["snli.train.900", "snli.train.901"]
    assert df["label"].tolist() == ["strengthener", "weakener"] and not df["impossible"].any()
    assert df.loc[0, "snli_pair_id"] == "fixture.jpg#3r1n"
    assert f"{path}[2] (unknown label" in message and f"{path}[3] (missing field" in message
    with pytest.raises(MalformedDataError):
        L.load_dsnli_train_subset(path=path, strict=True)


PHRASIS_PATHS = {"train.images.positives": FIX / "phrasis" / "PhrasIS.train.images.positives.txt",
                 "test.headlines.negatives": FIX / "phrasis" / "PhrasIS.test.headlines.negatives.txt"}


def test_phrasis_fixture():
    df, message = load_dropping(PL.load_phrasis, paths=PHRASIS_PATHS)
    assert_schema(df, labels=PL.PHRASIS_LABELS)
    assert (df["premise"] == df["phrase1"]).all() and (df["hypothesis"] == df["phrase2"]).all()
    assert df["label"].tolist() == ["BACK", "EQUI", "FORW", "SIMI", "UNR", "UNR"]  # 'FORW   ' stripped
    assert df.loc[0, "phrase2"] == "A small blue wug"
    assert df["score"].tolist()[:3] == [4.0, 5.0, 3.0] and pd.isna(df.loc[3, "score"])  # NIL -> NaN
    assert df.loc[0, "tokens2"] == [1, 2, 3, 4]
    assert df["pair_id"].tolist() == [
        "train.images.positives.1.1", "train.images.positives.1.2", "train.images.positives.2.1",
        "train.images.positives.3.1", "test.headlines.negatives.1.1", "test.headlines.negatives.1.2"]
    assert df["pair_id"].is_unique
    assert df.loc[4, ["split", "source", "polarity"]].tolist() == ["test", "headlines", "negatives"]
    assert df.attrs["dropped"] == 3
    positives = PHRASIS_PATHS["train.images.positives"]
    assert f"{positives}:5 (unknown label" in message and f"{positives}:6 (wrong column count" in message
    assert f"{PHRASIS_PATHS['test.headlines.negatives']}:3 (empty text" in message


def test_phrasis_filters_and_strict():
    test_only, _ = load_dropping(PL.load_phrasis, split="test", paths=PHRASIS_PATHS)
    assert set(test_only["split"]) == {"test"} and len(test_only) == 2
    assert test_only.attrs["source"] == [str(PHRASIS_PATHS["test.headlines.negatives"])]
    with pytest.raises(MalformedDataError):
        PL.load_phrasis(polarity="positives", paths=PHRASIS_PATHS, strict=True)
    with pytest.raises(ValueError, match="source must be one of"):
        PL.load_phrasis(source="news")


def test_cad_fixture():
    path = FIX / "cad" / "original_dev.tsv"
    df, message = load_dropping(FL.load_cad, "original", "dev", path=path)
    assert_schema(df)
    assert df.loc[1, "hypothesis"] == 'The daxes play a game called "blicket".'  # CSV quoting undone
    assert df["orig_index"].tolist() == [0, 1, 2] and set(df["kind"]) == {"original"}
    assert df.loc[0, "pair_id"] == "cad-original-dev-000000"
    assert f"{path}:5 (unknown label: 'unsure')" in message


def test_cad_revised_keeps_alignment_after_drops():
    path = FIX / "cad" / "revised_hypothesis_dev.tsv"
    df, message = load_dropping(FL.load_cad, "revised_hypothesis", "dev", path=path)
    assert df["orig_index"].tolist() == [0, 0, 1, 2, 2]  # the malformed 4th row still counts as a revision of pair 1
    assert f"{path}:5 (wrong column count" in message
    with pytest.raises(MalformedDataError):
        FL.load_cad("revised_hypothesis", "dev", path=path, strict=True)


def _first_line(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def _write_lines(path, lines) -> None:
    path.write_bytes(b"\n".join(line if isinstance(line, bytes) else json.dumps(line).encode() for line in lines) + b"\n")


def test_snli_unparsable_values_and_invalid_utf8_are_malformed_rows(tmp_path):
    good = _first_line(FIX / "snli" / "snli_1.0_dev.jsonl")
    bad_bytes = json.dumps(good).encode().replace(b"A wug sits.", b"A wug sits \xff\xfe.")
    path = tmp_path / "snli.jsonl"
    _write_lines(path, [good, {**good, "annotator_labels": None}, {**good, "annotator_labels": "entailment"},
                        bad_bytes, {**good, "annotator_labels": ["entailment", "maybe"]}])
    df, message = load_dropping(L.load_snli_jsonl, "dev", path=path)
    assert len(df) == 1 and df.attrs["dropped"] == 4
    assert f"{path}:2 (bad value: annotator_labels=None is not a non-empty list of labels)" in message
    assert f"{path}:3 (bad value: annotator_labels='entailment'" in message
    assert f"{path}:4 (invalid UTF-8: byte 0xff at column" in message
    assert f"{path}:5 (unknown label: 'maybe')" in message
    with pytest.raises(MalformedDataError, match=r"snli\.jsonl:2 \(bad value"):
        L.load_snli_jsonl("dev", path=path, strict=True)


def test_chaosnli_bad_fields_are_malformed_rows(tmp_path):
    good = _first_line(FIX / "chaosnli" / "chaosNLI_snli.jsonl")
    rows = [good, {**good, "label_counter": {"e": "many", "n": 5}}, {**good, "entropy": None},
            {**good, "entropy": "high"}, {**good, "old_labels": None}, {**good, "example": "a wug"},
            {**good, "label_counter": {"e": -3, "n": 5}},
            json.dumps(good).encode().replace(b"fixture bench", b"fixture b\xe9nch")]
    path = tmp_path / "chaos.jsonl"
    _write_lines(path, rows)
    df, message = load_dropping(L.load_chaosnli, "snli", path=path)
    assert len(df) == 1 and df.attrs["dropped"] == 7
    for line, text in [(2, "label_counter['e']='many' is not an integer"), (3, "entropy=None is not a finite"),
                       (4, "entropy='high'"), (5, "old_labels=None"), (6, "example='a wug' is not an object")]:
        assert f"{path}:{line} (bad value: {text}" in message, (line, message)
    with pytest.raises(MalformedDataError) as err:
        L.load_chaosnli("snli", path=path, strict=True)
    assert "7 malformed" in str(err.value) and "1 invalid UTF-8" in str(err.value)


def test_invalid_utf8_in_tsv_line_files_and_json_arrays(tmp_path):
    cad = tmp_path / "cad.tsv"
    cad.write_bytes((FIX / "cad" / "original_dev.tsv").read_bytes().replace(b"daxes", b"d\xe4xes", 1))
    df, message = load_dropping(FL.load_cad, "original", "dev", path=cad)
    line = next(i for i, raw in enumerate(cad.read_bytes().split(b"\n"), 1) if b"\xe4" in raw)
    assert f"{cad}:{line} (invalid UTF-8: byte 0xe4" in message and "d\udce4xes" not in "".join(df["hypothesis"])
    s1 = tmp_path / "s1.dev"
    s1.write_bytes(ESNLI_PATHS["s1"].read_bytes().replace(b"wug", b"w\xfcg", 1))
    df, message = load_dropping(L.load_esnli, "dev", paths={**ESNLI_PATHS, "s1": s1})
    assert f"{s1}:1 (invalid UTF-8: premise: byte 0xfc" in message and df.attrs["dropped"] == 3
    arr = tmp_path / "dsnli.json"
    arr.write_bytes((FIX / "dsnli" / "aflite_train_examples.json").read_bytes().replace(b"{", b"{\n", 3)
                    .replace(b"\"", b"\"\xff", 1))
    with pytest.raises(DataError, match=rf"{arr.name}:2: byte 0xff is not valid UTF-8"):
        L.load_dsnli_train_subset(path=arr)


def test_numeric_labels_only_where_documented():
    assert R.nli_label("E") == "entailment" and R.nli_label(" contradiction ") == "contradiction"
    assert R.nli_label(2, numeric=LABELS) == "contradiction"
    with pytest.raises(R.BadRow):
        R.nli_label(2)
    with pytest.raises(R.BadRow):
        R.nli_label("-")


def test_stopwords_from_zip(tmp_path):
    path = tmp_path / "stopwords.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("stopwords/", "")
        zf.writestr("stopwords/english", "the\na\nwug\n")
        zf.writestr("stopwords/README", "fixture")
    assert N.load_stopwords(path=path) == {"the", "a", "wug"}
    with pytest.raises(ValueError, match="available: \\['english'\\]"):
        N.load_stopwords("klingon", path=path)


def _tagger_zip(path: Path, model) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("averaged_perceptron_tagger/averaged_perceptron_tagger.pickle", pickle.dumps(model, protocol=2))
    return path


def test_pos_tagger_from_zip(tmp_path):
    path = _tagger_zip(tmp_path / "tagger.zip", ({}, {"the": "DT", "wug": "NN"}, {"DT", "NN"}))
    tagger = N.load_pos_tagger(path=path)
    assert tagger.tag(["the", "wug"]) == [("the", "DT"), ("wug", "NN")]
    assert N.load_pos_tagger(path=path) is tagger  # cached in-process
    evil = _tagger_zip(tmp_path / "evil.zip", (OrderedDict(), {}, set()))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        N.load_pos_tagger(path=evil).tag(["the"])  # the model is read at the first sentence not in the cache


WORDNET_PATHS = sorted((FIX / "oewn").glob("*.yaml"))


@pytest.fixture()
def fixture_wordnet(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(W, "_WORDNETS", {})
    return W.load_wordnet(paths=WORDNET_PATHS)


def test_wordnet_fixture(fixture_wordnet):
    wn = fixture_wordnet
    assert len(wn) == 9
    assert wn.synsets("wug") == ["90000003-n", "90000006-v"]
    assert wn.synsets("WUG", pos="v") == ["90000006-v"]
    assert wn.synsets("fixture_entity") == ["90000001-n"]
    assert wn.synsets("glorpish", pos="a") == ["90000009-s"]  # satellites count as adjectives
    assert wn.definition("90000003-n") == "a small invented animal that says wug"
    assert wn.examples("90000003-n") == ["the wug hopped away", "a wug is never late"]
    assert wn.lemmas("90000002-n") == ["creature", "beastie"]
    assert wn.hypernyms("90000003-n") == ["90000002-n"]
    assert wn.hypernyms("90000005-n") == ["90000003-n"]  # instance hypernym
    assert wn.hypernym_closure("90000003-n") == {"90000002-n", "90000001-n"}
    assert wn.hypernym_closure("90000003-n", depth=1) == {"90000002-n"}
    assert wn.synonyms("wug") == {"wuggle"} and wn.synonyms("creature") == {"beastie"}
    assert wn.antonyms("glorpy") == {"unglorpy"}
    assert wn.is_hypernym("creature", "wug") and wn.is_hypernym("fixture entity", "Wugbert")
    assert not wn.is_hypernym("wug", "creature") and not wn.is_hypernym("dax", "wug")
    assert wn.synset("90000004-n").lemmas == ("dax",)
    with pytest.raises(KeyError, match="unknown synset"):
        wn.definition("00000000-n")


def test_wordnet_cache_is_reused(fixture_wordnet, tmp_path, monkeypatch):
    (cached,) = (tmp_path / "wordnet").glob("oewn-*.json")
    monkeypatch.setattr(W, "_WORDNETS", {})
    monkeypatch.setattr(W, "_parse_wordnet", lambda files: pytest.fail("YAML parsed again despite the cache"))
    again = W.load_wordnet(paths=WORDNET_PATHS)
    assert again.synsets("wug") == fixture_wordnet.synsets("wug")
    assert W.load_wordnet(paths=WORDNET_PATHS) is again
    assert cached.is_file()


def test_wordnet_yaml_is_parsed_with_the_garbage_collector_paused(tmp_path, monkeypatch):
    """The collector rescanning PyYAML's millions of new objects made parsing OEWN ~4x slower."""
    import gc

    import yaml

    seen = []
    real_load = yaml.load
    monkeypatch.setattr(yaml, "load", lambda *a, **k: (seen.append(gc.isenabled()), real_load(*a, **k))[1])
    assert gc.isenabled()
    parsed = W._parse_wordnet([p for p in WORDNET_PATHS if W._wordnet_file(p)])
    assert seen and not any(seen) and gc.isenabled()  # paused for every file, running again afterwards
    assert "90000003-n" in parsed["synsets"]


# ---------------------------------------------------------------------------------------------------------------
# fetch(): mirror, checksum, download, error messages
# ---------------------------------------------------------------------------------------------------------------

COMMIT = "0123456789abcdef0123456789abcdef01234567"
CONTENT = b"premise\thypothesis\tlabel\nA wug.\tA wug.\tentailment\n"


def write_manifest(path: Path, rows: list[dict]) -> dict:
    fields = ["key", "dataset", "split", "url", "sha256", "bytes", "licence", "offline"]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({"dataset": row["key"].split("/")[0], "split": "dev", "bytes": "", "licence": "test",
                             "offline": "yes", **row})
    return fetch_mod.load_manifest(path)


@pytest.fixture()
def sandbox(tmp_path, monkeypatch):
    """A temp manifest (GitHub-style and online-only entries), mirror dir and cache dir."""
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    monkeypatch.setenv("NLI_CACHE_DIR", str(cache))
    monkeypatch.delenv("NLI_DATA_MIRROR", raising=False)
    monkeypatch.delenv("NLI_RUN_RECORD", raising=False)
    monkeypatch.setattr(provenance, "DATA", {})  # keep toy keys out of the process-wide record
    digest = hashlib.sha256(CONTENT).hexdigest()
    source = tmp_path / "upstream" / "toy.tsv"
    source.parent.mkdir()
    source.write_bytes(CONTENT)
    manifest = write_manifest(tmp_path / "manifest.csv", [
        {"key": "toy/dev", "url": f"https://raw.githubusercontent.com/wugs/toys/{COMMIT}/data/toy.tsv",
         "sha256": digest},
        {"key": "toy/online", "url": "https://example.org/toy_full.zip", "sha256": "", "offline": "no"},
        {"key": "toy/file", "url": source.as_uri(), "sha256": digest},
        {"key": "toy/pinned", "url": source.as_uri(), "sha256": ""},
    ])
    return manifest, mirror, cache, monkeypatch


def test_fetch_from_mirror(sandbox):
    manifest, mirror, _, mp = sandbox
    target = mirror / "github" / "wugs" / "toys" / "data" / "toy.tsv"
    target.parent.mkdir(parents=True)
    target.write_bytes(CONTENT)
    mp.setenv("NLI_DATA_MIRROR", str(mirror))
    assert fetch_mod.fetch("toy/dev", manifest) == target.resolve()
    assert fetch_mod.used_data()["toy/dev"] == hashlib.sha256(CONTENT).hexdigest()


def test_fetch_checksum_mismatch_names_file_url_and_fix(sandbox):
    manifest, mirror, _, mp = sandbox
    target = mirror / "github" / "wugs" / "toys" / "data" / "toy.tsv"
    target.parent.mkdir(parents=True)
    target.write_bytes(CONTENT.replace(b"wug", b"dax"))
    mp.setenv("NLI_DATA_MIRROR", str(mirror))
    with pytest.raises(DataError) as err:
        fetch_mod.fetch("toy/dev", manifest)
    message = str(err.value)
    assert "checksum mismatch for toy/dev" in message and str(target.resolve()) in message
    assert manifest["toy/dev"].url in message and "shared data mirror" in message  # not the user's to delete
    assert "Delete it and fetch again" not in message


def test_fetch_missing_mirror_file(sandbox):
    manifest, mirror, _, mp = sandbox
    mirror.mkdir()
    mp.setenv("NLI_DATA_MIRROR", str(mirror))
    with pytest.raises(DataError, match="mirror file .*toy.tsv is missing") as err:
        fetch_mod.fetch("toy/dev", manifest)
    assert "unset NLI_DATA_MIRROR" in str(err.value) and manifest["toy/dev"].url in str(err.value)


def test_fetch_online_only_with_mirror(sandbox):
    manifest, mirror, _, mp = sandbox
    mirror.mkdir()
    mp.setenv("NLI_DATA_MIRROR", str(mirror))
    with pytest.raises(DataError, match="online-only") as err:
        fetch_mod.fetch("toy/online", manifest)
    assert "https://example.org/toy_full.zip" in str(err.value) and "network access" in str(err.value)


def test_fetch_without_network(sandbox):
    manifest, _, cache, mp = sandbox

    def offline(*args, **kwargs):
        raise urllib.error.URLError("Temporary failure in name resolution")

    mp.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(DataError, match="No network\\? Set NLI_DATA_MIRROR") as err:
        fetch_mod.fetch("toy/online", manifest)
    assert "https://example.org/toy_full.zip" in str(err.value)
    assert not [p for p in cache.rglob("*") if p.is_file()]  # no partial download left behind


def test_fetch_unknown_key(sandbox):
    manifest, *_ = sandbox
    with pytest.raises(DataError, match="not in the data manifest.*toy"):
        fetch_mod.fetch("toy/nope", manifest)


def test_fetch_downloads_file_url_atomically(sandbox):
    manifest, _, cache, _ = sandbox
    path = fetch_mod.fetch("toy/file", manifest)
    assert path == cache / "data" / "toy" / "toy.tsv" and path.read_bytes() == CONTENT
    assert sorted(p.name for p in path.parent.iterdir()) == ["toy.tsv"]  # no temporary file left
    assert fetch_mod.fetch("toy/file", manifest) == path  # second call: verified cache, no download


class _BrokenResponse(io.BytesIO):
    """A response that delivers one block and then fails, like a dropped connection."""

    headers = {"Content-Length": str(1 << 20)}

    def read(self, size=-1):
        if self.tell():
            raise TimeoutError("connection dropped")
        return super().read(16)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_fetch_interrupted_download_leaves_nothing(sandbox):
    manifest, _, cache, mp = sandbox
    mp.setattr(urllib.request, "urlopen", lambda url, timeout=None: _BrokenResponse(CONTENT))
    with pytest.raises(DataError, match="could not download toy/file"):
        fetch_mod.fetch("toy/file", manifest)
    assert not [p for p in cache.rglob("*") if p.is_file()]


def test_fetch_online_only_pins_checksum_on_first_use(sandbox):
    manifest, _, cache, _ = sandbox
    path = fetch_mod.fetch("toy/pinned", manifest)
    pin = path.with_name(path.name + ".sha256")
    assert pin.read_text() == hashlib.sha256(CONTENT).hexdigest()
    path.write_bytes(CONTENT + b"tampered\n")
    with pytest.raises(DataError, match="changed since first download"):
        fetch_mod.fetch("toy/pinned", manifest)


# ---------------------------------------------------------------------------------------------------------------
# Real mirror files
# ---------------------------------------------------------------------------------------------------------------

def load_clean(loader, *args, **kwargs) -> pd.DataFrame:
    """Load real data, asserting no row was dropped as malformed."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", MalformedRowWarning)
        df = loader(*args, **kwargs)
    assert df.attrs["dropped"] == 0
    return df


@pytest.mark.mirror
@pytest.mark.parametrize("split, rows", [("dev", 9842), ("test", 9824)])
def test_real_esnli(split, rows):
    df = load_clean(L.load_esnli, split)
    assert len(df) == rows and set(df["label"]) == set(LABELS)
    assert_schema(df)
    assert df["pair_id"].is_unique and (df[["explanation_1", "explanation_2", "explanation_3"]] != "").all().all()
    assert df.attrs["source"][0] == f"esnli/s1.{split}"


@pytest.mark.mirror
@pytest.mark.parametrize("split, rows, no_gold", [("dev", 1273, 16), ("test", 1254, 23)])
def test_real_snli_subset(split, rows, no_gold):
    df = load_clean(L.load_snli_jsonl, split)
    assert (len(df), df.attrs["no_gold"]) == (rows, no_gold)
    assert_schema(df)
    assert set(df["label"]) == set(LABELS) and df["pair_id"].is_unique
    assert df["annotator_labels"].map(len).isin([4, 5]).all()


@pytest.mark.mirror
@pytest.mark.parametrize("subset, rows", [("snli", 1514), ("mnli_m", 1599)])
def test_real_chaosnli(subset, rows):
    df = load_clean(L.load_chaosnli, subset)
    assert len(df) == rows and df["pair_id"].is_unique
    assert_schema(df)
    assert (df["label_count"].map(sum) == 100).all()
    assert df["label_dist"].map(sum).sub(1).abs().max() < 1e-9
    unique_max = df["label_count"].map(lambda c: sorted(c)[-1] > sorted(c)[-2])
    argmax = df["label_count"].map(lambda c: LABELS[c.index(max(c))])
    assert (df.loc[unique_max, "label"] == argmax[unique_max]).all()
    assert (~unique_max).sum() == 14  # ties broken by the source


@pytest.mark.mirror
def test_real_taxinli():
    full = load_clean(TL.load_taxinli, "taxinli10k")
    assert len(full) == 10071 and Counter(full["label"]) == {"entailment": 3495, "contradiction": 3375, "neutral": 3201}
    assert_schema(full)
    assert full[TL.CATEGORIES].isin([0, 1, 2]).all().all()
    assert full.loc[full["label"] == "neutral", TAXINLI_Q2].notna().all().all()  # asked for every gold neutral
    assert full["general_q2"].notna().sum() == 5601 and full["annotated_label"].isna().sum() == 39
    dev = load_clean(TL.load_taxinli, "mnli_dev")
    assert len(dev) == 7727
    assert_schema(dev)
    for col in ("pred_nb", "pred_bert", "pred_esim"):
        assert set(dev[col]) == set(LABELS)
    linked = full.loc[dev["taxinli_row"], ["pair_id", "premise", "label", *TL.CATEGORIES]].reset_index(drop=True)
    assert linked.equals(dev[["pair_id", "premise", "label", *TL.CATEGORIES]])


@pytest.mark.mirror
@pytest.mark.parametrize("loader, args", [
    (TL.load_taxinli, ("taxinli10k",)), (TL.load_taxinli, ("mnli_dev",)), (TL.load_mnli_from_taxinli, ()),
    (L.load_esnli, ("test",)), (PL.load_phrasis, ()), (L.load_dnli, ("snli", "test")),
    (L.load_chaosnli, ("mnli_m",)), (L.load_dsnli_train_subset, ())])
def test_real_frames_read_back_exactly_from_the_file_cache(loader, args, tmp_path, monkeypatch):
    """The mirror's frames (nullable Int64 features, lists in cells, attrs) are stored (no 'does not read back'
    warning) and a new process reads them back without parsing, equal in values, dtypes and attrs."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(R, "_FRAMES", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = loader(*args)
    monkeypatch.setattr(R, "_FRAMES", {})
    monkeypatch.setattr(importlib.import_module(loader.__module__), "collect", lambda *a: pytest.fail("parsed again"))
    again = loader(*args)
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    assert again.attrs == first.attrs


@pytest.mark.mirror
def test_real_mnli_from_taxinli():
    df = load_clean(TL.load_mnli_from_taxinli)
    assert len(df) == 10070 and df["in_mnli_dev"].sum() == 7727
    assert (~df["in_mnli_dev"]).sum() == 2343  # the README's MNLI-train overlap
    assert not df.duplicated(["pair_id", "premise", "hypothesis"]).any()


@pytest.mark.mirror
@pytest.mark.parametrize("subset, split, rows, impossible", [
    ("snli", "dev", 1888, 103), ("snli", "test", 1972, 135),
    ("atomic", "dev", 4310, 470), ("atomic", "test", 4654, 516)])
def test_real_dnli(subset, split, rows, impossible):
    df = load_clean(L.load_dnli, subset, split)
    assert (len(df), df.attrs["impossible"], int(df["impossible"].sum())) == (rows, impossible, impossible)
    assert_schema(df, labels=L.UPDATE_TYPES)
    assert (df.loc[~df["impossible"], "update"] != "").all() and df["pair_id"].is_unique
    kept = load_clean(L.load_dnli, subset, split, drop_impossible=True)
    assert len(kept) == rows - impossible and kept.attrs["impossible"] == impossible


@pytest.mark.mirror
def test_real_dsnli_test_matches_atoms_paper():
    assert len(load_clean(L.load_dnli, "snli", "test", drop_impossible=True)) == 1837  # atoms paper, Table 1


@pytest.mark.mirror
def test_real_dsnli_train_subset():
    df = load_clean(L.load_dsnli_train_subset)
    assert len(df) == 8872 and df["pair_id"].is_unique
    assert Counter(df["label"]) == {"strengthener": 4475, "weakener": 4397}
    assert_schema(df, labels=L.UPDATE_TYPES)


@pytest.mark.mirror
def test_real_phrasis():
    df = load_clean(PL.load_phrasis)
    sizes = df.groupby(["split", "source", "polarity"]).size().to_dict()
    assert sizes == {
        ("test", "headlines", "negatives"): 1186, ("test", "headlines", "positives"): 519,
        ("test", "images", "negatives"): 1347, ("test", "images", "positives"): 671,
        ("train", "headlines", "negatives"): 2164, ("train", "headlines", "positives"): 1049,
        ("train", "images", "negatives"): 2196, ("train", "images", "positives"): 1082,
    }
    # the dataset README: 6491 train / 3723 test pairs; positives 2131 / 1190, negatives 4360 / 2533
    assert df.groupby("split").size().to_dict() == {"train": 6491, "test": 3723}
    assert df.groupby(["split", "polarity"]).size().to_dict() == {
        ("test", "negatives"): 2533, ("test", "positives"): 1190,
        ("train", "negatives"): 4360, ("train", "positives"): 2131}
    assert_schema(df, labels=PL.PHRASIS_LABELS)
    assert df["pair_id"].is_unique and set(df["label"]) == set(PL.PHRASIS_LABELS)
    negatives = df[df["polarity"] == "negatives"]
    assert (negatives["label"] == "UNR").all() and (negatives["score"] == 0).all()
    assert df["score"].between(0, 5).all()
    assert len(load_clean(PL.load_phrasis, split="test", source="images", polarity="positives")) == 671


@pytest.mark.mirror
@pytest.mark.parametrize("split, originals", [("train", 1666), ("dev", 200), ("test", 400)])
def test_real_cad(split, originals):
    original = load_clean(FL.load_cad, "original", split)
    assert len(original) == originals
    for kind, fixed in (("revised_hypothesis", "premise"), ("revised_premise", "hypothesis")):
        revised = load_clean(FL.load_cad, kind, split)
        assert len(revised) == 2 * originals
        assert_schema(revised)
        source = original.loc[revised["orig_index"], fixed].str.split().str.join(" ").reset_index(drop=True)
        agree = (source == revised[fixed].str.split().str.join(" ")).mean()
        assert agree > 0.99  # one revised_premise row in train carries another hypothesis in the source
        assert (original.loc[revised["orig_index"], "label"].values != revised["label"].values).all()


@pytest.mark.mirror
def test_real_stopwords():
    words = N.load_stopwords()
    assert len(words) == 179 and {"the", "not", "no"} <= words


@pytest.mark.mirror
def test_real_pos_tagger():
    tags = [tag for _, tag in N.load_pos_tagger().tag("A man is playing a guitar .".split())]
    assert tags == ["DT", "NN", "VBZ", "VBG", "DT", "NN", "."]


@pytest.mark.mirror
@pytest.mark.slow  # parses the real Open English WordNet on a cold cache
def test_real_wordnet(monkeypatch):
    wn = W.load_wordnet()
    assert len(wn) == 107525
    dog = wn.synsets("dog", pos="n")[0]
    assert "domestic dog" in wn.lemmas(dog) and "Canis" in wn.definition(dog)
    assert wn.is_hypernym("animal", "dog") and not wn.is_hypernym("dog", "animal")
    assert {"automobile", "auto"} <= wn.synonyms("car")
    assert "cold" in wn.antonyms("hot")
    assert wn.examples(wn.synsets("run", pos="v")[0])
    monkeypatch.setattr(W, "_WORDNETS", {})
    start = time.perf_counter()
    again = W.load_wordnet()  # from the on-disk cache
    assert time.perf_counter() - start < 5 and again.synsets("dog") == wn.synsets("dog")


# ---------------------------------------------------------------------------------------------------------------
# Online-only full datasets: the same parsers over archives laid out like the official ones (built here)
# ---------------------------------------------------------------------------------------------------------------

def _snli_line(gold, s1="A man sleeps.", s2="A person rests.", pair="p1", **extra) -> str:
    import json

    return json.dumps({"gold_label": gold, "sentence1": s1, "sentence2": s2, "pairID": pair,
                       "annotator_labels": [gold if gold != "-" else "neutral"], **extra})


def _zip(path: Path, members: dict[str, list[str]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, lines in members.items():
            zf.writestr(name, "\n".join(lines) + "\n")
        zf.writestr("__MACOSX/snli_1.0/._snli_1.0_dev.jsonl", "junk")
    return path


def test_snli_full_from_the_official_archive_layout(tmp_path):
    archive = _zip(tmp_path / "snli_1.0.zip", {"snli_1.0/snli_1.0_dev.jsonl": [
        _snli_line("entailment", captionID="c1"), _snli_line("-", pair="p2"), "{broken", _snli_line("contradiction", pair="p4")]})
    df, message = load_dropping(L.load_snli_full, "dev", path=archive)
    assert_schema(df)
    assert df["pair_id"].tolist() == ["p1", "p4"] and df.attrs["no_gold"] == 1 and df.attrs["dropped"] == 1
    assert "snli_1.0_dev.jsonl:3" in message  # file inside the archive and line
    with pytest.raises(DataError, match="expected one member ending in 'snli_1.0_train.jsonl'"):
        L.load_snli_full("train", path=archive)


def test_mnli_dev_matched_from_the_official_archive_layout(tmp_path):
    lines = [_snli_line("neutral", pair=f"m{i}", genre="fiction", promptID=f"q{i}") for i in range(3)]
    archive = _zip(tmp_path / "multinli_1.0.zip", {"multinli_1.0/multinli_1.0_dev_matched.jsonl":
                                                   lines + [_snli_line("-", pair="m9", genre="slate")]})
    df = L.load_mnli("dev_matched", path=archive)
    assert_schema(df)
    assert list(df.columns) == list(L.MNLI_COLUMNS) and df["genre"].unique().tolist() == ["fiction"]
    assert len(df) == 3 and df.attrs["no_gold"] == 1
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(DataError, match="not a readable zip"):
        L.load_mnli("dev_matched", path=tmp_path / "bad.zip")


def test_esnli_train_csvs(tmp_path):
    header = "pairID,gold_label,Sentence1,Sentence2,Explanation_1,Sentence1_marked_1,Sentence2_marked_1\n"
    (tmp_path / "t1.csv").write_text(header + '3416050480.jpg#4r1n,neutral,"A person, on a horse.",A person is '
                                     'training.,"the person is not necessarily training, ""maybe""",x,y\n'
                                     "id2,entailment,,A horse.,empty premise,x,y\n")
    (tmp_path / "t2.csv").write_text(header + "id3,contradiction,A dog.,A cat.,a dog is not a cat,x,y\n")
    df, message = load_dropping(L.load_esnli, "train", paths={"train_1": tmp_path / "t1.csv", "train_2": tmp_path / "t2.csv"})
    assert_schema(df)
    assert df["pair_id"].tolist() == ["3416050480.jpg#4r1n", "id3"]
    assert df.loc[0, "explanation_1"] == 'the person is not necessarily training, "maybe"'
    assert df.loc[0, "explanation_2"] == "" and "t1.csv:3" in message and "empty text" in message


def test_dnli_train_uses_the_online_only_key(tmp_path, monkeypatch):
    keys = []
    monkeypatch.setattr(R, "fetch", lambda key: keys.append(key) or FIX / "dnli" / "snli_test.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedRowWarning)  # the fixture holds malformed rows on purpose
        df = L.load_dnli("snli", "train")
    assert keys == ["dnli_full/snli.train"] and len(df) > 0


def test_available_checks_mirror_and_cache_without_network(sandbox):
    manifest, mirror, cache, mp = sandbox
    mp.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("available() must not download"))
    assert not fetch_mod.available("toy/online", manifest) and not fetch_mod.available("toy/dev", manifest)
    (cache / "data" / "toy").mkdir(parents=True)
    (cache / "data" / "toy" / "toy_full.zip").write_bytes(b"x")
    assert fetch_mod.available("toy/online", manifest)
    target = mirror / "github" / "wugs" / "toys" / "data" / "toy.tsv"
    target.parent.mkdir(parents=True)
    target.write_bytes(CONTENT)
    mp.setenv("NLI_DATA_MIRROR", str(mirror))
    assert fetch_mod.available("toy/dev", manifest)


def test_factnli_sizes_use_mnli_when_at_hand(tmp_path, monkeypatch):
    from nli_lib.data import stats

    archive = _zip(tmp_path / "multinli_1.0.zip", {
        "multinli_1.0/multinli_1.0_dev_matched.jsonl": [_snli_line("neutral", genre="g", pair=f"a{i}") for i in range(4)],
        "multinli_1.0/multinli_1.0_dev_mismatched.jsonl": [_snli_line("neutral", genre="g")] + [_snli_line("-", genre="g")]})
    monkeypatch.setattr(L, "load_esnli", lambda split: pd.DataFrame({"premise": ["p"] * 7}))
    monkeypatch.setattr(stats, "available", lambda key: False)
    missing = stats.factnli_sizes().set_index("quantity")
    assert missing["ours"].isna().sum() == 2 and "download=True" in missing.loc["MNLI validation_matched size", "model"]
    monkeypatch.setattr(stats, "available", lambda key: True)
    monkeypatch.setattr(R, "fetch", lambda key: archive if key == "mnli_full/multinli_1.0.zip" else pytest.fail(key))
    sizes = stats.factnli_sizes().set_index("quantity")
    assert sizes["ours"].tolist() == [7, 4, 1] and sizes.loc["MNLI validation_matched size", "paper"] == 9815


def test_pos_tagger_answers_from_the_call_cache_without_loading_its_model(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    path = _tagger_zip(tmp_path / "tagger.zip", ({}, {"the": "DT", "wug": "NN"}, {"DT", "NN"}))
    tagger = N.load_pos_tagger(path=path)
    assert tagger.tag(["the", "wug"]) == [("the", "DT"), ("wug", "NN")] and tagger.model_loaded
    assert tagger.flush() == 1 and tagger.flush() == 0  # stored once
    fresh = N.PosTagger(path, tagger.sha256)  # as in the next run's process
    assert fresh.tag(["the", "wug"]) == [("the", "DT"), ("wug", "NN")] and not fresh.model_loaded
    assert fresh.tag(["wug"]) == [("wug", "NN")] and fresh.model_loaded  # a sentence no run tagged
    other = N.PosTagger(path, "sha256-of-another-model")  # the key holds the model file's hash
    other.tag(["the", "wug"])
    assert other.model_loaded


def test_a_damaged_cached_tagging_is_reported_and_recomputed(tmp_path, monkeypatch):
    from nli_lib.cache import default_cache

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    path = _tagger_zip(tmp_path / "tagger.zip", ({}, {"the": "DT", "wug": "NN"}, {"DT", "NN"}))
    tagger = N.PosTagger(path, "sha-x")
    default_cache().put(N.TAG_NAMESPACE, tagger._key(["the", "wug"]), ["DT"])  # one tag for two words
    with pytest.warns(RuntimeWarning, match="not 2 tags"):
        assert tagger.tag(["the", "wug"]) == [("the", "DT"), ("wug", "NN")]
    assert tagger.model_loaded
