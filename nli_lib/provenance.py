"""What a run used: data files (manifest key -> sha256) and models (reference -> kind).

The data layer notes every file it verifies, model classes note the model they load, LLM clients note
their endpoint; outputs write `used_data()` into sidecars, and when the runner sets $NLI_RUN_RECORD the
record file is kept current, so the runner can later decide whether a notebook's inputs changed: it
re-hashes the recorded data keys against the manifest and recomputes each recorded model's identity
(`nli_lib.models.hf.weights_fingerprint`) at skip-check time.

    >>> DATA.clear(); MODELS.clear()
    >>> note_data("snli_subset/dev", "ab12"); note_model("/models/minilm-esnli", "hf")
    >>> note_model("gpt-4o @ https://api.openai.com/v1", "llm")
    >>> record() == {"data": {"snli_subset/dev": "ab12"},
    ...              "models": {"/models/minilm-esnli": "hf", "gpt-4o @ https://api.openai.com/v1": "llm"}}
    True
    >>> DATA.clear(); MODELS.clear()

Model kinds: 'hf' (Hugging Face folder or hub id: transformers / sentence-transformers weights; the
runner fingerprints these) and 'llm' (an endpoint, identified by the profile, which is hashed anyway).

A notebook's code is identified by `code_hash`, the sha256 of its code cells without their comments and blank
lines (markdown and outputs do not count either): the runner's skip check and every sidecar (`code_sha256`, read
by `nli_lib.stale`) use it.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tokenize
from pathlib import Path

from .atomic import write_json
from .config import REPO_ROOT, user_path

SESSION_ENV = "JPY_SESSION_NAME"  # path of the notebook a kernel runs (jupyter-server, and the runner)

RECORD_ENV = "NLI_RUN_RECORD"  # JSON file the runner asks a notebook kernel to keep current
MODEL_KINDS = ("hf", "llm")  # 'hf': weights the runner fingerprints; 'llm': an endpoint (model @ url)
DATA: dict[str, str] = {}  # manifest key -> sha256 of every data file used in this process
MODELS: dict[str, str] = {}  # model reference (absolute folder, hub id, or 'model @ endpoint') -> kind
_RECORDERS: list[dict] = []  # open `recording` blocks


def note_data(key: str, sha256: str) -> None:
    """Remember a verified data file (and update the run record when the runner asked for one)."""
    for recorded in _RECORDERS:
        recorded["data"][key] = sha256
    if DATA.get(key) != sha256:
        DATA[key] = sha256
        _update_record()


def note_model(ref: str, kind: str = "hf") -> None:
    """Remember a model this process uses: a folder or hub id ('hf'), or 'model @ endpoint' ('llm')."""
    if kind not in MODEL_KINDS:
        raise ValueError(f"model kind must be one of {MODEL_KINDS}, not {kind!r}")
    ref = str(ref)
    for recorded in _RECORDERS:
        recorded["models"][ref] = kind
    if MODELS.get(ref) != kind:
        MODELS[ref] = kind
        _update_record()


@contextlib.contextmanager
def recording():
    """Collect the data files and models noted inside the block, as {'data': {...}, 'models': {...}} (also when the
    process had noted them before), so a cached result can name what it was computed from (`replay`).

    >>> with recording() as used:
    ...     note_data("demo/file", "ab12")
    >>> used
    {'data': {'demo/file': 'ab12'}, 'models': {}}
    """
    recorded = {"data": {}, "models": {}}
    _RECORDERS.append(recorded)
    try:
        yield recorded
    finally:
        _RECORDERS.remove(recorded)


def replay(recorded: dict) -> None:
    """Note again what a `recording` held: a result read from a cache names the data and models it came from."""
    for key, sha256 in recorded.get("data", {}).items():
        note_data(key, sha256)
    for ref, kind in recorded.get("models", {}).items():
        note_model(ref, kind)


def used_data() -> dict[str, str]:
    """Manifest keys and sha256s of every file used so far in this process."""
    return dict(sorted(DATA.items()))


def used_models() -> dict[str, str]:
    """Every model noted so far in this process: reference -> kind."""
    return dict(sorted(MODELS.items()))


def record() -> dict:
    """{'data': used_data(), 'models': used_models()}: what a run record file holds."""
    return {"data": used_data(), "models": used_models()}


def write_record(path: str | os.PathLike) -> None:
    """Write `record()` to `path` atomically (a reader never sees half a file)."""
    write_json(path, record(), indent=1)


def read_record(path: str | os.PathLike) -> dict:
    """A run record file as {'data': {...}, 'models': {...}} (both empty when the file is absent)."""
    path = Path(path)
    if not path.is_file():
        return {"data": {}, "models": {}}
    stored = json.loads(path.read_text())
    return {"data": dict(stored.get("data", {})), "models": dict(stored.get("models", {}))}


def _update_record() -> None:
    if os.environ.get(RECORD_ENV):
        write_record(os.environ[RECORD_ENV])


PACKAGES = ("torch", "transformers", "sentence-transformers", "scikit-learn", "numpy", "pandas", "scipy",
            "statsmodels", "nltk", "openai")  # versions that are part of every notebook's inputs (and derived caches')


def package_versions(names=PACKAGES) -> dict[str, str]:
    """Installed version of each package ('absent' when not installed)."""
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def fixtures_hash(root: Path | None = None) -> str:
    """sha256 (16 hex) over data/fixtures: every file's path below it and bytes.

    >>> import tempfile; root = Path(tempfile.mkdtemp()); _ = (root / "gold.csv").write_text("a,b")
    >>> before = fixtures_hash(root); _ = (root / "gold.csv").write_text("a,c"); before != fixtures_hash(root)
    True
    """
    from .hashing import digest

    root = REPO_ROOT / "data" / "fixtures" if root is None else root
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return digest(*(x for p in files for x in (p.relative_to(root).as_posix(), p.read_bytes())), length=16)


def code_hash(path: str | os.PathLike | None = None, *, text: str | None = None) -> str:
    """sha256 (hex) of a notebook's code cells, in order, each without comments, trailing spaces and blank lines
    (`cell_code`): the notebook file at `path`, or its JSON `text`. A comment edit re-runs nothing.

    >>> import nbformat
    >>> def nb(*cells):
    ...     return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# prose"),
    ...                                                           *map(nbformat.v4.new_code_cell, cells)]))
    >>> code_hash(text=nb("x = 1")) == hashlib.sha256(b"x = 1\\x00").hexdigest()
    True
    >>> code_hash(text=nb("# why\\nx = 1  # note\\n\\n")) == code_hash(text=nb("x = 1")) != code_hash(text=nb("x = 2"))
    True
    """
    text = Path(path).read_text(encoding="utf-8") if text is None else text
    nb = json.loads(text)
    if nb.get("nbformat") != 4:  # an older format: nbformat converts it (slow to import: ~1-2 s, jsonschema)
        import nbformat

        nb = nbformat.reads(text, as_version=4)
    h = hashlib.sha256()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"]
            h.update(cell_code("".join(source) if isinstance(source, list) else source).encode())
            h.update(b"\x00")
    return h.hexdigest()


def cell_code(source: str) -> str:
    """A code cell without its comments, trailing spaces and blank lines (`codehash.code_text`); a cell Python's
    tokenizer cannot read (IPython syntax such as `!ls`) as it is.

    >>> cell_code("# load\\nx = 1  # one\\n\\n%time f()"), cell_code("!ls '")
    ('x = 1\\n%time f()', "!ls '")
    """
    from .codehash import code_text

    try:
        return code_text(source, docstrings=[])
    except (SyntaxError, tokenize.TokenError):
        return source


def notebook_code_hash(notebook: str) -> str | None:
    """`code_hash` of the notebook named `notebook` as a kernel runs it: the file in $JPY_SESSION_NAME when it
    is that notebook, else notebooks/<notebook>.ipynb of the checkout; None when neither exists (a script)."""
    path = notebook_file(notebook)
    return None if path is None else code_hash(path)


def notebook_file(notebook: str) -> Path | None:
    """The file of the notebook named `notebook` as a kernel runs it: the file in $JPY_SESSION_NAME when it is that
    notebook, else notebooks/<notebook>.ipynb of the checkout; None when neither exists (a script)."""
    candidates = []
    session = os.environ.get(SESSION_ENV)
    if session and Path(session).stem == notebook:
        candidates.append(user_path(session))
    candidates.append(REPO_ROOT / "notebooks" / f"{notebook}.ipynb")
    return next((path for path in candidates if path.is_file()), None)
