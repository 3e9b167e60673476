"""Model layer: one protocol (base.Classifier), Hugging Face models, fine-tuning, baselines, embeddings.

The names notebooks use:

    get_nli_model("offline:minilm-esnli", quick=False)   # the offline default NLI model (fine-tuned here)
    get_nli_model("tfidf-logreg")                         # classical baseline, fitted on e-SNLI dev
    get_nli_model("roberta-large-mnli")                   # paper profile: any hub id or local directory

The offline defaults and `get_nli_model` live in `named`; this package only re-exports the names.
"""
from __future__ import annotations

from .base import Classifier  # noqa: F401
from .baselines import NaiveBayesPairClassifier, TfidfPairClassifier, fit_baseline  # noqa: F401
from .embeddings import SentenceEncoder, cosine_matrix  # noqa: F401
from .fitted import fit_cached  # noqa: F401
from .hf import HFClassifier  # noqa: F401
from .loading import ModelLoadError, weights_fingerprint  # noqa: F401
from .named import (  # noqa: F401
                    DNLI_LABELS,
                    QUICK_TRAIN_ROWS,
                    dnli_frame,
                    get_nli_model,
                    offline_dnli_model,
                    offline_nli_model,
                    offline_spec,
)
from .training import TrainSpec, finetune, hparam_search, minilm_path  # noqa: F401
