"""Build FactNLI levels from the command line (resumable: finished premise levels come from the cache).

    python -m nli_lib.factnli build                       # all of SNLI test (9,824 pairs), offline profile
    python -m nli_lib.factnli build --quick               # a 3-premise sample, quick settings
    python -m nli_lib.factnli build --n-premises 500 --variant both --out runs/factnli
    python -m nli_lib.factnli build --profile paper       # Wikipedia + the profile's LLM endpoint
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m nli_lib.factnli")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="augment SNLI test to levels 1..L")
    b.add_argument("--quick", action="store_true", help="3-premise sample and quick settings")
    b.add_argument("--n-premises", type=int, default=None, help="seeded sample of premises (default: all)")
    b.add_argument("--dataset", choices=["snli", "mnli-taxinli"], default="snli")
    b.add_argument("--variant", choices=["full", "no-filter", "both"], default="full")
    b.add_argument("--profile", default="offline")
    b.add_argument("--levels", type=int, default=3)
    b.add_argument("--chunk-size", type=int, default=64)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out", type=Path, default=Path("runs/factnli"), help="folder for <variant>.jsonl")
    args = ap.parse_args(argv)

    from ..notebook import start
    from .pipeline import mnli_sample, snli_sample
    from .session import augmenter_for, settings_for

    nb = start({"profile": args.profile, "quick": args.quick, "seed": args.seed}, name="factnli_cli")
    n = args.n_premises if args.n_premises is not None else (3 if args.quick else None)
    examples = (snli_sample if args.dataset == "snli" else mnli_sample)(n, seed=args.seed)
    aug = augmenter_for(nb, settings_for(nb, levels=args.levels))
    variants = ["full", "no-filter"] if args.variant == "both" else [args.variant]
    args.out.mkdir(parents=True, exist_ok=True)
    for variant in variants:
        data = (aug if variant == "full" else aug.with_settings(use_filter=False)).build(
            examples, chunk_size=args.chunk_size
        )
        path = args.out / f"{args.dataset}-{variant}.jsonl"
        data.items.to_json(path, orient="records", lines=True, force_ascii=False)
        meta = {"settings": data.settings.__dict__, "components": data.components, "pairs": int(examples.shape[0])}
        path.with_suffix(".json").write_text(json.dumps(meta, indent=1, default=str))
        print(f"{variant}: {len(data.items)} rows ({examples.shape[0]} pairs × levels 0..{args.levels}) -> {path}")
    nb.finish()


if __name__ == "__main__":
    main()
