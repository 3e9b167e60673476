"""Paths, profiles and run settings shared by every layer.

Everything configurable is an environment variable or a profile key, never a hard-coded path:

    NLI_CACHE_DIR    on-disk caches (data downloads, trained models, model/LLM call cache); default <repo>/.cache
    NLI_DATA_MIRROR  a directory laid out as github/<owner>/<repo>/<path> (see data/README.md); optional
    NLI_OUTPUT_DIR   where tables/ and figures/ are written; default the repository root
    NLI_PROFILE      profile name or YAML path (profiles/offline.yaml by default)

>>> load_profile("offline")["tier"]
'offline'
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
LABELS = ("entailment", "neutral", "contradiction")  # fixed 3-way label order everywhere


def cache_dir(*parts: str) -> Path:
    """Directory under the cache root (created on demand)."""
    root = Path(os.environ.get("NLI_CACHE_DIR", REPO_ROOT / ".cache")).expanduser()
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def mirror_dir() -> Path | None:
    """The configured offline data mirror, or None."""
    value = os.environ.get("NLI_DATA_MIRROR")
    return Path(value).expanduser().resolve() if value else None


def output_dir() -> Path:
    """Root under which tables/ and figures/ are written."""
    return Path(os.environ.get("NLI_OUTPUT_DIR", REPO_ROOT)).expanduser()


def load_profile(name_or_path: str | None = None) -> dict:
    """Read a profile YAML (by name from profiles/ or by path). Keys are notebook parameters."""
    name_or_path = name_or_path or os.environ.get("NLI_PROFILE", "offline")
    path = Path(name_or_path)
    if not path.suffix:
        path = REPO_ROOT / "profiles" / f"{name_or_path}.yaml"
    with open(path) as fh:
        return yaml.safe_load(fh) or {}


_SECRET_WORDS = {"key", "apikey", "secret", "password", "passwd", "token", "credential", "credentials",
                 "authorization", "bearer"}


def is_secret_name(name: str) -> bool:
    """Whether a parameter / environment variable name denotes a secret ('api_key', 'HF_TOKEN'); names ending
    in '_env' only name the variable that holds one ('api_key_env'), and 'max_tokens' is a count, not a token.

    >>> [is_secret_name(n) for n in ("api_key", "OPENAI_API_KEY", "hf_token", "api_key_env", "max_tokens")]
    [True, True, True, False, False]
    """
    words = [w for w in re.split(r"[^a-z0-9]+", str(name).lower()) if w]
    return bool(words) and words[-1] != "env" and any(w in _SECRET_WORDS for w in words)


def _secret_values() -> list[str]:
    """Values of secret-looking environment variables (long enough to be keys), longest first."""
    values = {v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def scrub_secrets(value, _secrets: list[str] | None = None):
    """Copy of a (nested) parameter structure that is safe to print or store: entries whose key names a
    secret are dropped, and any string holding the value of a secret environment variable is masked.

    >>> scrub_secrets({"seed": 0, "llm": {"api_key": "sk-x", "api_key_env": "OPENAI_API_KEY", "max_tokens": 9}})
    {'seed': 0, 'llm': {'api_key_env': 'OPENAI_API_KEY', 'max_tokens': 9}}
    """
    secrets = _secret_values() if _secrets is None else _secrets
    if isinstance(value, dict):
        return {k: scrub_secrets(v, secrets) for k, v in value.items() if not is_secret_name(k)}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_secrets(v, secrets) for v in value)
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
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
