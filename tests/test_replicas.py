"""Every model family of the papers loads, predicts batches, fine-tunes and routes labels through id2label,
shown on tiny random-weight replicas built here (nli_lib.replicas; nothing is downloaded)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from nli_lib import replicas as R  # noqa: E402
from nli_lib.cache import CallCache  # noqa: E402
from nli_lib.config import LABELS  # noqa: E402
from nli_lib.models.hf import HFClassifier, ModelLoadError, map_label_order, read_id2label  # noqa: E402
from nli_lib.models.loading import folder_fingerprint, resolve_model  # noqa: E402

PREMISES = ["A man sleeps.", "Two dogs run through a field near the beach while children watch.", "A woman reads."]
HYPOTHESES = ["A person rests.", "Animals are outside.", "Nobody reads a book today because it is raining."]
TOKENIZER_CLASS = {  # the class transformers picks for each hub counterpart
    "bert": "BertTokenizer", "roberta": "RobertaTokenizer", "roberta-mnli": "RobertaTokenizer",
    "deberta-v3": "DebertaV2Tokenizer", "deberta-mnli": "DebertaTokenizer", "albert": "AlbertTokenizer",
    "modernbert": "TokenizersBackend", "gpt2": "GPT2Tokenizer", "opt": "GPT2Tokenizer", "pythia": "GPTNeoXTokenizer",
    "bart": "RobertaTokenizer", "flan-t5": "T5Tokenizer", "label-ids": "BertTokenizer",
    "cross-encoder": "DebertaV2Tokenizer",
}
BASES = ("roberta", "deberta-v3", "albert", "modernbert", "gpt2", "opt", "pythia", "bart", "flan-t5")  # no NLI head
NLI = {name: f for name, f in R.FAMILIES.items() if f.nli}
LABEL_ORDER = ("contradiction", "entailment", "neutral")  # what the profile says the label-ids head means


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return R.build_replicas(tmp_path_factory.mktemp("replicas"))


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def expected_label(family: str, folder) -> str:
    """The label the biased head must give: what id2label (or the profile's label_order) names that unit."""
    if family == "label-ids":
        return LABEL_ORDER[R.HEAD_UNIT]
    units = read_id2label(resolve_model(folder))
    return LABELS[map_label_order(units, LABELS).index(R.HEAD_UNIT)]


def test_replicas_copy_their_counterparts_layout(built):
    from transformers import AutoConfig, AutoTokenizer

    assert set(built) == set(R.FAMILIES)
    for family, tokenizer_class in TOKENIZER_CLASS.items():
        tok = AutoTokenizer.from_pretrained(built[family])
        assert type(tok).__name__ == tokenizer_class, family
        config = AutoConfig.from_pretrained(built[family])
        assert config.hidden_size == R.HIDDEN if hasattr(config, "hidden_size") else True
    files = lambda f: sorted(p.name for p in built[f].iterdir() if not p.name.startswith("."))  # noqa: E731
    assert "spm.model" in files("deberta-v3") and "tokenizer.json" not in files("deberta-v3")  # spm.model only
    assert "spiece.model" in files("albert") and "spiece.model" in files("flan-t5")
    assert AutoTokenizer.from_pretrained(built["gpt2"]).pad_token is None  # GPT-2 has no pad token
    pythia = AutoTokenizer.from_pretrained(built["pythia"])
    assert pythia.pad_token == "<|padding|>" and AutoConfig.from_pretrained(built["pythia"]).pad_token_id is None
    assert read_id2label(resolve_model(built["roberta-mnli"])) == {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    assert read_id2label(resolve_model(built["bert"])) == {0: "neutral", 1: "entailment", 2: "contradiction"}
    assert read_id2label(resolve_model(built["cross-encoder"])) == {0: "contradiction", 1: "entailment", 2: "neutral"}
    assert (built["cross-encoder"] / "config_sentence_transformers.json").is_file()  # saved by CrossEncoder
    assert (built["embedder"] / "modules.json").is_file()


def test_builds_are_deterministic(built, tmp_path):
    for family in ("roberta-mnli", "deberta-v3", "flan-t5"):
        again = R.build_replica(family, tmp_path / family)
        assert folder_fingerprint(again).split("@")[1] == folder_fingerprint(built[family]).split("@")[1], family


@pytest.mark.parametrize("family", sorted(NLI))
def test_nli_checkpoints_route_labels_through_id2label(built, family, cache_dir):
    """Each head is biased to unit HEAD_UNIT: the label must be the one its config (or label_order) names."""
    kwargs = {"label_order": LABEL_ORDER} if family == "label-ids" else {}
    clf = HFClassifier(built[family], progress=False, cache=CallCache(":memory:"), **kwargs)
    assert clf.name == family  # a folder is named by its own name, never by its path
    assert clf.predict(PREMISES, HYPOTHESES) == [expected_label(family, built[family])] * 3


def test_generic_labels_need_a_label_order(built):
    with pytest.raises(ModelLoadError, match="label_order"):
        HFClassifier(built["label-ids"], progress=False)


def _train_frame(labels=LABELS):
    return pd.DataFrame({"premise": PREMISES + PREMISES[:1], "hypothesis": HYPOTHESES + HYPOTHESES[:1],
                         "label": [labels[i % len(labels)] for i in range(4)]})


@pytest.mark.parametrize("family", BASES + ("bert", "cross-encoder"))
def test_every_family_fine_tunes_and_predicts_batches(built, family, cache_dir):
    """One epoch of two steps through training.py, then a batch of three pairs of different lengths (padding:
    GPT-2 has no pad token, Pythia's config names none)."""
    from nli_lib.models.training import TrainSpec, finetune

    spec = TrainSpec(base=str(built[family]), labels=LABELS, epochs=1, batch_size=2, max_length=32, lr=1e-3)
    clf = finetune(spec, _train_frame(), name=f"replica-{family}", progress=False)
    probs = clf._predict_proba_uncached(PREMISES, HYPOTHESES)
    assert probs.shape == (3, 3) and np.allclose(probs.sum(1), 1) and np.isfinite(clf.train_log[0]["train_loss"])
    config = json.loads((clf.model_dir / "config.json").read_text())
    assert config["pad_token_id"] is not None and config["id2label"] == {"0": "entailment", "1": "neutral",
                                                                          "2": "contradiction"}


@pytest.mark.parametrize("family", ["roberta-mnli", "bert"])
def test_fine_tuning_keeps_what_each_head_unit_means(built, family, cache_dir):
    """Fine-tuning an NLI checkpoint whose head order differs from ours permutes its head rows: with a learning
    rate too small to change anything, the fine-tuned model predicts what the checkpoint predicted."""
    from nli_lib.models.training import TrainSpec, finetune

    before = HFClassifier(built[family], progress=False, cache=CallCache(":memory:")).predict(PREMISES, HYPOTHESES)
    spec = TrainSpec(base=str(built[family]), labels=LABELS, epochs=1, batch_size=4, max_length=32, lr=1e-12)
    after = finetune(spec, _train_frame(), name=f"keep-{family}", progress=False)
    assert after.predict(PREMISES, HYPOTHESES) == before


def test_a_head_of_other_labels_starts_fresh(built, cache_dir):
    """A same-size head whose units mean something else (LABEL_0..2) is re-initialised, not inherited: the
    checkpoint's bias towards unit 0 is gone."""
    from nli_lib.models.training import TrainSpec, finetune

    spec = TrainSpec(base=str(built["label-ids"]), labels=LABELS, epochs=1, batch_size=4, max_length=32, lr=1e-12)
    clf = finetune(spec, _train_frame(), name="fresh-label-ids", progress=False)
    probs = clf._predict_proba_uncached(PREMISES, HYPOTHESES)
    assert probs.max() < 0.9  # the biased head gave ~0.999 to one unit


def test_embedder_and_profile_line_up(built, cache_dir, monkeypatch, tmp_path):
    from nli_lib.lineup import lineup, load_classifier
    from nli_lib.models import SentenceEncoder
    from nli_lib.profile import load_profile

    vectors = SentenceEncoder(str(built["embedder"]), cache=CallCache(":memory:"), progress=False).encode(PREMISES)
    assert vectors.shape == (3, R.HIDDEN) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-3)
    root = built["bert"].parent
    monkeypatch.setenv("NLI_USER_CWD", str(root.parent))
    p = load_profile(text=f"tier: paper\nbaselines: []\nnli_model: {root.name}/roberta-mnli\nextra_models:\n"
                          f"  - {{id: {root.name}/label-ids, name: generic, label_order: {list(LABEL_ORDER)}}}\n")
    loaded = {ref.name: load_classifier(ref) for ref in lineup(p)}
    assert list(loaded) == ["roberta-mnli", "generic"]
    assert loaded["generic"].predict(PREMISES[:2], HYPOTHESES[:2]) == [LABEL_ORDER[R.HEAD_UNIT]] * 2
