"""Data files that ship inside the package, read through `importlib.resources` (so an installed copy finds them).

    manifest.csv          every data file: URL pinned to a commit, sha256, size, licence (`nli_lib.data.fetch`)
    paper_values/*.csv    the numbers the five papers print, one file per paper (`nli_lib.paper_values`)
    profiles/*.yaml       the shipped profiles, `--profile offline|paper` (`nli_lib.profile`)

They are package data (pyproject.toml `[tool.setuptools.package-data]`), the same files whether nli_lib is
imported from a checkout, an editable install or a wheel in site-packages.

>>> resource_path("manifest.csv").name, sorted(p.name for p in resource_path("profiles").glob("*.yaml"))
('manifest.csv', ['offline.yaml', 'paper.yaml', 'replica.yaml'])
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

MANIFEST = "manifest.csv"  # the data manifest
PAPER_VALUES = "paper_values"  # folder of <paper>.csv reference values
PROFILES = "profiles"  # folder of <name>.yaml profiles


def resource_path(*parts: str) -> Path:
    """Filesystem path of a shipped file or folder (`resource_path("profiles", "paper.yaml")`).

    Profiles are handed to notebook kernels by path, so a resource must be a real file: an import from a
    zip archive (not a layout pip produces) raises RuntimeError instead of handing out a path that does not exist.
    """
    target = resources.files(__name__).joinpath(*parts)
    if not isinstance(target, Path):
        raise RuntimeError(f"nli_lib is imported from an archive ({target}); install it as files (pip install .)")
    return target
