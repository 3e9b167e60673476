"""Content hashes: one place for every digest the companion computes in memory (files: `nli_lib.filehash`).

    >>> text_hash("a", "b")                      # parts joined by a unit separator, 16 hex digits
    '023b8059a924f728'
    >>> json_hash({"b": 1, "a": [1, 2]}, length=12) == json_hash({"a": [1, 2], "b": 1}, length=12)
    True
    >>> digest("abc", length=16)                 # plain sha256 of the concatenated chunks
    'ba7816bf8f01cfea'

Every cache key, model folder name and run stamp is one of these digests, so each recipe is kept exactly as
it was when its stored values were written: changing one (another separator, other JSON spacing) would
orphan every cached value keyed by it. `stable_json` is the one JSON form hashed (sorted keys, `str()` for
anything JSON cannot hold); `compact=True` is the call cache's form.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable

import numpy as np


def digest(*chunks: str | bytes, length: int | None = None, algorithm: str = "sha256") -> str:
    """Hex digest of the chunks concatenated (str as UTF-8), cut to `length` hex digits when given."""
    h = hashlib.new(algorithm)
    for chunk in chunks:
        h.update(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
    return h.hexdigest()[:length]


def text_hash(*parts: str) -> str:
    """Short sha256 (16 hex) of texts, each followed by a unit separator (fingerprints of data, corpora, ...)."""
    return digest(*(b for part in parts for b in (part.encode("utf-8"), b"\x1f")), length=16)


def stable_json(obj, compact: bool = False) -> str:
    """The JSON text hashed for `obj`: sorted keys, `str()` for values JSON cannot hold.

    `compact`: no spaces and non-ASCII characters kept (the call cache's keys).

    >>> stable_json({"b": "é", "a": 1}), stable_json({"b": "é", "a": 1}, compact=True)
    ('{"a": 1, "b": "\\\\u00e9"}', '{"a":1,"b":"é"}')
    """
    if compact:
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return json.dumps(obj, sort_keys=True, default=str)


def json_hash(obj, length: int | None = None, compact: bool = False) -> str:
    """sha256 of `stable_json(obj, compact)`."""
    return digest(stable_json(obj, compact), length=length)


def files_hash(paths: Iterable[str | Path], length: int | None = None) -> str:
    """sha256 of the files' bytes concatenated in the given order (versions of source files)."""
    return digest(*(Path(p).read_bytes() for p in paths), length=length)


def array_hash(X, *settings, length: int = 20) -> str:
    """sha256 of an array's float32 bytes, then of repr((shape, settings)).

    >>> a = np.zeros((2, 2))
    >>> array_hash(a, 0) == array_hash(a.astype(np.float32), 0) != array_hash(np.ones((2, 2)), 0)
    True
    """
    return digest(np.ascontiguousarray(X, dtype=np.float32).tobytes(), repr((np.shape(X), settings)), length=length)


def frame_hash(df, length: int = 20) -> str:
    """sha256 of a DataFrame's column names, dtypes, index and values (pandas' per-row hashes, so two frames
    with equal content have equal hashes however they were built).

    >>> import pandas as pd
    >>> a = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]})
    >>> frame_hash(a) == frame_hash(a.copy()) != frame_hash(a.assign(y=["a", "c"]))
    True
    >>> frame_hash(a) != frame_hash(a.astype({"x": float})) != frame_hash(a.rename(columns={"y": "z"}))
    True
    """
    import pandas as pd

    rows = pd.util.hash_pandas_object(df, index=True).to_numpy()
    return digest(repr([(str(c), str(t)) for c, t in df.dtypes.items()]), rows.tobytes(), length=length)
