"""The command line of `nli_lib.judged` (module docstring there): status of the judged samples, and drawing a
fresh sample to judge. Kept apart from the package so that a notebook importing `nli_lib.judged` does not depend
on every stand-in's sampling code.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import JUDGED_DIR, STAND_INS, draw, status


def draw_function(name: str):
    """The stand-in's function drawing a fresh sample: f(n, seed) -> (items, meta)."""
    if name == "ftc":
        from ..ftc.gold import draw_fresh
    elif name == "atoms":
        from ..atoms.gold import draw_fresh
    elif name == "factnli":
        from ..factnli.gold import draw_fresh
    else:
        raise KeyError(f"no draw function for stand-in {name!r}")
    return draw_fresh


def main(argv=None, folder: Path = JUDGED_DIR) -> int:
    ap = argparse.ArgumentParser(prog="python -m nli_lib.judged", description="judged samples of the stand-ins")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("status", help="each stand-in's judged sample against its current code")
    s.add_argument("--check", action="store_true", help="exit 1 when a judgement is older than its code")
    d = sub.add_parser("draw", help="draw a fresh sample to judge (overwrites the stand-in's file)")
    d.add_argument("name", choices=sorted(STAND_INS))
    d.add_argument("--n", type=int, default=80)
    d.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.cmd == "draw":
        for p in draw(args.name, args.n, args.seed, draw_function(args.name), folder):
            print("wrote", p)
        return 0
    text, stale = status(folder)
    print(text)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
