"""Model layer: one protocol (base.Classifier), Hugging Face models, fine-tuning, baselines, embeddings.

A model is loaded by name through `nli_lib.lineup.load_classifier` (its model families: the offline MiniLM
fine-tuned here, the classical baselines, any hub id or local folder). The offline defaults live in `named`;
this package only re-exports the names.
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
                    offline_dnli_model,
                    offline_nli_model,
                    offline_spec,
)
from .training import TrainSpec, finetune, hparam_search, minilm_path  # noqa: F401
