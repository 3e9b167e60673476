"""Which committed outputs are stale: tables and figures whose recorded inputs differ from the sources now.

    python -m nli_lib.stale             # list the stale outputs under tables/ and figures/; exit 0 (a report)
    python -m nli_lib.stale --check     # the same, but exit 1 when any output is stale
    nli-companion stale [--check] [--root DIR]

Every table and figure has a JSON sidecar (`nli_lib.outputs`) recording what produced it; like showyourwork,
an output is stale when one of those inputs differs from the checkout as it is now (in CI: HEAD):

* `nli_lib`: the sidecar's `nli_lib_hash` is not the hash of the library code its notebook imports now
  (`codehash.notebook_lib_hash`, the runner's check too: a docstring or comment edit changes nothing, and a change
  in one paper's modules makes only the notebooks that import them stale);
* `fixtures`: its `fixtures_sha256` is not `provenance.fixtures_hash()` (a gold set, the fitted FTC verifier or
  a paper value under data/fixtures changed; a sidecar from before the field existed: unknown);
* `code`: the notebook's code cells changed (`code_sha256` against `provenance.code_hash`; a sidecar written
  before that field existed is compared through the notebook at its `git_commit`, when that commit was clean);
* `data`: a data file it read has another sha256 in the manifest now, or left the manifest;
* `params`: its profile's values differ from the shipped profile of that name now (and its seed);
* `notebook`: the notebook that wrote it is gone.

An input that cannot be compared (a profile given by path, a sidecar from a dirty tree without `code_sha256`)
is reported as unknown and counts as stale: a check that cannot be made is never a pass. Per-example records
(tables/*/records/, never committed) are not checked. CI runs the report (`.ci/run`); `--check` makes it strict.

>>> meta = {"notebook": "00_x", "nli_lib_hash": "aaa", "code_sha256": "c1", "data_sha256": {"snli/dev": "s1"},
...         "fixtures_sha256": "f1", "params": {"seed": 0, "quick": False, "profile_name": "offline"}}
>>> now = Sources(lib="bbb", fixtures="f1", manifest={"snli/dev": "s2"}, code={"00_x": "c1"},
...               profiles={"offline": {"seed": 0, "quick": False, "profile_name": "offline"}})
>>> reasons(meta, now)
('nli_lib aaa → bbb', 'data snli/dev changed')
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .config import REPO_ROOT, output_dir, scrub_secrets, user_path

OUTPUT_FOLDERS = ("tables", "figures")  # where sidecars live: <folder>/<notebook>/<name>.json
SUFFIX = {"table": ".csv", "figure": ".png"}  # the file a sidecar describes, by kind


@dataclass(frozen=True)
class Stale:
    """One output and what differs between its sidecar and the sources now."""

    path: str  # the output, relative to the output root ('tables/31_ftc_metric/table-5.csv')
    notebook: str  # the notebook that wrote it
    reasons: tuple[str, ...]  # what differs ('nli_lib 784910792b28 → 0a1b2c3d4e5f', 'code changed', ...)


@dataclass
class Sources:
    """The sources now, each read once. Fields left None are read from the checkout on first use; tests and
    the module example pass them in."""

    lib: str | None = None  # one library hash for every notebook (tests); None: each notebook's closure hash now
    libs: dict = field(default_factory=dict)  # notebook stem -> `codehash.notebook_lib_hash` now (read on first use)
    fixtures: str | None = None  # data/fixtures hash now (`provenance.fixtures_hash`)
    manifest: dict | None = None  # manifest key -> sha256 now ('' for online-only files: not compared)
    code: dict = field(default_factory=dict)  # notebook stem -> code hash now (None: notebook gone)
    profiles: dict = field(default_factory=dict)  # profile name -> the params a run records now (None: unknown)
    notebooks: Path = REPO_ROOT / "notebooks"  # where notebooks live
    repo: Path = REPO_ROOT  # the git checkout, for sidecars without a code hash
    at_commit: dict = field(default_factory=dict)  # (commit, notebook) -> code hash at that commit (or None)

    def lib_hash(self, notebook: str) -> str:
        """The hash the sidecars of `notebook` must record: its import closure's (`codehash.notebook_lib_hash`, the
        whole library's when the notebook is gone), or `lib` when given."""
        if self.lib is not None:
            return self.lib
        if notebook not in self.libs:
            from .codehash import notebook_lib_hash

            self.libs[notebook] = notebook_lib_hash(self.notebook_path(notebook))
        return self.libs[notebook]

    def notebook_path(self, notebook: str) -> Path | None:
        """The file of the notebook named `notebook`: in `notebooks`, else among the notebooks of the papers
        registered on $NLI_PAPERS (`papers.paper_notebooks`); None when it is gone."""
        path = self.notebooks / f"{notebook}.ipynb"
        if path.is_file():
            return path
        from .papers import paper_notebooks

        return next((p for p in paper_notebooks() if p.stem == notebook), None)

    def fixtures_hash(self) -> str:
        if self.fixtures is None:
            from .provenance import fixtures_hash

            self.fixtures = fixtures_hash()
        return self.fixtures

    def data(self) -> dict:
        if self.manifest is None:
            from .data.fetch import load_manifest

            self.manifest = {key: entry.sha256 for key, entry in load_manifest().items()}
        return self.manifest

    def code_now(self, notebook: str) -> str | None:
        if notebook not in self.code:
            from .provenance import code_hash

            path = self.notebook_path(notebook)
            self.code[notebook] = code_hash(path) if path is not None else None
        return self.code[notebook]

    def code_then(self, commit: str, notebook: str) -> str | None:
        """Code hash of the notebook at a clean commit (None: not a clean commit, or git does not have it)."""
        key = (commit, notebook)
        if key not in self.at_commit:
            self.at_commit[key] = None
            if re.fullmatch(r"[0-9a-f]{40}", commit):
                from .provenance import code_hash

                rel = self.notebooks.relative_to(self.repo) if self.notebooks.is_relative_to(self.repo) else None
                if rel is not None:
                    proc = subprocess.run(["git", "-C", str(self.repo), "show", f"{commit}:{rel}/{notebook}.ipynb"],
                                          capture_output=True, text=True, timeout=30)
                    self.at_commit[key] = code_hash(text=proc.stdout) if proc.returncode == 0 else None
        return self.at_commit[key]

    def params_now(self, name: str) -> dict | None:
        """What a run of the shipped profile `name` records as params now (None: not a shipped profile)."""
        if name not in self.profiles:
            from .profile import PROFILE_DIR, load_profile

            self.profiles[name] = None
            if (PROFILE_DIR / f"{name}.yaml").is_file():
                profile = load_profile(name)
                self.profiles[name] = scrub_secrets({**profile.params(), "seed": profile.seed, "profile_name": name})
        return self.profiles[name]


def _code_reason(meta: dict, now: Sources) -> str | None:
    notebook = meta.get("notebook", "")
    current = now.code_now(notebook)
    if current is None:
        return f"notebook {notebook} is gone"
    recorded = meta.get("code_sha256")
    how = "recorded"
    if recorded is None:  # sidecars before code_sha256: the notebook at the commit that wrote them
        recorded, how = now.code_then(str(meta.get("git_commit", "")), notebook), f"at {meta.get('git_commit')}"
    if recorded is None:
        return f"code unknown (no code hash; commit {meta.get('git_commit')} is not a clean commit git has)"
    return None if recorded == current else f"code changed ({how})"


def _short(value, width: int = 40) -> str:
    """repr of a parameter value, cut to `width` characters.

    >>> _short({"models": list(range(30))}, 20)
    "{'models': [0, 1, 2…"
    """
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _params_reason(meta: dict, now: Sources) -> str | None:
    recorded = dict(meta.get("params") or {})
    name = str(recorded.get("profile_name", ""))
    current = now.params_now(name)
    if current is None:
        return f"params unknown (profile {name!r} is not a shipped profile)"
    current = {**current, "quick": recorded.get("quick", False)}  # quick runs are checked as quick runs
    absent = "(absent)"
    changed = sorted(k for k in set(recorded) | set(current) if recorded.get(k, absent) != current.get(k, absent))
    if not changed:
        return None
    shown = ", ".join(f"{k} {_short(recorded.get(k, absent))} → {_short(current.get(k, absent))}"
                      for k in changed[:3])
    return f"params {shown}" + (f" (+{len(changed) - 3} more)" if len(changed) > 3 else "")


def reasons(meta: dict, now: Sources) -> tuple[str, ...]:
    """What differs between a sidecar `meta` and the sources `now` (empty: the output is current)."""
    found = []
    lib = now.lib_hash(str(meta.get("notebook", "")))
    if meta.get("nli_lib_hash") != lib:
        found.append(f"nli_lib {meta.get('nli_lib_hash')} → {lib}")
    if "fixtures_sha256" not in meta:
        found.append("fixtures unknown (the sidecar does not record data/fixtures)")
    elif meta["fixtures_sha256"] != now.fixtures_hash():
        found.append(f"fixtures {meta['fixtures_sha256']} → {now.fixtures_hash()}")
    found.append(_code_reason(meta, now))
    manifest = now.data()
    for key, sha in sorted((meta.get("data_sha256") or {}).items()):
        if key not in manifest:
            found.append(f"data {key} left the manifest")
        elif manifest[key] and manifest[key] != sha:
            found.append(f"data {key} changed")
    found.append(_params_reason(meta, now))
    return tuple(r for r in found if r)


def sidecars(root: Path) -> list[Path]:
    """Every table and figure sidecar under `root` (tables/<notebook>/*.json, figures/<notebook>/*.json)."""
    return sorted(p for folder in OUTPUT_FOLDERS for p in (root / folder).glob("*/*.json"))


def stale_outputs(root: Path | None = None, now: Sources | None = None) -> tuple[list[Stale], int]:
    """(the stale outputs under `root`, how many outputs were checked)."""
    root, now = root or output_dir(), now or Sources()
    found, paths = [], sidecars(root)
    for side in paths:
        rel = side.relative_to(root)
        try:
            meta = json.loads(side.read_text())
        except (OSError, ValueError) as exc:
            found.append(Stale(str(rel), side.parent.name, (f"unreadable sidecar ({type(exc).__name__})",)))
            continue
        why = reasons(meta, now)
        if why:
            output = rel.with_suffix(SUFFIX.get(meta.get("kind"), ".json"))
            found.append(Stale(str(output), str(meta.get("notebook", side.parent.name)), why))
    return found, len(paths)


def report(found: list[Stale], checked: int, root: Path) -> str:
    """The listing `main` prints: per notebook and set of reasons, the outputs, then a one-line summary.

    >>> print(report([Stale("tables/00_x/a.csv", "00_x", ("code changed",))], 3, Path("/repo")))
    00_x: 1 output stale: code changed
      tables/00_x/a.csv
    1 of 3 outputs under /repo are stale (notebooks 00_x): regenerate them with ./run_all.sh --only 00
    """
    lines, groups = [], {}
    for item in found:
        groups.setdefault((item.notebook, item.reasons), []).append(item.path)
    for (notebook, why), paths in groups.items():
        lines.append(f"{notebook}: {len(paths)} output{'s' * (len(paths) != 1)} stale: {'; '.join(why)}")
        lines += [f"  {p}" for p in paths]
    notebooks = sorted({item.notebook for item in found})
    if found:
        lines.append(f"{len(found)} of {checked} outputs under {root} are stale (notebooks {', '.join(notebooks)}): "
                     f"regenerate them with ./run_all.sh --only {' '.join(sorted({n[:2] for n in notebooks}))}")
    else:
        lines.append(f"all {checked} outputs under {root} are current")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nli_lib.stale", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 when any output is stale (default: report, exit 0)")
    ap.add_argument("--root", type=Path, default=None,
                    help="output root holding tables/ and figures/ (default: $NLI_OUTPUT_DIR or the checkout)")
    args = ap.parse_args(argv)
    root = user_path(args.root) if args.root else output_dir()
    found, checked = stale_outputs(root)
    if not checked:
        print(f"no table or figure sidecars under {root}: nothing to compare", file=sys.stderr)
        return 1 if args.check else 0
    print(report(found, checked, root))
    if found and not args.check:
        print("(report only: `--check` makes stale outputs an error)")
    return 1 if found and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
