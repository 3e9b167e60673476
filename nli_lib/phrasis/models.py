"""PhrasIS classifiers: the feature-based SVM, prompted models, NLI models asked both ways, paper model ids.

All follow the companion's `Classifier` protocol (`predict_proba`, `predict`, `predict_frame`), so the
coherence code scores any of them the same way:

* `FeatureSVMClassifier` - linear SVM over bag-of-words of each phrase, the words only one phrase has,
  and the directional lexical/WordNet features of `features.dense_features` (the paper's prior baselines
  were feature-based SVMs; it cites up to 0.52 accuracy on Positives and 0.81 on All).
* `PromptedRelationClassifier` - any chat model (LLMClient, or OfflineLLM offline) answering the
  `phrasis.relation` prompt (its 6-label version without UNR on the Positives track, `relation_template`);
  every call goes through the LLM call cache.
* `NLIRelationClassifier` - a 3-way NLI model (e.g. the profile's `nb.nli_model()`) asked in both
  directions; (entailment, neutral) -> FORW and so on. Coherent by construction: reversing a pair swaps the
  two calls, so SoftCoh = 1 and HardCoh is its accuracy on both directions at once.
* `PAPER_MODELS` - the 18 models of the paper's Table 2 (hub ids: the profile key
  `paper_models.phrasis.models` and its defaults, `nli_lib.phrasis.paper.TABLE2`), fine-tuned through
  `AutoModelForSequenceClassification` (decoder-only models pad through `nli_lib.models.hf.set_padding`);
  `paper_search` runs the paper's Optuna space (`PAPER_SEARCH_SPACE`; head dropout via `with_head_dropout`).

>>> from nli_lib.cache import CallCache
>>> from nli_lib.phrasis.features import toy_wordnet
>>> llm = offline_relation_llm(wordnet=toy_wordnet(), stopwords={"the", "a"}, cache=CallCache(":memory:"))
>>> clf = PromptedRelationClassifier(llm)
>>> clf.predict(["Two trains", "The train"], ["The train", "Two trains"])
['FORW', 'BACK']
"""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..config import cache_dir
from ..filecache import cached_dir
from ..hashing import stable_json, text_hash
from ..models.base import Classifier
from ..models.baselines import SklearnPairClassifier, split_spaces
from .features import (
    DENSE_NAMES,
    FEATURE_VERSION,
    analyze,
    default_stopwords,
    default_wordnet,
    dense_features,
    rule_relation,
)
from .loaders import PHRASIS_LABELS
from .paper import TABLE2

# --------------------------------------------------------------------------------------------------------------
# Feature-based SVM
# --------------------------------------------------------------------------------------------------------------


class PhrasisFeaturizer:
    """Sparse features: binary bag of words of phrase 1 ('1:'), phrase 2 ('2:'), the content lemmas only
    phrase 1 / only phrase 2 has ('o1:', 'o2:'), plus standardised `dense_features`."""

    _memo: dict = {}  # (phrase1, phrase2, id(wordnet), stop words) -> PairAnalysis, shared by all instances

    def __init__(self, wordnet=None, stopwords=None):
        self.wordnet, self.stopwords = wordnet, stopwords

    def analyses(self, p: Sequence[str], h: Sequence[str]) -> list:
        wn = self.wordnet if self.wordnet is not None else default_wordnet()
        stop = frozenset(self.stopwords) if self.stopwords is not None else default_stopwords()
        memo = self._memo.setdefault((id(wn), stop), {})
        if len(memo) > 200_000:  # bounded: a long session scoring many corpora
            memo.clear()
        out = []
        for a, b in zip(p, h):
            if (a, b) not in memo:
                memo[a, b] = analyze(a, b, wordnet=wn, stopwords=stop)
            out.append(memo[a, b])
        return out

    @staticmethod
    def _doc(an) -> str:
        return " ".join([f"1:{t}" for t in an.tokens1] + [f"2:{t}" for t in an.tokens2]
                        + [f"o1:{t}" for t in sorted(an.only1)] + [f"o2:{t}" for t in sorted(an.only2)])

    def fit_transform(self, p, h):
        import scipy.sparse as sp
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.preprocessing import StandardScaler

        an = self.analyses(p, h)
        self.vec = CountVectorizer(tokenizer=split_spaces, token_pattern=None, lowercase=False, binary=True)
        self.scaler = StandardScaler()
        dense = self.scaler.fit_transform(np.array([dense_features(a) for a in an], dtype=float))
        return sp.hstack([self.vec.fit_transform([self._doc(a) for a in an]), sp.csr_matrix(dense)]).tocsr()

    def transform(self, p, h):
        import scipy.sparse as sp

        an = self.analyses(p, h)
        dense = self.scaler.transform(np.array([dense_features(a) for a in an], dtype=float))
        return sp.hstack([self.vec.transform([self._doc(a) for a in an]), sp.csr_matrix(dense)]).tocsr()

    @property
    def feature_names(self) -> list[str]:
        return list(self.vec.get_feature_names_out()) + DENSE_NAMES


_WORDNET_IDS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def wordnet_identity(wordnet) -> str:
    """Content hash of a WordNet given instead of the default one (its lemmas and relations change features).

    The default (None) is the manifest's OEWN release, pinned by sha256, so it needs no hash.
    """
    if wordnet not in _WORDNET_IDS:
        parts = [getattr(wordnet, a, None) for a in ("_synsets", "_index", "_antonyms")]
        if all(p is None for p in parts):
            raise TypeError(f"cannot fingerprint the WordNet {type(wordnet).__name__}: it changes the features, so "
                            f"its content must be part of the cache key (use nli_lib.data.wordnet.WordNet)")
        _WORDNET_IDS[wordnet] = text_hash(stable_json(parts))
    return _WORDNET_IDS[wordnet]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class FeatureSVMClassifier(SklearnPairClassifier):
    """Linear SVM over `PhrasisFeaturizer` features. Scores are a softmax of the SVM margins (their argmax is
    the SVM's decision), not calibrated probabilities."""

    def __init__(self, labels: Sequence[str] = PHRASIS_LABELS, C: float = 1.0, seed: int = 0, wordnet=None,
                 stopwords=None, cache=None):
        super().__init__(labels, cache)
        self.C, self.seed = C, seed
        self.name = "feature-svm"
        self.feats = PhrasisFeaturizer(wordnet, stopwords)

    def settings(self) -> dict:
        stop = None if self.feats.stopwords is None else sorted(self.feats.stopwords)
        wordnet = None if self.feats.wordnet is None else wordnet_identity(self.feats.wordnet)
        return {**super().settings(), "C": self.C, "seed": self.seed, "features": FEATURE_VERSION,
                "stopwords": None if stop is None else text_hash(*stop), "wordnet": wordnet, "max_iter": 5000}

    def fitted_parts(self) -> dict:
        return {"vec": self.feats.vec, "scaler": self.feats.scaler, "est": self.est}

    def restore_parts(self, parts: dict) -> None:
        self.feats.vec, self.feats.scaler, self.est = parts["vec"], parts["scaler"], parts["est"]

    def _fit(self, p, h, y):
        from sklearn.svm import LinearSVC

        X = self.feats.fit_transform(p, h)
        self.est = LinearSVC(C=self.C, dual=False, random_state=self.seed, max_iter=5000).fit(X, y)  # primal: fast here

    def _predict(self, premises, hypotheses):
        d = self.est.decision_function(self.feats.transform(premises, hypotheses))
        if d.ndim == 1:  # two classes seen in training
            d = np.stack([-d, d], axis=1)
        probs = _softmax(np.asarray(d, dtype=float))
        out = np.zeros((len(premises), len(self.labels)))
        for j, cls in enumerate(self.est.classes_):
            out[:, self.labels.index(cls)] = probs[:, j]
        return out


# --------------------------------------------------------------------------------------------------------------
# Prompted models (LLM or offline stand-in)
# --------------------------------------------------------------------------------------------------------------

_PHRASES = re.compile(r"PHRASE 1:[ \t]*(.*)\nPHRASE 2:[ \t]*(.*)\n?")


def phrases_from_prompt(messages) -> tuple[str, str]:
    """The query's (phrase1, phrase2) from rendered `phrasis.relation` messages (the last pair, after exemplars).

    >>> from nli_lib.llm import PROMPTS
    >>> phrases_from_prompt(PROMPTS["phrasis.relation"].render(shots=2, phrase1="a dog", phrase2="an animal"))
    ('a dog', 'an animal')
    """
    text = messages if isinstance(messages, str) else messages[-1]["content"]
    found = _PHRASES.findall(text)
    if not found:
        raise ValueError("no 'PHRASE 1: ... / PHRASE 2: ...' lines in the prompt")
    return found[-1][0].strip(), found[-1][1].strip()


UNR_LINE = "UNR (unrelated): there is not any semantic relation involved.\n"  # line of the phrasis.relation prompt


def relation_template(labels: Sequence[str] = PHRASIS_LABELS):
    """The phrasis.relation prompt for a track: as registered for All (7 labels); for Positives (no UNR, as the
    track's 6-way classifiers) the same text without the UNR definition line and without the UNR exemplar.

    >>> t = relation_template(("EQUI", "FORW", "BACK", "SIMI", "REL", "OPPO"))
    >>> t.name, "UNR" in t.render(phrase1="a", phrase2="b")[-1]["content"], len(t.exemplars)
    ('phrasis.relation[positives]', False, 7)
    """
    from ..llm import PROMPTS

    base = PROMPTS["phrasis.relation"]
    if "UNR" in labels:
        return base
    if UNR_LINE not in base.template:
        raise ValueError("phrasis.relation no longer has the UNR definition line; update relation_template")
    return dataclasses.replace(base, name="phrasis.relation[positives]", template=base.template.replace(UNR_LINE, ""),
                               exemplars=tuple(r for r in base.exemplars if r["label"] != "UNR"))


def offline_relation_llm(wordnet=None, stopwords=None, cache=None):
    """OfflineLLM answering the phrasis.relation prompt with `rule_relation` (the offline profile's stand-in).

    When the prompt offers no UNR label (the Positives prompt of `relation_template`), the rules' UNR
    ("no shared word, no WordNet link") is answered as REL, the weakest relation the prompt offers.
    """
    from ..llm import OfflineLLM

    def generate(messages) -> str:
        p1, p2 = phrases_from_prompt(messages)
        wn = wordnet if wordnet is not None else default_wordnet()
        stop = stopwords if stopwords is not None else default_stopwords()
        label = rule_relation(analyze(p1, p2, wordnet=wn, stopwords=stop))
        offers_unr = UNR_LINE.strip() in (messages if isinstance(messages, str) else messages[-1]["content"])
        return "REL" if label == "UNR" and not offers_unr else label

    tag = "" if wordnet is None else f"-{id(wordnet)}"  # a custom WordNet must not share cached answers
    llm = OfflineLLM(generate, name=f"phrasis-rules-v{FEATURE_VERSION}{tag}", cache=cache)
    llm.symmetric_under_reversal = True  # swapping the phrases swaps FORW/BACK: SoftCoh is 1 by construction
    return llm


class PromptedRelationClassifier(Classifier):
    """A chat model answering `PROMPTS[prompt]` (default 'phrasis.relation') for each pair.

    With the default prompt, `labels` picks the track's version (`relation_template`): all seven labels, or
    the six Positives labels without UNR. Answers that do not parse, refusals, failed calls and labels outside
    `labels` give no label (a NaN row, predicted label None, scored as wrong), never a stand-in label; the chat
    client counts them in the call ledger and `answers()` shows the raw text, parse result and reason of every
    pair. predict_proba is one-hot and is not stored in the classifier cache: the LLM cache already holds every
    answer, and a failed call must not be frozen as a prediction.
    """

    def __init__(self, llm, prompt: str = "phrasis.relation", shots: int = 0, labels: Sequence[str] = PHRASIS_LABELS,
                 tier: str | None = None, name: str | None = None):
        super().__init__(None)
        from ..llm import PROMPTS, OfflineLLM

        self.llm, self.shots = llm, int(shots)
        self.labels = tuple(labels)
        self.template = relation_template(self.labels) if prompt == "phrasis.relation" else PROMPTS[prompt]
        self.prompt = self.template.name
        self.tier = tier or ("offline" if isinstance(llm, OfflineLLM) else "paper")
        self.name = name or f"prompted:{llm.model}" + (f" ({self.shots}-shot)" if self.shots else "") + (
            "" if "UNR" in self.labels else f" [{len(self.labels)} labels]")
        # True for the offline rules (symmetric); a real LLM answers each direction on its own
        self.coherent_by_construction = bool(getattr(llm, "symmetric_under_reversal", False))

    @property
    def fingerprint(self) -> str:
        return f"{self.llm.label}|{self.prompt}|shots={self.shots}|labels={','.join(self.labels)}"

    def messages(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[list[dict]]:
        return [self.template.render(shots=self.shots, phrase1=str(a), phrase2=str(b))
                for a, b in zip(premises, hypotheses)]

    def answers(self, premises: Sequence[str], hypotheses: Sequence[str]) -> pd.DataFrame:
        """One row per pair: raw answer text, ok, parsed value, error, and the label used (None when no answer)."""
        results = self.llm.chat_many(self.messages(premises, hypotheses), progress=False)
        rows = []
        parsed = self.llm.parse_many(self.template, results, self.labels)
        for a, b, r, p in zip(premises, hypotheses, results, parsed):
            rows.append({"phrase1": a, "phrase2": b, "text": getattr(r, "text", None), "ok": p.ok, "value": p.value,
                         "error": p.error, "label_used": p.value if p.ok else None})
        return pd.DataFrame(rows, columns=["phrase1", "phrase2", "text", "ok", "value", "error", "label_used"])

    def _predict_proba_uncached(self, premises, hypotheses) -> np.ndarray:
        used = self.answers(premises, hypotheses)["label_used"] if len(premises) else []
        out = np.full((len(premises), len(self.labels)), np.nan)
        for i, lab in enumerate(used):
            if lab is not None:
                out[i] = 0.0
                out[i, self.labels.index(lab)] = 1.0
        return out

    def predict_proba(self, premises, hypotheses) -> np.ndarray:
        premises, hypotheses = [str(p) for p in premises], [str(h) for h in hypotheses]
        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        return self._predict_proba_uncached(premises, hypotheses)


# --------------------------------------------------------------------------------------------------------------
# A 3-way NLI model asked both ways
# --------------------------------------------------------------------------------------------------------------


def nli_pair_to_relation(forward: str, backward: str, neutral_label: str = "SIMI") -> str:
    """PhrasIS relation from NLI labels of (phrase1 -> phrase2) and (phrase2 -> phrase1).

    >>> [nli_pair_to_relation(f, b) for f, b in [("entailment", "entailment"), ("entailment", "neutral"),
    ...     ("neutral", "entailment"), ("neutral", "contradiction"), ("neutral", "neutral")]]
    ['EQUI', 'FORW', 'BACK', 'OPPO', 'SIMI']
    """
    if "contradiction" in (forward, backward):
        return "OPPO"
    return {("entailment", "entailment"): "EQUI", ("entailment", "neutral"): "FORW",
            ("neutral", "entailment"): "BACK"}.get((forward, backward), neutral_label)


class NLIRelationClassifier(Classifier):
    """`nli` (labels entailment/neutral/contradiction) on both directions -> PhrasIS relation.

    neutral both ways maps to `neutral_label`: natural logic's 'independence' covers SIMI, REL and UNR alike,
    so by default it is the commonest of those in the track: UNR when UNR is a label (All: about two thirds
    of the pairs), else SIMI (the commonest Positives label). Predictions come from the NLI model's own cache.
    """

    def __init__(self, nli: Classifier, neutral_label: str | None = None, labels: Sequence[str] = PHRASIS_LABELS):
        super().__init__(None)
        if set(("entailment", "neutral", "contradiction")) - set(nli.labels):
            raise ValueError(f"{nli.name} is not a 3-way NLI model (labels {nli.labels})")
        labels = tuple(labels)
        neutral_label = neutral_label or ("UNR" if "UNR" in labels else "SIMI")
        if neutral_label not in labels:
            raise ValueError(f"neutral_label {neutral_label!r} is not one of {labels}")
        self.nli, self.neutral_label, self.labels = nli, neutral_label, labels
        self.name, self.tier = f"nli-both-ways:{nli.name}", nli.tier
        self.coherent_by_construction = True  # reversing a pair swaps the two NLI calls

    @property
    def fingerprint(self) -> str:
        return f"{self.nli.fingerprint}|both-ways|{self.neutral_label}"

    def _predict_proba_uncached(self, premises, hypotheses) -> np.ndarray:
        fwd = self.nli.predict(premises, hypotheses)
        bwd = self.nli.predict(hypotheses, premises)
        out = np.zeros((len(premises), len(self.labels)))
        for i, (f, b) in enumerate(zip(fwd, bwd)):
            out[i, self.labels.index(nli_pair_to_relation(f, b, self.neutral_label))] = 1.0
        return out

    def predict_proba(self, premises, hypotheses) -> np.ndarray:
        return self._predict_proba_uncached([str(p) for p in premises], [str(h) for h in hypotheses])


# --------------------------------------------------------------------------------------------------------------
# The paper's models (Table 2) and its hyper-parameter search (§4)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PaperModel:
    """One model of the paper's Table 2."""

    name: str  # as printed in Tables 3-7, e.g. 'DeBERTa v3 B'
    hub_id: str  # Hugging Face id loaded with AutoModelForSequenceClassification
    family: str  # 'encoder' | 'decoder' | 'encoder-decoder'
    params: str  # size as printed in Table 2


PAPER_MODELS: tuple[PaperModel, ...] = tuple(  # hub ids: the profile's defaults (nli_lib.phrasis.paper.TABLE2)
    PaperModel(name, TABLE2[name], family, size) for name, family, size in (
        ("ModernBERT B", "encoder", "149M"),
        ("ModernBERT L", "encoder", "395M"),
        ("ALBERT v2 B", "encoder", "11.8M"),
        ("ALBERT v2 L", "encoder", "17.9M"),
        ("RoBERTa B", "encoder", "125M"),
        ("RoBERTa L", "encoder", "355M"),
        ("DeBERTa v3 B", "encoder", "184M"),
        ("DeBERTa v3 L", "encoder", "435M"),
        ("OPT 125", "decoder", "125M"),
        ("OPT 350", "decoder", "350M"),
        ("Pythia 160", "decoder", "160M"),
        ("Pythia 410", "decoder", "410M"),
        ("GPT-2 S", "decoder", "117M"),
        ("GPT-2 M", "decoder", "345M"),
        ("BART B", "encoder-decoder", "140M"),
        ("BART L", "encoder-decoder", "400M"),
        ("Flan-T5 S", "encoder-decoder", "60M"),
        ("Flan-T5 B", "encoder-decoder", "220M"),
    )
)

# §4: (i) task-head dropout [0, 0.5] step 0.1 (written into a config-only copy of the base, `with_head_dropout`);
# (ii) warm-up ratio [0.01, 0.10] step 0.01; (iii) "standard" learning-rate and weight-decay ranges (ours:
# 1e-6..1e-4 log-uniform, 0..0.1); (iv) batch size {8, 16, ..., 64} (read as powers of two); (v) up to 10
# epochs; (vi) linear schedule, (vii) AdamW eps 1e-6 (`PAPER_ADAM_EPS`; betas 0.9/0.999 are torch's) and (viii)
# gradient clipping at 1.0, as in the spine's training loop. Not reproduced: the paper's stratified batch
# sampling (the loop shuffles).
PAPER_SEARCH_SPACE = {"head_dropout": (0.0, 0.5, 0.1), "lr": (1e-6, 1e-4), "weight_decay": (0.0, 0.1),
                      "warmup_ratio": (0.01, 0.10, 0.01), "batch_size": [8, 16, 32, 64], "epochs": (1, 10)}
PAPER_ADAM_EPS = 1e-6  # (vii): every trial and the returned best spec use it
# config fields holding the classification head's dropout: BERT/RoBERTa/ModernBERT/BART/T5 ('classifier_dropout'),
# ALBERT ('classifier_dropout_prob'), DeBERTa v2/v3 ('cls_dropout' and its pooler's 'pooler_dropout'). The
# decoders' sequence-classification heads (GPT-2, OPT, Pythia) are a bare linear layer without dropout, so the
# searched value does not change them (as in any AutoModelForSequenceClassification run of those models).
HEAD_DROPOUT_FIELDS = ("classifier_dropout", "classifier_dropout_prob", "cls_dropout", "pooler_dropout")


def _local_model_dir(model_id: str):
    """Directory holding `model_id`'s files: itself when local, else its hub snapshot at the resolved commit
    (downloaded if needed)."""
    from ..models.loading import hub_cache_dir, resolve_model

    source = resolve_model(model_id)
    if source.local_dir is not None:
        return source.local_dir
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(model_id, revision=source.commit, cache_dir=str(hub_cache_dir())))


def with_head_dropout(model_id: str, p: float) -> str:
    """A directory that is `model_id` with the task-head dropout set to `p` (HEAD_DROPOUT_FIELDS in its config).

    Only config.json is written; every other file is a symbolic link to the base's, so a search over six
    dropout values costs six small directories (under cache_dir('phrasis', 'bases')), not six model copies.
    The directory name holds the base's identity (content hash, or hub id + commit), so a changed base gets a
    new directory instead of the old config.
    """
    from ..models.loading import weights_fingerprint

    src = _local_model_dir(model_id)
    p = round(float(p), 4)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", src.name if src == Path(model_id) else str(model_id)).strip("_")
    out = cache_dir("phrasis", "bases") / f"{stem}-{text_hash(weights_fingerprint(model_id))[:8]}-head-dropout-{p}"

    def build(tmp: Path) -> None:
        config = json.loads((src / "config.json").read_text())
        config.update({name: p for name in HEAD_DROPOUT_FIELDS})
        for f in src.iterdir():
            if f.name != "config.json" and not f.name.startswith("."):
                (tmp / f.name).symlink_to(f.resolve())
        (tmp / "config.json").write_text(json.dumps(config, indent=2))

    return str(cached_dir(out, build))


def optuna_module():
    """optuna, or ImportError saying how to install it (an optional dependency)."""
    try:
        import optuna
    except ImportError as exc:  # optional dependency
        raise ImportError("the paper's hyper-parameter search needs optuna: pip install optuna") from exc
    return optuna


def _base_for(base_spec, dropout: float | None) -> str:
    return base_spec.base if dropout is None else with_head_dropout(base_spec.base, dropout)


def search_objective(train_df: pd.DataFrame, val_df: pd.DataFrame, base_spec, name: str = "search",
                     space: dict | None = None, keep_trials: bool = False):
    """The Optuna objective of the paper's search (`PAPER_SEARCH_SPACE`, updated by `space`): fine-tune a trial's
    setting on `train_df`, return its weighted F1 on `val_df`. One process's trials keep only its best model
    directory unless `keep_trials` (the chosen setting is re-trained on all of train afterwards anyway). Used by
    `paper_search` (one process) and `nli-companion sweep` (workers sharing a storage: `nli_lib.sweep`)."""
    from ..evaluation import weighted_f1
    from ..models.training import finetune

    space = {**PAPER_SEARCH_SPACE, **(space or {})}
    best = {"score": -1.0, "dir": None}

    def objective(trial):
        lo, hi, step = space["warmup_ratio"]
        dropout = None if space.get("head_dropout") is None else trial.suggest_float(
            "head_dropout", space["head_dropout"][0], space["head_dropout"][1], step=space["head_dropout"][2])
        spec = dataclasses.replace(
            base_spec,
            base=_base_for(base_spec, dropout),
            adam_eps=PAPER_ADAM_EPS,
            lr=trial.suggest_float("lr", *space["lr"], log=True),
            weight_decay=trial.suggest_float("weight_decay", *space["weight_decay"]),
            warmup_ratio=round(trial.suggest_float("warmup_ratio", lo, hi, step=step), 4),
            batch_size=trial.suggest_categorical("batch_size", list(space["batch_size"])),
            epochs=trial.suggest_int("epochs", *space["epochs"]),
        )
        clf = finetune(spec, train_df, None, name=f"{name}-t{trial.number}", progress=False)
        score = weighted_f1(val_df["label"], clf.predict(val_df["premise"], val_df["hypothesis"]))
        model_dir = getattr(clf, "model_dir", None)
        if score > best["score"]:
            if best["dir"] is not None and not keep_trials:
                shutil.rmtree(best["dir"], ignore_errors=True)
            best.update(score=score, dir=model_dir)
        elif model_dir is not None and not keep_trials:
            shutil.rmtree(model_dir, ignore_errors=True)
        return score

    return objective


def searched_spec(base_spec, study):
    """(the TrainSpec of `study`'s best trial, DataFrame of its complete trials: number, value, params_*)."""
    optuna = optuna_module()
    params = dict(study.best_params)
    params["warmup_ratio"] = round(params["warmup_ratio"], 4)
    params["base"] = _base_for(base_spec, params.pop("head_dropout", None))
    trials = study.trials_dataframe(attrs=("number", "value", "params"))
    done = {t.number for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))}
    trials = trials[trials["number"].isin(done)].reset_index(drop=True)
    return dataclasses.replace(base_spec, adam_eps=PAPER_ADAM_EPS, **params), trials


def search_or_read(fit80: pd.DataFrame, val: pd.DataFrame, tspec, n_trials: int, search: str,
                   sweep: tuple[str, str] | None):
    """(best TrainSpec, trials DataFrame) of one training unit's search: run in this process (`paper_search`)
    without a sweep; with `sweep` = (storage, prefix), read from the finished study that `nli-companion sweep`
    workers filled (`nli_lib.sweep.load_finished`: RuntimeError naming the command while it is not finished)."""
    if sweep is None:
        return paper_search(fit80, val, tspec, n_trials=n_trials, name=search)
    from ..sweep import load_finished, storage_value

    return searched_spec(tspec, load_finished(storage_value(sweep[0]), sweep[1], search, n_trials))


def paper_search(train_df: pd.DataFrame, val_df: pd.DataFrame, base_spec, n_trials: int = 150, name: str = "search",
                 space: dict | None = None, keep_trials: bool = False):
    """Optuna TPE search (the paper's §4 space, `PAPER_SEARCH_SPACE`) maximising weighted F1 on `val_df`, in this
    process (`nli-companion sweep` runs the same search on many machines; `nli_lib.phrasis.sweep`).

    Returns (best TrainSpec, DataFrame of trials). Each trial is a `finetune` call; unless `keep_trials`, a
    trial's model directory is deleted once a better one exists (150 large models would fill a disk). The
    head dropout of a trial is its base: `with_head_dropout(base_spec.base, p)` (space['head_dropout'] = None
    leaves the base's own dropout).
    """
    optuna = optuna_module()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=base_spec.seed))
    study.optimize(search_objective(train_df, val_df, base_spec, name, space, keep_trials), n_trials=n_trials)
    return searched_spec(base_spec, study)

