"""Input length for scoring augmented pairs: sized from the data, never a fixed guess.

An L=3 premise runs to 100+ words; a cross-encoder truncates (longest first) at its `max_length`, which
silently drops the fused facts a level is about. So the length a model scores with is measured: every
(premise, hypothesis) pair of the sets to be scored is tokenized with that model's own tokenizer, without
truncation, and the window is the longest pair rounded up to a multiple of `multiple` tokens, capped at the
model's position limit. Only pairs longer than that limit are truncated, and `context_report` counts them.

>>> class Tok:                       # a stand-in tokenizer: one token per word, plus 3 special tokens
...     model_max_length = 512
...     def __call__(self, a, b, truncation=False):
...         return {"input_ids": [[0] * (len(x.split()) + len(y.split()) + 3) for x, y in zip(a, b)]}
>>> class Model:
...     name, max_length, tokenizer, _fingerprint = "toy", 128, Tok(), "toy|max_len=128"
...     fingerprint = property(lambda self: self._fingerprint)
>>> frames = {"full": pd.DataFrame({"level": [0, 3], "premise": ["a b", "w " * 150], "hypothesis": ["c", "d e"]})}
>>> needed_length(Model(), frames)
160
>>> context_report(Model(), frames, 160)[["variant", "level", "n", "max tokens", "truncated"]].values.tolist()
[['full', 0, 1, 6, 0], ['full', 3, 1, 155, 0]]
>>> sized_view(Model(), frames).max_length, sized_view(Model(), frames).fingerprint
(160, 'toy|max_len=160')
"""
from __future__ import annotations

import copy
import math
from typing import Mapping

import numpy as np
import pandas as pd

from ..models.base import has_attributes

#: Longest window any model is given, whatever its tokenizer claims (BERT-style position tables have 512).
POSITION_LIMIT = 512


def position_limit(model, tokenizer_limit: int | None | str = "ask") -> int:
    """The longest input the model can take: its config's max_position_embeddings, else the tokenizer's
    model_max_length (`tokenizer_limit`, read from the tokenizer when "ask"), never above POSITION_LIMIT."""
    limits = [POSITION_LIMIT]
    config_limit = getattr(getattr(getattr(model, "_model", None), "config", None), "max_position_embeddings", None)
    if config_limit:
        limits.append(int(config_limit))
    if tokenizer_limit == "ask":
        tokenizer_limit = getattr(getattr(model, "tokenizer", None), "model_max_length", None)
    if tokenizer_limit and tokenizer_limit < 10**6:
        limits.append(int(tokenizer_limit))
    return min(limits)


def pair_lengths(model, premises, hypotheses) -> np.ndarray:
    """Tokens of each (premise, hypothesis) pair with the model's tokenizer, special tokens included."""
    if not len(premises):
        return np.zeros(0, dtype=int)
    enc = model.tokenizer([str(p) for p in premises], [str(h) for h in hypotheses], truncation=False)
    return np.array([len(ids) for ids in enc["input_ids"]], dtype=int)


def token_counts(model, frames: Mapping[str, pd.DataFrame]) -> dict:
    """{'tokens': {variant: [tokens of each pair]}, 'model_max_length': the tokenizer's limit}. For a model
    with a `weights_id` (an HF classifier: its folder's content hash, tokenizer files included, or hub
    commit) kept in the file cache (`filecache.cached_derived`, JSON) under that id, the pairs and
    `filecache.library_state`, so a warm notebook 41 loads no tokenizer (~4 s: transformers and the tokenizer)."""
    def compute() -> dict:
        tokens = {variant: pair_lengths(model, df["premise"].tolist(), df["hypothesis"].tolist()).tolist()
                  for variant, df in frames.items()}
        limit = getattr(model.tokenizer, "model_max_length", None)
        return {"tokens": tokens, "model_max_length": int(limit) if limit is not None else None}

    identity = getattr(model, "weights_id", None)
    if not isinstance(identity, str):
        return compute()
    from .. import filecache
    from ..hashing import json_hash

    pairs = {variant: json_hash([[str(p), str(h)] for p, h in zip(df["premise"], df["hypothesis"])])
             for variant, df in frames.items()}

    def problem(value) -> str | None:
        ok = (isinstance(value, dict) and set(value) == {"tokens", "model_max_length"}
              and isinstance(value["tokens"], dict) and set(value["tokens"]) == set(frames)
              and all(len(value["tokens"][v]) == len(df) for v, df in frames.items()))
        return None if ok else "not one token count per pair"

    path = filecache.derived_path("token_lengths", {"tokenizer": identity, "pairs": pairs}, filecache.JSON)
    return filecache.cached_derived(path, compute, "cached token lengths", validate=problem)


def _lengths(model, frames: Mapping[str, pd.DataFrame], counts: dict | None = None) -> pd.DataFrame:
    counts = counts or token_counts(model, frames)
    rows = [pd.DataFrame({"variant": variant, "level": df["level"].to_numpy(),
                          "tokens": np.asarray(counts["tokens"][variant], dtype=int)})
            for variant, df in frames.items()]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["variant", "level", "tokens"])


def needed_length(model, frames: Mapping[str, pd.DataFrame], multiple: int = 32) -> int:
    """The window that truncates no pair of `frames` (longest pair, rounded up to `multiple`), capped at the
    model's position limit; never below the model's own max_length."""
    counts = token_counts(model, frames)
    lengths = _lengths(model, frames, counts)["tokens"]
    longest = int(lengths.max()) if len(lengths) else 0
    window = max(int(getattr(model, "max_length", 0)), multiple * math.ceil(longest / multiple))
    return min(window, position_limit(model, counts["model_max_length"]))


def context_report(model, frames: Mapping[str, pd.DataFrame], max_length: int) -> pd.DataFrame:
    """Per variant and level: pairs, longest and 95th-percentile token count, and pairs truncated at `max_length`."""
    lengths = _lengths(model, frames)
    rows = []
    for (variant, level), g in lengths.groupby(["variant", "level"], sort=False):
        t = g["tokens"].to_numpy()
        rows.append({"model": getattr(model, "name", type(model).__name__), "variant": variant, "level": int(level),
                     "n": len(t), "max tokens": int(t.max()), "p95 tokens": float(np.percentile(t, 95)),
                     "window": int(max_length), "truncated": int((t > max_length).sum())})
    return pd.DataFrame(rows)


def with_length(model, max_length: int):
    """A view of an HF classifier scoring at `max_length` tokens (same weights, own cache key)."""
    if getattr(model, "max_length", None) == max_length:
        return model
    view = copy.copy(model)
    view.max_length = int(max_length)
    base = str(getattr(model, "fingerprint", model.name)).split("|max_len=")[0]
    view._fingerprint = f"{base}|max_len={int(max_length)}"
    return view


def sized_view(model, frames: Mapping[str, pd.DataFrame], multiple: int = 32):
    """`model` scoring with the window `needed_length` measures on `frames`; models without a tokenizer and
    max_length (TF-IDF, an LLM) are returned unchanged. Asked without reading the lazy tokenizer, which would load
    transformers in a run whose token counts are all in the file cache (~5 s of a warm notebook 41)."""
    if not has_attributes(model, "max_length", "tokenizer"):
        return model
    return with_length(model, needed_length(model, frames, multiple))
