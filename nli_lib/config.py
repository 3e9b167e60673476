"""Paths, secrets and run settings shared by every layer.

Everything configurable is an environment variable or a profile key (`nli_lib.profile`), never a hard-coded path:

    NLI_CACHE_DIR    on-disk caches (data downloads, trained models, model/LLM call cache); default <repo>/.cache
                     (outside a checkout: ~/.cache/nli-companion)
    NLI_DATA_MIRROR  a directory laid out as github/<owner>/<repo>/<path> (the mirror's own README and
                     SHA256SUMS.tsv describe it; `nli_lib.data.fetch` reads it); optional
    NLI_OUTPUT_DIR   where tables/ and figures/ are written; default the repository root
    NLI_ATOMS_GOLD   a gold atom-label CSV for the atoms notebooks; optional
    NLI_PROFILE      profile name ('offline', the default, or 'paper': nli_lib/resources/profiles/) or YAML path
    NLI_USER_CWD     the directory relative paths resolve against (see below); rarely set by hand

The repository checkout (notebooks/, tables/, figures/, runs/) and the package are told apart: the package's
own files (manifest, paper values, profiles) ship inside it (`nli_lib.resources`), so an installed copy works
anywhere; `REPO_ROOT` is the checkout the notebooks and outputs live in (`find_checkout`).

Where a relative path resolves. A user types `NLI_DATA_MIRROR=../shared/data ./run_all.sh` or
`--profile my.yaml` relative to the directory they are in, but notebook kernels run in notebooks/
(papermill and JupyterLab both start them there), so `Path(value).resolve()` in a kernel would look in
notebooks/../shared/data. Every user-supplied path therefore goes through `user_path`, which resolves a
relative value against `user_dir()`:

1. `$NLI_USER_CWD` when set. `python -m nli_lib.runner` (what `run_all.sh` runs, from the directory the
   command was typed in) sets it for every kernel, and also hands kernels these variables as absolute
   paths; scripts that change directory before calling the runner (scripts/*.sh) record it first.
2. Inside a Jupyter kernel (jupyter_client sets `$JPY_PARENT_PID` to the process that started it): the
   working directory of that process, i.e. where the user typed `jupyter lab`. The kernel's own
   directory is the notebook's folder, where nobody typed anything.
3. Otherwise the current directory (a script or a Python shell).

The choice follows the rule that a path means what it meant where it was typed; it never depends on
which notebook happens to run the code. Absolute paths and `~` are used as given.

>>> os.environ["NLI_USER_CWD"] = "/home/me/work"
>>> str(user_path("../shared/data")), str(user_path("/data/mirror"))
('/home/me/shared/data', '/data/mirror')
>>> del os.environ["NLI_USER_CWD"]
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent  # the nli_lib package: a checkout's nli_lib/ or site-packages/nli_lib
LABELS = ("entailment", "neutral", "contradiction")  # fixed 3-way label order everywhere
USER_CWD_ENV = "NLI_USER_CWD"  # directory relative user paths resolve against (set by the runner)
FAST_EXIT_ENV = "NLI_KERNEL_FAST_EXIT"  # '1': a kernel exits without Python's teardown (the runner's kernels)
PATH_ENV_VARS = ("NLI_DATA_MIRROR", "NLI_CACHE_DIR", "NLI_OUTPUT_DIR", "NLI_ATOMS_GOLD")  # user-supplied paths


def _jupyter_server_cwd() -> Path | None:
    """Working directory of the process that started this Jupyter kernel (None outside a kernel)."""
    pid = os.environ.get("JPY_PARENT_PID", "")
    if not pid.isdigit():
        return None
    try:
        import psutil

        return Path(psutil.Process(int(pid)).cwd())
    except Exception:  # noqa: BLE001 - process gone or not readable: fall back to the current directory
        return None


def user_dir() -> Path:
    """The directory relative user paths resolve against (module docstring: NLI_USER_CWD, Jupyter, cwd)."""
    recorded = os.environ.get(USER_CWD_ENV)
    if recorded:
        return Path(recorded).expanduser().resolve()
    return _jupyter_server_cwd() or Path.cwd()


def user_path(value: str | os.PathLike) -> Path:
    """An absolute path for a path the user typed: `~` expanded, relative values joined to `user_dir()`."""
    path = Path(value).expanduser()
    return (path if path.is_absolute() else user_dir() / path).resolve()


def is_checkout(folder: Path) -> bool:
    """Whether `folder` is a checkout of the companion (it holds notebooks/ and run_all.sh)."""
    return (folder / "notebooks").is_dir() and (folder / "run_all.sh").is_file()


def find_checkout() -> Path | None:
    """The repository checkout: the folder holding this nli_lib when it is one (a clone, an editable install),
    else the nearest folder at or above `user_dir()` that is one (a package installed with `pip install .`,
    used inside a clone); None outside any checkout (the library still works: its data ship inside it).

    >>> find_checkout() == PACKAGE_DIR.parent  # imported from a clone
    True
    """
    if is_checkout(PACKAGE_DIR.parent):
        return PACKAGE_DIR.parent
    here = user_dir()
    return next((folder for folder in (here, *here.parents) if is_checkout(folder)), None)


CHECKOUT = find_checkout()  # the checkout notebooks and outputs live in; None for an installed copy used elsewhere
REPO_ROOT = CHECKOUT or PACKAGE_DIR.parent  # outside a checkout: the folder holding the package (no notebooks there)


def env_path(name: str) -> Path | None:
    """The environment variable `name` as an absolute path (`user_path`), or None when unset or empty."""
    value = os.environ.get(name)
    return user_path(value) if value else None


def cache_root() -> Path:
    """$NLI_CACHE_DIR, else the checkout's .cache/, else ~/.cache/nli-companion."""
    return env_path("NLI_CACHE_DIR") or (CHECKOUT / ".cache" if CHECKOUT else Path.home() / ".cache" / "nli-companion")


def cache_dir(*parts: str) -> Path:
    """Directory under the cache root (created on demand; a folder that cannot be made raises `WriteError`)."""
    path = cache_root().joinpath(*parts)
    with writing(path):
        path.mkdir(parents=True, exist_ok=True)
    return path


class WriteError(OSError):
    """A file or folder that cannot be written (read-only, no permission, disk full), naming it and the fix."""


NO_SPACE = {errno.ENOSPC, errno.EDQUOT}  # the disk, or the user's quota, is full
NOT_WRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM}


def write_error(exc: OSError, path: str | os.PathLike) -> OSError:
    """`exc` (raised writing `path`) as a `WriteError` that says which file, why, and the fix, for a full disk or a
    folder that cannot be written; any other error as it is. The fix names the variable that moves the folder:
    NLI_CACHE_DIR under the cache root, NLI_OUTPUT_DIR under the output root.

    >>> print(write_error(OSError(errno.EROFS, "Read-only file system"), cache_root() / "parsed_data"))
    ... # doctest: +ELLIPSIS
    [Errno 30] cannot write .../parsed_data (Read-only file system), in the cache folder .... Fix: make it \
writable, or point NLI_CACHE_DIR at a folder you can write to
    >>> print(write_error(OSError(errno.ENOSPC, "No space left on device"), "/data/x.csv"))
    [Errno 28] no space left to write /data/x.csv (No space left on device). Fix: free space on that disk, or \
write to another folder
    """
    if not isinstance(exc, OSError) or exc.errno not in NO_SPACE | NOT_WRITABLE or isinstance(exc, WriteError):
        return exc
    path = Path(path)
    within, var = "", ""
    for root, name, what in ((cache_root(), "NLI_CACHE_DIR", "the cache folder"),
                             (env_path("NLI_OUTPUT_DIR") or CHECKOUT, "NLI_OUTPUT_DIR", "the output folder")):
        if root is not None and (path == root or root in path.parents):
            within, var = f", in {what} {root}", name
            break
    if exc.errno in NO_SPACE:
        fix = "free space on that disk, or " + (f"point {var} at a folder on another disk" if var else
                                                 "write to another folder")
        return WriteError(exc.errno, f"no space left to write {path} ({exc.strerror}){within}. Fix: {fix}")
    fix = "make it writable, or " + (f"point {var} at a folder you can write to" if var else "write elsewhere")
    return WriteError(exc.errno, f"cannot write {path} ({exc.strerror}){within}. Fix: {fix}")


@contextlib.contextmanager
def writing(path: str | os.PathLike, errnos: set[int] | None = None):
    """Raise a full disk or an unwritable folder met in the block as `write_error` for `path` (only the errors
    numbered in `errnos`, when given: a block that also reads may meet EACCES on another file)."""
    try:
        yield
    except OSError as exc:
        explained = write_error(exc, path) if errnos is None or exc.errno in errnos else exc
        if explained is exc:
            raise
        raise explained from exc


def mirror_dir() -> Path | None:
    """The configured offline data mirror, or None."""
    return env_path("NLI_DATA_MIRROR")


def output_dir() -> Path:
    """Root of the published tables/ and figures/ (what readers, `stale` and the runner use): $NLI_OUTPUT_DIR, the
    checkout, else `user_dir()`."""
    return env_path("NLI_OUTPUT_DIR") or CHECKOUT or user_dir()


RUNNER_KERNEL_ENV = "NLI_RUN_ID"  # set by the runner in the environment of every kernel it starts
INTERACTIVE_OUTPUTS = ("runs", "interactive")  # under the checkout: where other kernels and scripts publish


def write_dir() -> Path:
    """Root under which this process publishes tables/ and figures/: $NLI_OUTPUT_DIR when set; the checkout in a
    kernel the runner started (a full run: a quick run's kernels get $NLI_OUTPUT_DIR); anywhere else (a JupyterLab
    kernel, a script, a test) runs/interactive/ of the checkout, so only a full run by the runner ever writes the
    committed tables/ and figures/. Outside a checkout: `user_dir()`.

    >>> import os
    >>> unset = not (os.environ.get("NLI_OUTPUT_DIR") or os.environ.get(RUNNER_KERNEL_ENV) or CHECKOUT is None)
    >>> not unset or write_dir() == CHECKOUT.joinpath(*INTERACTIVE_OUTPUTS)
    True
    """
    explicit = env_path("NLI_OUTPUT_DIR")
    if explicit is not None:
        return explicit
    if CHECKOUT is None:
        return user_dir()
    return CHECKOUT if os.environ.get(RUNNER_KERNEL_ENV) else CHECKOUT.joinpath(*INTERACTIVE_OUTPUTS)


_SECRET_WORDS = {"key", "apikey", "secret", "password", "passwd", "pwd", "passphrase", "token", "credential",
                 "credentials", "authorization", "auth", "bearer", "cookie", "cookies"}
# Strings that look like credentials wherever they appear: provider key prefixes, and the userinfo of a URL.
_SECRET_VALUE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|xox[abposr]-[A-Za-z0-9-]{8,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{20,})"
    r"|(?<=://)[^/@\s:]*:[^/@\s]+(?=@)"  # https://user:PASSWORD@host
    r"|(?<=://)[^/@\s:?#]+(?=@)"  # https://TOKEN@host: a user without a password is often the key itself
)
# A URL's query parameter (name, value); a value is a credential when the name is one (`is_secret_name`: api_key=,
# key=, token=, access_token=, auth=, password=, ...).
_QUERY_PARAM = re.compile(r"(?<=[?&;])([A-Za-z0-9_.~-]+)=([^&#\s]+)")


def is_secret_name(name: str) -> bool:
    """Whether a parameter / environment variable name denotes a secret ('api_key', 'HF_TOKEN', 'auth',
    'cookie'); names ending in '_env' only name the variable that holds one ('api_key_env'), and
    'max_tokens' is a count, not a token.

    >>> [is_secret_name(n) for n in ("api_key", "OPENAI_API_KEY", "hf_token", "auth", "passphrase", "cookie")]
    [True, True, True, True, True, True]
    >>> [is_secret_name(n) for n in ("api_key_env", "max_tokens", "author", "base_url")]
    [False, False, False, False]
    """
    words = [w for w in re.split(r"[^a-z0-9]+", str(name).lower()) if w]
    return bool(words) and words[-1] != "env" and any(w in _SECRET_WORDS for w in words)


def secret_in_value(value: str) -> str | None:
    """What makes a string look like it holds a credential ('a key (sk-…)', 'a password in the URL'), or None.

    >>> secret_in_value("https://user:sk-abc123456789@host/v1"), secret_in_value("hf_abcdefghijklmnop")
    ('a password in the URL', 'a key (hf_…)')
    >>> secret_in_value("https://TOKEN@host/v1"), secret_in_value("https://host/v1?api_key=abc&x=1")
    ('a user name or token in the URL (before the @)', "a credential in the URL's query (api_key=…)")
    >>> secret_in_value("http://localhost:8000/v1") is None and secret_in_value("sk-learn") is None
    True
    >>> secret_in_value("http://host/v1?model=m&keyword=x") is None
    True
    """
    m = _SECRET_VALUE.search(str(value))
    if m is None:
        query = next((q for q in _QUERY_PARAM.finditer(str(value)) if is_secret_name(q.group(1))), None)
        return None if query is None else f"a credential in the URL's query ({query.group(1)}=…)"
    text = m.group(0)
    if str(value)[max(0, m.start() - 3):m.start()] == "://":
        return "a password in the URL" if ":" in text else "a user name or token in the URL (before the @)"
    return f"a key ({text[:3]}…)"


def _secret_values() -> list[str]:
    """Values of secret-looking environment variables (long enough to be keys), longest first."""
    values = {v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def scrub_secrets(value, _secrets: list[str] | None = None):
    """Copy of a (nested) parameter structure that is safe to print or store: entries whose key names a
    secret are dropped, strings holding the value of a secret environment variable are masked, and so
    are key-like strings (sk-…, hf_…) and URL passwords.

    >>> scrub_secrets({"seed": 0, "llm": {"api_key": "sk-x", "api_key_env": "OPENAI_API_KEY", "max_tokens": 9}})
    {'seed': 0, 'llm': {'api_key_env': 'OPENAI_API_KEY', 'max_tokens': 9}}
    >>> scrub_secrets({"base_url": "https://me:sk-0123456789abc@host/v1"})
    {'base_url': 'https://***@host/v1'}
    >>> scrub_secrets(["https://TOKEN@host/v1", "https://host/v1?model=m&key=abc"])
    ['https://***@host/v1', 'https://host/v1?model=m&key=***']
    """
    secrets = _secret_values() if _secrets is None else _secrets
    if isinstance(value, dict):
        return {k: scrub_secrets(v, secrets) for k, v in value.items() if not is_secret_name(k)}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_secrets(v, secrets) for v in value)
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        value = _SECRET_VALUE.sub("***", value)
        value = _QUERY_PARAM.sub(lambda q: f"{q.group(1)}=***" if is_secret_name(q.group(1)) else q.group(0), value)
    return value


@dataclass(frozen=True)
class RunInfo:
    """Provenance every reported number carries."""

    tier: str  # "offline" (local models, rule-based generators) or "paper" (hub models / LLM endpoint)
    model: str  # model id or local name that produced the number
    seed: int = 0  # random seed of the run

    def label(self) -> str:
        """Short label for table captions, e.g. 'offline · minilm-esnli'."""
        return f"{self.tier} · {self.model}"
