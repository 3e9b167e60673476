"""What a run used (data files, models) is recorded for the runner; long batches report their progress."""
from __future__ import annotations

import json

import pytest

from nli_lib import progress, provenance
from nli_lib.cache import CallCache


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """Empty provenance records and a run-record / progress file, as the runner sets them for a kernel."""
    monkeypatch.setattr(provenance, "DATA", {})
    monkeypatch.setattr(provenance, "MODELS", {})
    monkeypatch.setenv(provenance.RECORD_ENV, str(tmp_path / "record.json"))
    monkeypatch.setenv(progress.PROGRESS_FILE_ENV, str(tmp_path / "progress.json"))
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_record_file_is_kept_current(fresh):
    provenance.note_data("esnli/s1.dev", "ab")
    provenance.note_model("/m/minilm", "hf")
    assert provenance.read_record(fresh / "record.json") == {"data": {"esnli/s1.dev": "ab"},
                                                             "models": {"/m/minilm": "hf"}}
    with pytest.raises(ValueError, match="kind"):
        provenance.note_model("x", "pickle")


def test_llm_clients_note_their_endpoint_and_report_progress(fresh):
    from nli_lib.llm import OfflineLLM

    llm = OfflineLLM(lambda m: "e", name="always-e", cache=CallCache(":memory:"))
    llm.chat_many(["a", "b", "c"], progress=False)
    assert provenance.used_models() == {"offline://always-e": "llm"}
    status = progress.read_status(fresh / "progress.json")
    assert status["desc"] == "always-e" and (status["n"], status["total"], status["unit"]) == (3, 3, "llm call")


def test_hf_classifier_notes_its_weights_and_reports_progress(fresh):
    pytest.importorskip("transformers")
    from nli_lib.models.hf import HFClassifier

    from kit import tiny_bert

    path = tiny_bert(fresh / "tiny", {0: "entailment", 1: "neutral", 2: "contradiction"})
    clf = HFClassifier(path, batch_size=2, progress=False)
    assert provenance.used_models() == {}  # reading the config is not using the model
    clf.predict_proba(["a man", "a dog", "a cat"], ["a person", "an animal", "a pet"])
    assert provenance.used_models() == {str(path): "hf"}
    assert json.loads((fresh / "record.json").read_text())["models"] == {str(path): "hf"}
    status = progress.read_status(fresh / "progress.json")
    assert (status["desc"], status["n"], status["total"], status["unit"]) == (path.name, 2, 2, "batch")  # no path


def test_finetuning_notes_base_and_result_never_its_scratch_folder(fresh):
    pytest.importorskip("transformers")
    from nli_lib.models import training

    from kit import tiny_bert, tiny_train_frame

    base = tiny_bert(fresh / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(12)
    spec = training.TrainSpec(base=str(base), epochs=1, batch_size=8, max_length=32)
    clf = training.finetune(spec, df, eval_df=df, name="tiny", progress=False)
    clf.predict(["a man"], ["a dog"])
    assert provenance.used_models() == {str(base): "hf", str(clf.model_dir): "hf"}  # no '.partial' folder
    assert progress.read_status(fresh / "progress.json")["unit"] in ("batch", "step")


def test_sentence_encoder_notes_its_model(fresh):
    pytest.importorskip("sentence_transformers")
    from nli_lib.models import SentenceEncoder

    enc = SentenceEncoder(progress=False, cache=CallCache(":memory:"))
    enc.encode(["A man sleeps."])
    assert provenance.used_models() == {enc.model_path: "hf"}


def test_progress_draws_a_bar_outside_the_runner_and_none_inside(fresh, monkeypatch):
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    with progress.progress(total=2, desc="x") as bar:
        assert bar._bar is not None  # JupyterLab / a terminal session: a tqdm bar
    monkeypatch.setenv(progress.PROGRESS_ENV, "0")  # what the runner sets for kernels
    with progress.progress(total=2, desc="x") as bar:
        assert bar._bar is None
        bar.update(2)
    assert progress.read_status(fresh / "progress.json")["n"] == 2  # the runner still sees the status
