"""What the first and last cells of every notebook call.

Every notebook's parameters cell holds three names, and the next cell starts the session:

    profile = "offline"   # a shipped profile's name (offline, paper) or the path of a YAML file
    quick = False         # small samples everywhere
    seed = None           # None: the profile's seed

    >>> nb = start(globals())                                                            # doctest: +SKIP
    >>> nb.out.table(df, "table-2", ref="taxinli-table-2")                              # doctest: +SKIP
    >>> nb.finish()          # call summary, failure check, then publishes the outputs   # doctest: +SKIP

`start` loads and validates the profile (`nli_lib.profile`; the runner passes its absolute path), seeds
every RNG, selects a headless matplotlib backend when run by papermill, and keeps the resolved profile
values so every table/figure sidecar records them (API keys are never among them: the profile names the
environment variable, not the key). The notebook's name is derived, never typed: from
`$JPY_SESSION_NAME`, the notebook path that jupyter-server (JupyterLab) and the runner give each kernel;
VS Code's `__vsc_ipynb_file__`; or `name=...`.

`finish` prints the call summary of every model the run used (requests, cache hits, calls, retries, errors,
unparsable answers; `nli_lib.calls`), raises `TooManyFailures` naming the model when errors + unparsable
answers exceed the profile's `max_failure_rate` (default 0.02) of its requests, and only then publishes the
run's tables, figures and scorecard entries (`Outputs.publish`): a failed or interrupted notebook changes
no published output.
"""
from __future__ import annotations

import os
import random
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import calls, figures, phases
from .cache import default_cache
from .config import FAST_EXIT_ENV, RUNNER_KERNEL_ENV
from .context import RunContext
from .outputs import Outputs
from .profile import ProfileError, load_profile
from .provenance import SESSION_ENV
from .runguard import bind_kernel_to_run

SCRATCH = "scratch"  # notebook name when none can be derived (outputs go to tables/scratch/)


@dataclass(kw_only=True)
class NotebookSession(RunContext):
    """Settings and writers of one notebook run: a `RunContext` (what paper functions take) with its outputs."""

    name: str  # notebook stem
    out: Outputs  # table/figure writer with provenance sidecars
    calls_before: dict = field(default_factory=calls.snapshot)  # call ledger when the session began
    _used: list = field(default_factory=list, repr=False)  # models handed out by nli_model since the last save
    lineup: list = field(default_factory=list)  # the models this notebook's outputs name by default (`uses`)
    _told: set = field(default_factory=set, repr=False)  # scorecard entries a sentence has set beside the paper

    def inference_ran(self) -> dict:
        """Model name -> the inference settings each loaded Hugging Face model ran with (`HFClassifier.ran`),
        for the sidecars of the outputs that name it; the CPU's scoring streams are left out (they change the
        speed, not a number, and differ between machines)."""
        return {m.name: {k: v for k, v in m.ran.items() if k != "streams"}
                for m in self.models.values() if isinstance(getattr(type(m), "ran", None), property)}

    def save(self, obj, name: str, models=None, kind: str | None = None, **fields) -> None:
        """Save a table (DataFrame), figure (matplotlib) or record set declared in the outputs catalog
        (`nli_lib.catalog`): its reference and caption come from the declaration, `fields` fill the caption's
        `{placeholders}` (and those of a declared name, for outputs saved once per model), and quick runs get
        the quick-sample note. `kind="records"` picks the record set where a table and a record set share a
        name. Returns None, so a cell ending in `nb.save(...)` prints nothing.

        `models` (the models the output's numbers come from, listed in its sidecar) need not be given: it is
        then the line-up the notebook declared once (`uses`), or, with none declared, `used_models(obj)`: the
        table's own `model` column and the models `nli_model` handed out since the last save. A model-free
        output (`Outputs.data_only`, tier "data") names none unless told.

        >>> nb.save(table3, "table-3", source="gold")        # doctest: +SKIP
        """
        from .catalog import spec as declared

        if models is None:
            models = [] if self.out.tier == "data" else list(self.lineup) or self.used_models(obj)
        models = [m if isinstance(m, str) else m.name for m in models]
        self._used.clear()
        self.out.inference.update(self.inference_ran())
        out_spec = declared(self.name, name, kind=kind or ("figure" if hasattr(obj, "savefig") else None))
        caption, file_name = out_spec.caption_for(self.quick, **fields), out_spec.file_name(**fields)
        if out_spec.kind == "figure":
            figures.demonstration_note(obj, str(fields.get("demo") or ""))  # the caption's warning, in the image
            self.out.figure(obj, file_name, ref=out_spec.ref, models=models, caption=caption, **out_spec.extra)
        elif out_spec.kind == "records":
            self.out.records(obj, file_name, ref=out_spec.ref, filters=out_spec.filters_for(obj.columns),
                             text=out_spec.text, models=models, caption=caption, **out_spec.extra)
        else:
            self.out.table(obj, file_name, ref=out_spec.ref, models=models, caption=caption,
                           index=out_spec.index, **out_spec.extra)

    def nli_model(self, spec=None):
        """`RunContext.nli_model`, remembering the model as used by the next output saved (`used_models`)."""
        model = super().nli_model(spec)
        if model.name not in self._used:
            self._used.append(model.name)
        return model

    def uses(self, models) -> None:
        """Declare the models (names, or loaded models) this notebook's outputs come from: every output saved
        afterwards without `models=` names them in its sidecar (outside `Outputs.data_only`).

        >>> nb.uses([model, rewriter])      # then nb.save(table, "table-5") lists both   # doctest: +SKIP
        """
        self.lineup = [m if isinstance(m, str) else m.name for m in models]

    def labelled(self, frame: pd.DataFrame, model=None, **columns) -> pd.DataFrame:
        """`frame` with `columns`, then its tier (the tier its outputs are saved under) and, given one, the model
        (a name or a loaded model) as the last columns: what every row of a companion table carries.

        >>> s = NotebookSession.__new__(NotebookSession); s.out = Outputs.__new__(Outputs); s.out.tier = "offline"
        >>> s.labelled(pd.DataFrame({"ftc": [0.5]}), "minilm-esnli", reference="CAD").columns.tolist()
        ['ftc', 'reference', 'tier', 'model']
        """
        model = {} if model is None else {"model": model if isinstance(model, str) else model.name}
        return frame.assign(**columns, tier=self.out.tier, **model)

    def used_models(self, obj=None) -> list[str]:
        """The models behind an output about to be saved: the distinct values of a table's `model` column (in
        order of appearance; "data" rows left out), then the models `nli_model` handed out since the last save.

        >>> s = NotebookSession.__new__(NotebookSession); s._used = ["minilm-esnli"]
        >>> s.used_models(pd.DataFrame({"model": ["tfidf-logreg", "data", "tfidf-logreg"]}))
        ['tfidf-logreg', 'minilm-esnli']
        """
        named = []
        if isinstance(obj, pd.DataFrame) and "model" in obj.columns:
            named = [str(m) for m in pd.unique(obj["model"].dropna()) if str(m) != "data"]
        return list(dict.fromkeys([*named, *self._used]))

    def against_paper(self, ref: str | tuple[str, ...] | None = None, quantities=None, *, n=None, models=None,
                      limit: int = 4):
        """What this run found against what the paper found, as Markdown the notebook shows under a table or
        figure (`nli_lib.findings.against_paper`). With no `ref`: the scorecard entries recorded since the
        previous sentence (the section's own numbers, whatever the refs they are filed under); with `ref` (one
        or several): every entry recorded so far under it, and, with none, what the paper prints there
        (`findings.nothing_scored`). Optionally only `quantities` / `models`; `n` the examples behind ours
        (int or {quantity: n}).

        >>> nb.against_paper()      # under the cell that recorded Table 3's numbers     # doctest: +SKIP
        """
        from IPython.display import Markdown

        from .findings import against_paper, nothing_scored
        from .paper_values import values

        fresh = [e for e in self.out.scored if id(e) not in self._told] if ref is None else self.out.scored
        refs = (ref,) if isinstance(ref, str) else tuple(ref or ())
        entries = [e for e in fresh if (not refs or e["ref"] in refs) and (models is None or e["model"] in models)
                   and (quantities is None or e["quantity"] in set(quantities))]
        self._told.update(id(e) for e in self.out.scored)
        if not entries:
            printed = [v for v in values() if v.ref in refs]
            reasons = [v.reason for v in printed] if all(v.reason for v in printed) else []
            return Markdown(nothing_scored(refs, len(printed), reasons) if refs else
                            "_No number of ours recorded here to set beside the paper's._")
        return Markdown(against_paper(entries, quantities, n=n, limit=limit))

    def finish(self) -> pd.DataFrame:
        """Print the call summary, fail if a model failed too often, then publish the outputs.

        Returns the call summary (one row per model/endpoint). Raises `calls.TooManyFailures` (naming the
        endpoint and its counts) when a model's errors + unparsable answers exceed `max_failure_rate` of its
        requests; the outputs then stay unpublished.
        """
        summary = calls.summary(since=self.calls_before)
        print("call cache:", default_cache().path)
        if len(summary):
            print("model calls (requests, cache hits, calls sent, retries, errors, unparsable answers, answers "
                  "rejected by a later check, stand-in non-answers):")
            print(summary.to_string())
        else:
            print("model calls: none")
        from .data.nltk_data import flush_pos_tags

        flush_pos_tags()  # the POS tagger's new answers, into the call cache (the next run reads them)
        phases.write_phase_file()  # the kernel's final phase totals and peak memory, for the runner's table
        calls.check(calls.max_failure_rate(self.params), since=self.calls_before)
        self.out.publish()
        from .config import CHECKOUT

        if CHECKOUT is not None and self.out.root != CHECKOUT:
            print(f"published under {self.out.root}, not the committed tables/ and figures/ (only a full run by "
                  f"./run_all.sh writes those)")
        print(f"{len(self.out.written)} outputs published:")
        for path in self.out.written:
            print("  ", path)
        ignore_shutdown_interrupt()
        return summary


def ignore_shutdown_interrupt() -> None:
    """In a kernel the runner started, ignore SIGINT once the notebook has finished: jupyter_client interrupts a
    kernel before it asks it to shut down, and an interrupt landing in a message handler made ipykernel print
    "ERROR | KeyboardInterrupt caught in kernel." into a green run's terminal. ipykernel installs Python's
    KeyboardInterrupt handler around every message it handles (`pre_handler_hook`) and restores the one it found
    after it (`post_handler_hook`), so both hooks stop touching SIGINT and the signal stays ignored. A JupyterLab
    kernel keeps its interrupt button."""
    import signal

    if not os.environ.get(RUNNER_KERNEL_ENV):
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    kernel = getattr(sys.modules.get("IPython") and _ipython(), "kernel", None)
    if kernel is not None:
        kernel.saved_sigint_handler = signal.SIG_IGN  # what post_handler_hook restores after this cell
        kernel.pre_handler_hook = lambda: None
        kernel.post_handler_hook = lambda: None


def _ipython():
    from IPython import get_ipython

    return get_ipython()


def exit_without_teardown() -> None:
    """Make this process end with `os._exit` once the atexit handlers registered after this call have run:
    Python's teardown (freeing every module and object, ~1 s with torch, sklearn and seaborn loaded and
    more with models in memory) is skipped. The runner asks for it in the kernels it starts
    ($NLI_KERNEL_FAST_EXIT=1, read by `start`): papermill waits for a kernel to exit before the next notebook
    starts, and nothing of a finished notebook is left to free.

    What still runs: every atexit handler registered after this call (the library's, e.g. the POS tagger's
    flush into the call cache; atexit runs them last-registered first), IPython's history end-of-session
    record, and a flush of stdout and stderr. What does not: the kernel's own shutdown handlers registered
    before it (closing its sockets and IOPub thread: the process ends anyway) and objects' finalizers. The
    call cache commits every write at once, so no answer is lost. JupyterLab kernels never get the variable.

    >>> import subprocess, sys
    >>> code = ("import atexit; from nli_lib.notebook import exit_without_teardown; exit_without_teardown(); "
    ...         "atexit.register(print, 'handler ran'); "
    ...         "T = type('T', (), {'__del__': lambda self: print('teardown ran')}); t = T()")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    'handler ran\\n'
    """
    import atexit

    atexit.register(_exit_now)


def _exit_now() -> None:
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and shell.history_manager is not None:
            shell.history_manager.end_session()
    except Exception:  # noqa: BLE001 - history is a courtesy; exiting is the point
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream has nothing to flush
            pass
    os._exit(0)


def notebook_name(namespace: dict | None = None) -> str | None:
    """Stem of the running notebook: $JPY_SESSION_NAME, else VS Code's `__vsc_ipynb_file__`, else None.

    >>> os.environ[SESSION_ENV] = "/home/me/nli-companion/notebooks/52_taxinli_factor_analysis.ipynb"
    >>> notebook_name()
    '52_taxinli_factor_analysis'
    >>> del os.environ[SESSION_ENV]
    """
    namespace = namespace or {}
    for candidate in (os.environ.get(SESSION_ENV), namespace.get("__session__"), namespace.get("__vsc_ipynb_file__")):
        if candidate and str(candidate).endswith(".ipynb"):
            return Path(str(candidate)).stem
    return None


def start(namespace: dict, name: str | None = None) -> NotebookSession:
    """Load the profile named in the parameters, seed RNGs, configure plotting; the session of a notebook.

    `namespace` is the notebook's `globals()` (the names `profile`, `quick` and `seed` are read from it) or
    any dict with them. Raises `nli_lib.profile.ProfileError` (key and fix) for a profile that is not valid.
    """
    profile = load_profile(namespace.get("profile") or None)
    quick = bool(namespace.get("quick", False))
    seed = profile.seed if namespace.get("seed") is None else int(namespace["seed"])
    name = name or notebook_name(namespace)
    if name is None:
        warnings.warn(f"cannot tell which notebook this is (no ${SESSION_ENV}): outputs go to tables/{SCRATCH}/; "
                      f"pass start(globals(), name='NN_name') to choose", stacklevel=2)
        name = SCRATCH
    if not os.environ.get(RUNNER_KERNEL_ENV):  # the runner checked before starting any notebook
        from .papers import preflight

        services = preflight(profile, [name])  # e.g. FactNLI's Wikipedia, before this notebook's first step
        if services:
            raise ProfileError(f"profile {profile.path or '<text>'}: " + "; ".join(services))
    if os.environ.get(FAST_EXIT_ENV) == "1":
        exit_without_teardown()
    bind_kernel_to_run()  # a kernel the runner started ends with the run, even a run killed with kill -9
    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:  # not imported just to seed it (~1.5 s): training and noise draws seed their own
        sys.modules["torch"].manual_seed(seed)
    if os.environ.get("MPLBACKEND") == "Agg":
        import matplotlib

        matplotlib.use("Agg")
    params = {**profile.params(), "quick": quick, "seed": seed, "profile_name": profile.name}
    out = Outputs(name, params=params, tier=profile.tier, seed=seed)  # scrubs keys from params
    session = NotebookSession(name=name, profile=profile, params=out.params, out=out)
    print(f"notebook {name} · profile {profile.name} · tier {session.tier} · seed {seed} · quick={quick}")
    return session
