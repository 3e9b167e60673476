"""Data layer: manifest-driven fetching (fetch.py) and loaders returning DataFrames (loaders.py)."""
from .fetch import DataError, fetch, load_manifest, used_data  # noqa: F401
