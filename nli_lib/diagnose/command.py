"""`nli-companion diagnose MODEL [MODEL ...]`: the five papers' lenses on any 3-way NLI classifier, one report.

    nli-companion diagnose offline:minilm-esnli tfidf-logreg --quick       # two companion models, side by side
    nli-companion diagnose roberta-large-mnli ./my-model --profile paper   # a hub id and a folder
    nli-companion diagnose llm --profile my-endpoint.yaml --lens atoms     # an endpoint as a prompted classifier
    nli-companion diagnose ./my-model --phrasis                            # also fine-tune it on PhrasIS

From Python (what notebook 92 calls), `diagnose(models, profile, quick=...)` returns the `Report`.

Order of work: the profile and lenses are read, every MODEL is checked from its config (`candidates.check`:
a clear error before anything runs), the models are loaded (the offline MiniLM and the baselines from the
model cache, as the run built them), then each model goes through each lens with a progress bar. The report
goes to --out, else to runs/diagnose/<models>/ in the checkout (in the folder the command was typed in
outside one); relative paths resolve where the command was typed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from .candidates import DiagnoseError, check, load
from .report import Report


def diagnose(models: Sequence[str], profile=None, *, quick: bool = False, seed: int | None = None,
             lenses: Sequence[str] | None = None, phrasis: bool = False, ctx=None) -> Report:
    """Run the lenses (`lenses`: names; default every lens that is not opt-in, plus PhrasIS with `phrasis`) on
    `models` under `profile` (a name or YAML path; None: $NLI_PROFILE or offline) or an existing `ctx`."""
    from .. import calls
    from ..context import RunContext
    from ..progress import progress
    from . import registry as L

    ctx = ctx or RunContext.from_profile(profile, quick=quick, seed=seed)
    try:
        chosen = L.chosen(lenses, phrasis)
    except KeyError as exc:
        raise DiagnoseError(exc.args[0]) from None
    refs = check(list(models), ctx)  # every problem of every model, before anything loads or runs
    before = calls.snapshot()
    candidates = load(refs, list(models), ctx)
    results = {}
    for c in candidates:
        with progress(chosen, desc=f"diagnose {c.name}", unit="lens") as bar:
            results[c.name] = [lens.run(ctx, c) for lens in bar]
    used = calls.summary(since=before)
    made = {k: int(used[k].sum()) if len(used) else 0 for k in ("requests", "cache_hits", "calls")}
    run = {"profile": ctx.profile.name, "tier": ctx.tier, "quick": ctx.quick, "seed": ctx.seed,
           "lenses": [lens.name for lens in chosen], "calls": made,
           "calls_by_source": used.reset_index().to_dict("records") if len(used) else []}
    return Report(run=run, results=results, specs={c.name: c.spec for c in candidates})


def lineup_models(ctx) -> list[str]:
    """The MODELs of the profile's line-up (its NLI model, baselines and extra models), as the profile writes
    them: what notebook 92 diagnoses when it is given none."""
    from ..lineup import lineup

    return [ref.given or ref.id for ref in lineup(ctx.profile)]


def default_folder(models: Sequence[str], quick: bool) -> Path:
    """runs/diagnose/<models>[-quick]/ in the checkout, else under the folder the command was typed in.

    >>> default_folder(["offline:minilm-esnli", "./my model"], True).parts[-2:]
    ('diagnose', 'offline-minilm-esnli+my-model-quick')
    """
    from ..config import CHECKOUT, user_dir
    from ..text import slug

    name = "+".join(slug(Path(m).name if "/" in m else m) for m in models) + ("-quick" if quick else "")
    return (CHECKOUT or user_dir()) / "runs" / "diagnose" / name


def parser() -> argparse.ArgumentParser:
    from . import registry as L

    ap = argparse.ArgumentParser(
        prog="nli-companion diagnose",
        description="Apply the five papers' lenses to 3-way NLI classifiers; one report (JSON + Markdown).",
        epilog="MODEL: offline:minilm-esnli, tfidf-logreg, tfidf-svm, naive-bayes, a hub id, a local folder, a "
               "model the profile names, or 'llm' (the profile's llm: endpoint as a prompted classifier). "
               "Lenses: " + "; ".join(f"{n}: {L.get(n).summary}" for n in L.names()))
    ap.add_argument("models", nargs="*", metavar="MODEL", help="the models to diagnose (several: side by side)")
    ap.add_argument("--profile", help="profile name or YAML path (default: $NLI_PROFILE or offline)")
    ap.add_argument("--quick", action="store_true", help="the quick samples of the notebooks (seconds on a warm cache)")
    ap.add_argument("--seed", type=int, help="seed (default: the profile's)")
    ap.add_argument("--lens", action="append", choices=L.names(), help="run only this lens (repeatable)")
    ap.add_argument("--phrasis", action="store_true", help="also the PhrasIS lens: fine-tunes each model (slow)")
    ap.add_argument("--out", help="report folder (default: runs/diagnose/<models>/)")
    ap.add_argument("--list-lenses", action="store_true", help="print the lenses and exit")
    return ap


def main(args: list[str] | None = None) -> int:
    from ..config import user_path
    from . import registry as L

    opts = parser().parse_args(args)
    if opts.list_lenses:
        for n in L.names():
            lens = L.get(n)
            print(f"{n:<8} {lens.summary}" + ("  [opt-in: --phrasis]" if lens.opt_in else ""))
        return 0
    out = user_path(opts.out) if opts.out else default_folder(opts.models, opts.quick)
    try:
        report = diagnose(opts.models, opts.profile, quick=opts.quick, seed=opts.seed, lenses=opts.lens,
                          phrasis=opts.phrasis)
    except DiagnoseError as exc:
        print(f"nli-companion diagnose: {exc}", file=sys.stderr)
        return 2
    paths = report.write(out)
    print(report.side_by_side.to_string(index=False))
    print(f"\nmodel calls: {report.run['calls']['calls']:,} made, {report.run['calls']['cache_hits']:,} from the cache")
    print(f"report: {paths['markdown']}\n        {paths['json']}")
    return 0
