"""Data layer: manifest-driven fetching (fetch.py), loaders returning DataFrames (loaders.py), statistics (stats.py)."""
from .fetch import DataError, available, load_manifest, used_data  # noqa: F401
