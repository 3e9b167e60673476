"""Where a model's files come from, what identifies them, and loading errors that say what to do.

A model is a local folder or a Hugging Face hub id. Its identity (`weights_fingerprint`) is part of every
cache key that holds its outputs:

- a local folder: sha256 over the full content of every file that can change an output (config, weights,
  tokenizer files, sentence-transformers module configs, in sub-folders too); docs, licences, hidden files and
  weights of other frameworks (TF .h5, Flax .msgpack, ONNX, ...) are left out. Hashes are memoised by file
  state on disk (`nli_lib.filehash`), so a warm run stats the files instead of reading them.
- a hub id: the id and the commit its revision resolves to (online: the hub's answer; offline: the local
  HF cache's refs/<revision>). The commit is then passed as `revision=` when config, tokenizer and weights load,
  so the files used are the files named in the key.

    >>> import json, tempfile; d = Path(tempfile.mkdtemp()) / "tiny"; d.mkdir()
    >>> _ = (d / "config.json").write_text(json.dumps({"id2label": {"0": "a"}})); _ = (d / "README.md").write_text("x")
    >>> weights_fingerprint(str(d))
    'tiny@sha256:973ddb1449c4c581'

Every failure to find or load a model is a `ModelLoadError` naming the model, the cause and the fix.
"""
from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..filehash import sha256_files
from ..hashing import digest

# files that never change what a torch model or its tokenizer computes
_SKIP_SUFFIXES = {".md", ".h5", ".msgpack", ".onnx", ".ot", ".tflite", ".mlmodel", ".gguf", ".pt2", ".png", ".jpg"}
_SKIP_NAMES = {"LICENSE", "LICENCE", "NOTICE"}
_SKIP_DIRS = {"onnx", "openvino", "coreml", "tf", "flax"}
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_RESOLVED: dict[tuple[str, str], str] = {}  # (hub id, revision) -> commit the hub named, for this process


class ModelLoadError(RuntimeError):
    """A model cannot be found or loaded. The message names the model, the cause and the fix."""


@dataclass(frozen=True)
class ModelSource:
    """A model's files: a local folder, or a hub id pinned to one commit."""

    name: str  # as given: a folder path or a hub id
    local_dir: Path | None  # the folder, for a local model
    commit: str | None  # the resolved hub commit, for a hub model

    @property
    def location(self) -> str:
        """What `from_pretrained` is given: the folder or the hub id."""
        return str(self.local_dir) if self.local_dir is not None else self.name

    def pretrained_kwargs(self) -> dict:
        """`revision=` (the commit) and `cache_dir=` for a hub model; nothing for a folder."""
        return {} if self.local_dir is not None else {"revision": self.commit, "cache_dir": str(hub_cache_dir())}


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache, from the environment as it is now (HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    home = os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface"
    return Path(home).expanduser() / "hub"


def hub_offline() -> bool:
    """Whether the hub must not be contacted (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE set to 1, true, yes, on)."""
    return any(os.environ.get(v, "").strip().upper() in ("1", "ON", "YES", "TRUE")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def looks_like_path(name: str) -> bool:
    """Whether `name` can only be a folder (not a hub id 'org/name').

    >>> [looks_like_path(n) for n in ("roberta-large-mnli", "org/model", "./model", "/abs/model", "a/b/c", "~/m")]
    [False, False, True, True, True, True]
    """
    return not _HUB_ID.match(name) or name.startswith(".")


def cached_commit(model_id: str, revision: str = "main") -> str | None:
    """The commit `revision` of `model_id` resolves to in the local HF cache (refs/<revision>), or None."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(model_id, "config.json", cache_dir=str(hub_cache_dir()), revision=revision)
    return Path(found).parent.name if isinstance(found, str) else None


def hub_commit(model_id: str, revision: str | None = None) -> str:
    """The commit of `model_id` at `revision` (default 'main'): asked of the hub when online, else read from the
    local HF cache. Raises ModelLoadError when neither knows it."""
    revision = revision or "main"
    local = cached_commit(model_id, revision)  # read each time: a download may have moved refs/<revision>
    if hub_offline():
        if local is not None:
            return local
        raise ModelLoadError(
            f"model {model_id!r} (revision {revision}) is neither a local folder nor in the Hugging Face cache "
            f"{hub_cache_dir()}, and the hub is not reachable in offline mode (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE "
            f"is set). Fix: download it once with network (`hf download {model_id}`), or set the profile's model "
            f"to a local folder (if you meant a folder: {Path(model_id).resolve()} does not exist).")
    if _COMMIT.match(revision):  # already a commit: nothing to resolve
        return revision
    if (model_id, revision) in _RESOLVED:
        return _RESOLVED[model_id, revision]
    from huggingface_hub import model_info
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        commit = model_info(model_id, revision=revision, timeout=20).sha
    except RevisionNotFoundError as exc:
        raise ModelLoadError(f"model {model_id!r} has no revision {revision!r} on the hub; fix the revision") from exc
    except GatedRepoError as exc:
        raise ModelLoadError(f"model {model_id!r} is gated: accept its licence on the hub and log in "
                             f"(`hf auth login`), or point the profile at a local copy") from exc
    except RepositoryNotFoundError as exc:
        raise ModelLoadError(f"model {model_id!r} is not on the hub (nor a local folder: {Path(model_id).resolve()} "
                             f"does not exist); check the name or the folder path") from exc
    except Exception as exc:  # noqa: BLE001 - network failure: the local copy is used, and said so
        if local is None:
            raise ModelLoadError(
                f"model {model_id!r}: the hub is unreachable ({type(exc).__name__}: {exc}) and there is no cached "
                f"copy in {hub_cache_dir()}. Fix: check the network or proxy, or set the profile's model to a "
                f"local folder.") from exc
        warnings.warn(f"model {model_id!r}: the hub is unreachable ({type(exc).__name__}); using the cached "
                      f"commit {local} of revision {revision}", RuntimeWarning, stacklevel=2)
        commit = local
    if not commit:
        raise ModelLoadError(f"model {model_id!r}: the hub returned no commit for revision {revision!r}")
    _RESOLVED[model_id, revision] = commit
    return commit


def resolve_model(path_or_id: str | os.PathLike, revision: str | None = None) -> ModelSource:
    """The `ModelSource` of a folder or hub id; raises ModelLoadError when it cannot exist here.

    >>> resolve_model("./no/such/folder")
    Traceback (most recent call last):
    ...
    nli_lib.models.loading.ModelLoadError: model folder ./no/such/folder does not exist ...
    """
    name = str(path_or_id)
    path = Path(name).expanduser()
    if path.is_dir():
        return ModelSource(name, path, None)
    if path.exists():
        raise ModelLoadError(f"model {name!r} is a file, not a model folder; point it at the folder holding "
                             f"config.json")
    if looks_like_path(name) or isinstance(path_or_id, os.PathLike):
        raise ModelLoadError(
            f"model folder {name} does not exist (resolved to {path.resolve()}). Fix: check the path; a relative "
            f"path is read from the directory you ran the command in.")
    return ModelSource(name, None, hub_commit(name, revision))


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder that can change its outputs (sorted, relative order stable)."""
    out = []
    for f in sorted(folder.rglob("*")):
        rel = f.relative_to(folder).parts
        if any(p.startswith(".") for p in rel) or any(p in _SKIP_DIRS for p in rel[:-1]):
            continue
        if f.suffix.lower() in _SKIP_SUFFIXES or f.name.split(".")[0].upper() in _SKIP_NAMES or not f.is_file():
            continue
        out.append(f)
    return out


def folder_fingerprint(folder: Path) -> str:
    """'<folder name>@sha256:<16 hex>' over the relative names and full content of `model_files(folder)`."""
    files = model_files(folder)
    if not files:
        raise ModelLoadError(f"model folder {folder} holds no model files (config.json, weights, tokenizer)")
    lines = (
        f"{f.relative_to(folder).as_posix()}\t{sha}\n" for f, sha in zip(files, sha256_files(files, remember=True))
    )
    return f"{folder.name}@sha256:{digest(*lines, length=16)}"


def weights_fingerprint(path_or_id: str | os.PathLike, revision: str | None = None) -> str:
    """Identity of a model for cache keys: a folder's content hash, or '<hub id>@<commit>'."""
    return source_fingerprint(resolve_model(path_or_id, revision))


def source_fingerprint(source: ModelSource) -> str:
    """`weights_fingerprint` of a resolved model."""
    if source.local_dir is not None:
        return folder_fingerprint(source.local_dir)
    return f"{source.name}@{source.commit}"


_DEPENDENCIES = {"sentencepiece": "sentencepiece", "protobuf": "protobuf", "google.protobuf": "protobuf",
                 "tiktoken": "tiktoken", "blobfile": "blobfile"}


def load_pretrained(auto_class, source: ModelSource, what: str = "model", **kwargs):
    """`auto_class.from_pretrained` for `source` (pinned commit), failures turned into ModelLoadError.

    `what` names the part in messages ('tokenizer', 'weights', 'config').
    """
    try:
        return auto_class.from_pretrained(source.location, **source.pretrained_kwargs(), **kwargs)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one error type with a fix
        raise load_error(source.name, what, exc, source.local_dir) from exc


def _needs_sentencepiece(folder: Path | None) -> bool:
    """A folder with a SentencePiece model file (spiece.model, sentencepiece.bpe.model, ...) but no package."""
    import importlib.util

    return folder is not None and importlib.util.find_spec("sentencepiece") is None and \
        any(folder.glob("*.model"))


def load_error(name: str, what: str, exc: BaseException, folder: Path | None = None) -> ModelLoadError:
    """A ModelLoadError for a failure to load `what` of model `name`, with the fix for the known causes.

    >>> str(load_error("org/m", "tokenizer", ImportError("requires the protobuf library")))[:80]
    "the tokenizer of model 'org/m' needs the Python package 'protobuf', which is not"
    """
    text = f"{type(exc).__name__}: {exc}"
    missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    if _needs_sentencepiece(folder):  # transformers then falls back to tiktoken and names that instead
        return ModelLoadError(f"the {what} of model {name!r} is a SentencePiece model and needs the Python package "
                              f"'sentencepiece', which is not installed. Fix: pip install sentencepiece protobuf  "
                              f"({text.splitlines()[0][:300]})")
    for module, package in _DEPENDENCIES.items():
        if missing == module or module in text.lower():
            return ModelLoadError(f"the {what} of model {name!r} needs the Python package {package!r}, which is not "
                                  f"installed. Fix: pip install {package}  ({text.splitlines()[0][:300]})")
    if hub_offline() and ("offline" in text.lower() or "connect" in text.lower()):
        return ModelLoadError(f"the {what} of model {name!r} is not in the Hugging Face cache {hub_cache_dir()} and "
                              f"offline mode is on. Fix: download it once with network, or use a local folder "
                              f"({text.splitlines()[0][:300]})")
    return ModelLoadError(f"could not load the {what} of model {name!r}: {text[:600]}. Fix: check that the folder "
                          f"or hub id holds a complete transformers model")
