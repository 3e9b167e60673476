"""Run every notebook headlessly with papermill (what `run_all.sh` calls).

    python -m nli_lib.runner                    # offline profile, all notebooks, skip unchanged ones
    python -m nli_lib.runner --quick            # small samples everywhere (what the tests run)
    python -m nli_lib.runner --force 50_taxinli_dataset   # re-run one notebook even if unchanged
    python -m nli_lib.runner --profile paper    # hub models and an OpenAI-compatible endpoint

Notebooks under notebooks/ whose names start with two digits run in numeric order; the summary notebooks
(9x) also re-run whenever an earlier notebook ran in the same call. Executed copies go to
runs/<profile>[-quick]/, never over the sources. A notebook is skipped when its inputs are unchanged:
the sha256 of its code cells, the nli_lib sources, its parameters and the checksums of the data files
it read last time (recorded through $NLI_RUN_RECORD by the data layer). Quick runs write their tables
and figures under runs/<profile>-quick/ so they never replace the full outputs under tables/ and figures/.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import nbformat

from .config import REPO_ROOT, load_profile, scrub_secrets
from .data.fetch import load_manifest
from .outputs import nli_lib_hash

NOTEBOOK_DIR = REPO_ROOT / "notebooks"


def notebooks(only: list[str] | None = None, folder: Path = NOTEBOOK_DIR) -> list[Path]:
    found = sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = {o.removesuffix(".ipynb") for o in only}
        found = [p for p in found if p.stem in wanted or p.stem[:2] in wanted]
        missing = wanted - {p.stem for p in found} - {p.stem[:2] for p in found}
        if missing:
            raise SystemExit(f"no notebook named {sorted(missing)} under {folder}")
    return found


def code_hash(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode())
            h.update(b"\x00")
    return h.hexdigest()


def input_hash(path: Path, params: dict, data_keys: list[str]) -> str:
    manifest = load_manifest()
    data = {k: manifest[k].sha256 if k in manifest else "gone" for k in sorted(data_keys)}
    blob = json.dumps({"code": code_hash(path), "lib": nli_lib_hash(), "params": params, "data": data}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def run_dir(profile_name: str, quick: bool, root: Path = REPO_ROOT / "runs") -> Path:
    return root / (Path(profile_name).stem + ("-quick" if quick else ""))


def execute(path: Path, params: dict, out_dir: Path, env: dict) -> None:
    import papermill as pm

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        pm.execute_notebook(str(path), str(out_dir / path.name), parameters=params, cwd=str(path.parent),
                            kernel_name="python3", language="python", progress_bar=False, log_output=False, request_save_on_cell_execute=True)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def failed_cell(executed: Path, source: Path) -> str:
    """'cell N (...): ErrorName: message' of the first failing cell; N indexes the source notebook's cells from 0."""
    try:
        nb = nbformat.read(executed, as_version=4)
        source_cells = [c.source for c in nbformat.read(source, as_version=4).cells]
    except Exception:  # noqa: BLE001 - best effort description of a failure
        return "unknown cell"
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                index = source_cells.index(cell.source) if cell.source in source_cells else "?"
                first = cell.source.splitlines()[0][:60] if cell.source else ""
                return f"cell {index} (counting from 0; starts {first!r}): {out['ename']}: {out['evalue'][:300]}"
    return "unknown cell"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=os.environ.get("NLI_PROFILE", "offline"), help="profile name or YAML path")
    ap.add_argument("--quick", action="store_true", help="run every notebook on small samples")
    ap.add_argument("--force", nargs="?", const="__all__", default=None, help="re-run (all, or the named notebook)")
    ap.add_argument("--only", nargs="*", help="run only these notebooks (stems or two-digit prefixes)")
    ap.add_argument("--notebook-dir", type=Path, default=NOTEBOOK_DIR, help=argparse.SUPPRESS)  # for tests
    ap.add_argument("--runs-dir", type=Path, default=REPO_ROOT / "runs", help="where executed copies go")
    args = ap.parse_args(argv)

    profile = load_profile(args.profile)
    if scrub_secrets(profile, _secrets=[]) != profile:  # papermill would write it into every executed notebook
        raise SystemExit(f"profile {args.profile!r} contains a secret (an api_key/token entry): remove it and name "
                         f"the environment variable that holds it instead (llm: api_key_env: OPENAI_API_KEY)")
    params = {**profile, "quick": bool(args.quick), "profile_name": Path(args.profile).stem}
    out_dir = run_dir(args.profile, args.quick, args.runs_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {"NLI_PROFILE": args.profile, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "NLI_PROGRESS": "0"}
    if args.quick:
        env["NLI_OUTPUT_DIR"] = str(out_dir / "outputs")
    if profile.get("tier") == "paper":  # the paper profile may reach the hub
        env.pop("HF_HUB_OFFLINE"), env.pop("TRANSFORMERS_OFFLINE")

    selected = notebooks(args.only, args.notebook_dir)
    if args.force not in (None, "__all__"):
        name = args.force.removesuffix(".ipynb")
        if not any(name in (p.stem, p.stem[:2]) for p in selected):
            raise SystemExit(f"--force {args.force}: no such notebook among {[p.stem for p in selected]}")
    timings = []
    for path in selected:
        stamp_path, record = out_dir / f"{path.stem}.stamp.json", out_dir / f"{path.stem}.data.json"
        forced = args.force == "__all__" or (args.force and args.force.removesuffix(".ipynb") in (path.stem, path.stem[:2]))
        # summary notebooks (9x: scorecard, explorer) read the other notebooks' outputs: re-run them after any run
        forced = forced or (path.stem.startswith("9") and any(status == "ran" for _, status, _ in timings))
        if stamp_path.exists() and not forced:
            stamp = json.loads(stamp_path.read_text())
            if stamp["hash"] == input_hash(path, params, stamp["data_keys"]) and (out_dir / path.name).exists():
                timings.append((path.stem, "skipped (unchanged)", 0.0))
                print(f"[skip] {path.stem}: inputs unchanged", flush=True)
                continue
        print(f"[run ] {path.stem} ...", flush=True)
        record.unlink(missing_ok=True)
        stamp_path.unlink(missing_ok=True)  # a run that fails or is interrupted must never count as done
        started = time.time()
        try:
            execute(path, params, out_dir, {**env, "NLI_RUN_RECORD": str(record)})
        except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
            where = failed_cell(out_dir / path.name, path)
            print(f"\nFAILED: notebook {path.name}, {where}\n  executed copy: {out_dir / path.name}\n  ({type(exc).__name__})",
                  file=sys.stderr)
            print_timings(timings + [(path.stem, "FAILED", time.time() - started)])
            return 1
        except KeyboardInterrupt:
            print(f"\nINTERRUPTED: notebook {path.name}. Finished notebooks keep their results; run the same "
                  f"command again to resume (unchanged notebooks are skipped).", file=sys.stderr)
            print_timings(timings + [(path.stem, "INTERRUPTED", time.time() - started)])
            return 130
        data_keys = sorted(json.loads(record.read_text())) if record.exists() else []
        stamp_path.write_text(json.dumps({"hash": input_hash(path, params, data_keys), "data_keys": data_keys,
                                          "seconds": round(time.time() - started, 1)}, indent=1))
        timings.append((path.stem, "ran", time.time() - started))
    print_timings(timings)
    return 0


def print_timings(timings) -> None:
    import resource

    width = max([len(n) for n, _, _ in timings] + [8])
    print(f"\n{'notebook':<{width}}  {'status':<20} {'seconds':>8}")
    for name, status, secs in timings:
        print(f"{name:<{width}}  {status:<20} {secs:8.1f}")
    print(f"{'total':<{width}}  {'':<20} {sum(s for _, _, s in timings):8.1f}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # largest finished kernel process
    print(f"peak memory of a notebook kernel: {peak_kib / 2**20:.2f} GiB")


if __name__ == "__main__":
    sys.exit(main())
