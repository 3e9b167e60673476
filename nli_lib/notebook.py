"""What the first and last cells of every notebook call.

    >>> nb = start("50_taxinli_dataset", dict(tier="offline", seed=0, quick=True))    # doctest: +SKIP
    >>> nb.out.table(df, "table-2", ref="taxinli-table-2")                            # doctest: +SKIP
    >>> nb.finish()          # call summary, failure check, then publishes the outputs # doctest: +SKIP

`finish` prints the call summary of every model the run used (requests, cache hits, calls, retries, errors,
unparsable answers; `nli_lib.calls`), raises `TooManyFailures` naming the model when errors + unparsable
answers exceed the profile's `max_failure_rate` (default 0.02) of its requests, and only then publishes the
run's tables, figures and scorecard entries (`Outputs.publish`): a failed or interrupted notebook changes
no published output.

`start` seeds every RNG, selects a headless matplotlib backend when run by papermill, and keeps the
run's parameters so every table/figure sidecar records them (API keys are never among them: the
profile names the environment variable, not the key).
"""
from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import calls
from .cache import default_cache
from .config import RunInfo
from .outputs import Outputs


@dataclass
class NotebookSession:
    """Settings and writers of one notebook run."""

    name: str  # notebook stem
    params: dict  # papermill parameters (profile + quick flag)
    out: Outputs  # table/figure writer with provenance sidecars
    models: dict = field(default_factory=dict)  # models loaded by this run, by spec
    calls_before: dict = field(default_factory=calls.snapshot)  # call ledger when the session began

    @property
    def quick(self) -> bool:
        return bool(self.params.get("quick"))

    @property
    def seed(self) -> int:
        return int(self.params.get("seed", 0))

    @property
    def tier(self) -> str:
        return self.params.get("tier", "offline")

    def run_info(self, model: str) -> RunInfo:
        return RunInfo(tier=self.tier, model=model, seed=self.seed)

    def nli_model(self, spec: str | None = None):
        """The profile's NLI model (loaded once per run); `spec` overrides, e.g. 'tfidf-logreg'."""
        from .models import get_nli_model

        spec = spec or self.params.get("nli_model", "offline:minilm-esnli")
        if spec not in self.models:
            kwargs = {"epochs": int(self.params.get("nli_epochs", 2))} if spec.startswith("offline") else {}
            self.models[spec] = get_nli_model(spec, quick=self.quick, seed=self.seed, **kwargs)
        return self.models[spec]

    def finish(self) -> pd.DataFrame:
        """Print the call summary, fail if a model failed too often, then publish the outputs.

        Returns the call summary (one row per model/endpoint). Raises `calls.TooManyFailures` (naming the
        endpoint and its counts) when a model's errors + unparsable answers exceed `max_failure_rate` of its
        requests; the outputs then stay unpublished.
        """
        summary = calls.summary(since=self.calls_before)
        print("call cache:", default_cache().path)
        if len(summary):
            print("model calls (requests, cache hits, calls sent, retries, errors, unparsable answers, stand-in "
                  "non-answers):")
            print(summary.to_string())
        else:
            print("model calls: none")
        calls.check(calls.max_failure_rate(self.params), since=self.calls_before)
        self.out.publish()
        print(f"{len(self.out.written)} outputs published:")
        for path in self.out.written:
            print("  ", path)
        return summary


PARAM_NAMES = ("tier", "seed", "quick", "profile_name", "nli_model", "nli_epochs", "baselines", "embedder", "llm",
               "extra_models", "paper_systems")


def start(name: str, params: dict) -> NotebookSession:
    """Seed RNGs, configure plotting, and return the session object for a notebook.

    `params` may be the notebook's `globals()`: only profile keys (PARAM_NAMES) are taken from it.
    """
    params = {k: params[k] for k in PARAM_NAMES if k in params}
    seed = int(params.get("seed", 0))
    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:  # not imported just to seed it (~1.5 s): training and noise draws seed their own
        sys.modules["torch"].manual_seed(seed)
    if os.environ.get("MPLBACKEND") == "Agg":
        import matplotlib

        matplotlib.use("Agg")
    out = Outputs(name, params=params, tier=params.get("tier", "offline"), seed=seed)  # scrubs keys from params
    session = NotebookSession(name=name, params=out.params, out=out)  # printed parameters never carry a key
    print(f"notebook {name} · tier {session.tier} · seed {seed} · quick={session.quick}")
    return session
