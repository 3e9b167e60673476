"""PhrasIS Table 2's Optuna searches on many machines: ``nli-companion sweep``, and notebooks reading the result.

Table 2 is 18 hub models, each fine-tuned per training unit (six scenarios) with the setting an Optuna search of
up to 150 trials chose on validation (§4): some 16,000 fine-tunings. Start any number of workers, on any number
of machines that see one storage (a journal file on a shared file system, or a database URL)::

    nli-companion sweep --storage /shared/phrasis.journal --study phrasis --trials 150 --worker 0   # machine A
    nli-companion sweep --storage /shared/phrasis.journal --study phrasis --trials 150 --worker 1   # machine B

Each worker walks the same list of searches (`evaluate.hub_search_units`: the profile's hub models × units, in
order) and works on one study per search, named ``<study>/<training name>-search``, until it holds ``--trials``
complete trials (`nli_lib.sweep.work`: no trial twice, a dead worker's trial rerun). Then point the profile at the
storage (``paper_models.phrasis.search_storage`` / ``search_study``): notebooks 20-22 take each unit's best
setting from its study (`models.search_or_read`) and only re-train it on all of train.
"""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None, prog: str = "nli-companion sweep") -> int:
    """Run one sweep worker: the profile's PhrasIS Table 2 searches, shared with every worker on the storage."""
    ap = argparse.ArgumentParser(prog=prog, description=main.__doc__)
    ap.add_argument("--storage", required=True, help="journal file (shared file system) or database URL")
    ap.add_argument("--study", default="phrasis", help="study name prefix (default: phrasis)")
    ap.add_argument("--trials", type=int, default=None,
                    help="complete trials per search (default: the profile's paper_models.phrasis.search_trials)")
    ap.add_argument("--profile", default="paper", help="profile naming the models (default: paper)")
    ap.add_argument("--worker", type=int, default=0, help="this worker's number: its sampler seed (give every "
                    "worker its own, e.g. 0, 1, 2 …)")
    ap.add_argument("--quick", action="store_true", help="the quick runs' data and training names")
    ap.add_argument("--only", action="append", default=[], metavar="MODEL",
                    help="only this model (a Table 2 name or hub id; repeatable)")
    args = ap.parse_args(argv)
    from ..context import RunContext
    from ..sweep import open_storage, storage_value, study_name, work, worker_seed
    from .data import load_splits
    from .evaluate import hub_search_units, profile_families
    from .models import search_objective

    ctx = RunContext.from_profile(args.profile, quick=args.quick)
    paper = ctx.profile.paper_models.phrasis
    n_trials = paper.search_trials if args.trials is None else args.trials
    if n_trials < 1:
        raise SystemExit(f"{prog}: no trials to run: give --trials N or set paper_models.phrasis.search_trials")
    families = [f for f in profile_families(ctx.profile)
                if not args.only or f.name in args.only or f.base in args.only]
    splits = load_splits(quick=ctx.quick, seed=ctx.seed)
    units = hub_search_units(families, splits, quick=ctx.quick, seed=ctx.seed, hub_epochs=paper.epochs)
    if not units:
        raise SystemExit(f"{prog}: profile {args.profile!r} names no hub model to search"
                         + (f" among {args.only}" if args.only else ""))
    opened = open_storage(storage_value(args.storage))
    for i, (family, unit, fit80, val, tspec, search) in enumerate(units, 1):
        name = study_name(args.study, search)
        print(f"[{i}/{len(units)}] {family} {unit}: study {name}", flush=True)
        ran = work(opened, name, search_objective(fit80, val, tspec, search), n_trials,
                   seed=worker_seed(name, args.worker), log=lambda m: print(m, flush=True))
        print(f"[{i}/{len(units)}] {name}: complete ({ran} trials by this worker)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
