"""Write tables and figures with provenance sidecars, and keep tables/index.csv current.

    >>> out = Outputs("50_taxinli_dataset", params={"quick": True}, tier="offline", seed=0)   # doctest: +SKIP
    >>> out.table(df, "table-2", ref="taxinli-table-2", models=[])                          # doctest: +SKIP

Files: tables/<notebook>/<name>.{csv,md,json} and figures/<notebook>/<name>.{png,pdf,json}, under
$NLI_OUTPUT_DIR (the repository root by default). The JSON sidecar records notebook, parameters, git
commit, nli_lib hash, the sha256 of the notebook's code cells, data sha256s used, model ids, seed and tier
(`nli_lib.stale` compares them with the sources now). `tables/index.csv` lists every
output with its paper reference key `<paper>-<table|fig>-<number>` (e.g. `taxinli-fig-5`).

Publishing. While a notebook runs, everything it writes goes to a staging folder private to its run,
$NLI_OUTPUT_DIR/.staging/<run id>/<notebook>/ (same layout; the run id: `nli_lib.runguard`). Only `publish()` —
called by `NotebookSession.finish`, the last cell of every notebook, once the run's model calls passed their
checks — moves the files to their places and rebuilds tables/index.csv; it refuses when the runner that started
the kernel has ended (an orphaned kernel publishes nothing). A notebook that fails or is interrupted leaves the
published tables, figures, index and scorecard entries as they were; the next run removes its staging folder.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import atomic
from .basis import BASES, check_basis, entry_tier, model_basis, row_tier
from .config import REPO_ROOT, output_dir, scrub_secrets, write_dir
from .data.fetch import used_data
from .papers import COMPANION, names, paper_of_notebook
from .phases import phase
from .provenance import fixtures_hash, notebook_code_hash
from .runguard import RUN_ID_ENV, STAGING, run_alive, run_id

INDEX_COLUMNS = ["ref", "kind", "path", "notebook", "tier", "models", "caption"]


# No creation date in a saved figure: the same figure saves to the same bytes in every run, so a rerun that changes
# no result changes no committed PDF (matplotlib otherwise stamps the PDF with the time it was written).
PDF_METADATA = {"CreationDate": None, "ModDate": None}


def nli_lib_hash() -> str:
    """Hash of the whole library's code (`codehash.library_hash`: every module, docstrings and comments left out),
    12 hex digits: the same for a checkout and an installed copy of the same sources. Derived file caches key on it
    (`filecache.library_state`); a notebook's outputs record `notebook_lib_hash`, the code that notebook imports."""
    from .codehash import library_hash

    return library_hash()


def notebook_lib_hash(notebook: str) -> str:
    """`codehash.notebook_lib_hash` of the notebook named `notebook` as a kernel runs it (`provenance.notebook_file`;
    the whole library's hash when there is no notebook file: a script or a test)."""
    from .codehash import notebook_lib_hash as closure_hash
    from .provenance import notebook_file

    return closure_hash(notebook_file(notebook))


# What a run writes into the checkout: its own outputs never make the code that ran look modified ('-dirty')
GENERATED_PATHS = ("tables", "figures", "README.md", "REPRODUCTION.md")


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    """HEAD commit of the repository, suffixed '-dirty' when a tracked file other than the run's own outputs
    (`GENERATED_PATHS`) differs from it: the commit of the code that ran (once per process)."""
    try:
        def run(*args: str) -> str:
            return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True,
                                  timeout=10).stdout.strip()

        commit = run("rev-parse", "HEAD") or "uncommitted"
        changed = run("status", "--porcelain", "--untracked-files=no", "--", ".",
                      *(f":(exclude){p}" for p in GENERATED_PATHS))
        return commit + ("-dirty" if changed else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


VOLATILE_FIELDS = ("created", "git_commit")  # sidecar fields that differ between two runs of the same result


def _same_sidecar(new: Path, old: Path) -> bool:
    try:
        a, b = json.loads(new.read_text()), json.loads(old.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(a, dict) and isinstance(b, dict) and \
        {k: v for k, v in a.items() if k not in VOLATILE_FIELDS} == \
        {k: v for k, v in b.items() if k not in VOLATILE_FIELDS}


def unchanged_results(staged: list[Path], staging: Path, root: Path) -> set[Path]:
    """The staged files whose published copy already holds the same result, so publishing keeps that copy (a
    run changes a committed file only when a result changed). A sidecar is the same when it differs only in
    `VOLATILE_FIELDS`; an output with a sidecar (a table's CSV and Markdown, a figure's PNG and PDF) is the same
    when its sidecar is and its CSV or PNG has the same bytes (a PDF embeds a creation date and font-subset
    names, so its bytes are never compared); any other file when its bytes are the same.

    >>> import tempfile
    >>> tmp = Path(tempfile.mkdtemp()); (tmp / "s").mkdir(); (tmp / "r").mkdir()
    >>> for folder, created in (("s", "today"), ("r", "yesterday")):
    ...     _ = (tmp / folder / "f.png").write_bytes(b"png")
    ...     _ = (tmp / folder / "f.pdf").write_bytes(created.encode())
    ...     _ = (tmp / folder / "f.json").write_text(json.dumps({"created": created, "tier": "offline"}))
    >>> sorted(p.name for p in unchanged_results(sorted((tmp / "s").iterdir()), tmp / "s", tmp / "r"))
    ['f.json', 'f.pdf', 'f.png']
    >>> _ = (tmp / "s" / "f.png").write_bytes(b"another png")
    >>> unchanged_results(sorted((tmp / "s").iterdir()), tmp / "s", tmp / "r")
    set()
    """
    def published(path: Path) -> Path:
        return root / path.relative_to(staging)

    def same_bytes(path: Path) -> bool:
        old = published(path)
        return old.is_file() and path.read_bytes() == old.read_bytes()

    same: set[Path] = set()
    by_stem: dict[Path, list[Path]] = {}
    for path in staged:
        by_stem.setdefault(path.with_suffix(""), []).append(path)
    for stem, paths in by_stem.items():
        sidecar = stem.with_suffix(".json")
        content = [p for p in paths if p.suffix in (".csv", ".png")]
        if sidecar in paths and content:
            compared = [p for p in paths if p.suffix not in (".json", ".md", ".pdf")]  # .md, .pdf: made from these
            if _same_sidecar(sidecar, published(sidecar)) and all(same_bytes(p) for p in compared) and \
                    all(published(p).is_file() for p in paths):
                same.update(paths)
        else:
            same.update(p for p in paths if same_bytes(p))
    return same


def _check_ref(ref: str) -> None:
    parts = ref.split("-")
    papers = (*names(), COMPANION)  # the registered papers, and the companion's own outputs
    if len(parts) < 3 or parts[0] not in papers or parts[1] not in ("table", "fig"):
        raise ValueError(
            f"paper reference {ref!r} must look like '<paper>-<table|fig>-<number>' with paper in {papers}"
        )


@dataclass
class Outputs:
    """Output writer of one notebook run."""

    notebook: str  # notebook stem, e.g. '50_taxinli_dataset'
    params: dict = field(default_factory=dict)  # papermill parameters of the run
    tier: str = "offline"  # model tier that produced the numbers
    seed: int = 0  # random seed of the run
    written: list = field(default_factory=list)  # paths written so far (their published places once published)
    scored: list = field(default_factory=list)  # scorecard entries recorded by this run (see `score`)
    published: bool = False  # whether `publish()` has moved this run's files to their places
    inference: dict = field(default_factory=dict)  # model name -> the inference settings it ran with (sidecars)

    def __post_init__(self):
        self.params = scrub_secrets(self.params)  # sidecars never carry a key
        self.root = write_dir()  # where outputs are published: the committed ones only in a full run
        self.staging = staging_dir(self.notebook, self.root)
        if self.staging.exists():  # left by an earlier run of this notebook that failed or was interrupted
            shutil.rmtree(self.staging)
        self.staging.mkdir(parents=True)
        self.code_sha256 = notebook_code_hash(self.notebook)  # the code cells this run executes (None: no file)

    def _folder(self, *parts: str) -> Path:
        folder = self.staging.joinpath(*parts)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def publish(self) -> list[Path]:
        """Move every staged file to its place under the output root (keeping a published copy that holds the same
        result: `unchanged_results`) and rebuild tables/index.csv.

        Returns the published paths (and `written` now holds them). Call it once the run has succeeded;
        `NotebookSession.finish` does. Raises RuntimeError, publishing nothing, in a kernel whose runner has
        ended (`runguard.run_alive`): its files must not mix with those of a later run.
        """
        if not run_alive():
            raise RuntimeError(f"{self.notebook}: the run that started this kernel (${RUN_ID_ENV}="
                               f"{os.environ.get(RUN_ID_ENV)}) has ended, so nothing is published from "
                               f"{self.staging}. Fix: run the notebook again")
        moved = {}
        staged = sorted(p for p in self.staging.rglob("*") if p.is_file())
        kept = unchanged_results(staged, self.staging, self.root)
        for src in staged:
            dest = self.root / src.relative_to(self.staging)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if src not in kept:
                os.replace(src, dest)
            moved[src] = dest
        shutil.rmtree(self.staging, ignore_errors=True)
        with contextlib.suppress(OSError):  # the run's own folder once empty (another notebook may still stage)
            self.staging.parent.rmdir()
        self.written = [moved.get(Path(p), Path(p)) for p in self.written]
        self.published = True
        rebuild_index(self.root)
        return list(moved.values())

    def copy(self, src: Path, dest: str) -> Path:
        """Stage a copy of a written output at `dest` (relative to the output root), published with the rest."""
        target = self.staging / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, target)
        self.written.append(target)
        return target

    def _sidecar(self, kind: str, name: str, ref: str, models, caption: str) -> dict:
        return {
            "kind": kind, "name": name, "ref": ref, "caption": caption, "notebook": self.notebook,
            "params": self.params, "git_commit": git_commit(), "nli_lib_hash": notebook_lib_hash(self.notebook),
            "fixtures_sha256": fixtures_hash(), "code_sha256": self.code_sha256,
            "data_sha256": used_data(), "models": list(models), "seed": self.seed, "tier": self.tier,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            **({"inference": ran} if (ran := {m: self.inference[m] for m in models if m in self.inference}) else {}),
        }

    def table(self, df: pd.DataFrame, name: str, ref: str, models=(), caption: str = "", index: bool = False) -> Path:
        """Write df as CSV + Markdown + sidecar; returns the CSV path."""
        _check_ref(ref)
        folder = self._folder("tables", self.notebook)
        csv_path = folder / f"{name}.csv"
        df = self._tiered(df)
        df.to_csv(csv_path, index=index)
        header = f"**{ref}** — {caption} _(tier: {self.tier}; models: {', '.join(models) or 'none'})_\n\n"
        (folder / f"{name}.md").write_text(header + markdown_table(df, index=index) + "\n")
        (folder / f"{name}.json").write_text(json.dumps(self._sidecar("table", name, ref, models, caption), indent=1))
        self.written.append(csv_path)
        return csv_path

    def _tiered(self, df: pd.DataFrame) -> pd.DataFrame:
        """`df` with its 'tier' column (or index level) labelled as this run's outputs are (`basis.row_tier`), so
        an offline run with an LLM endpoint never writes rows labelled 'paper' under an 'offline' caption."""
        if "tier" in df.columns:
            df = df.assign(tier=[row_tier(v, self.tier) for v in df["tier"]])
        if "tier" in (df.index.names or []):
            df = df.rename(index=lambda v: row_tier(v, self.tier), level="tier")
        return df

    @phase("plotting")
    def figure(self, fig, name: str, ref: str, models=(), caption: str = "", dpi: int = 120) -> Path:
        """Save a matplotlib figure as PNG + PDF + sidecar; returns the PNG path."""
        _check_ref(ref)
        folder = self._folder("figures", self.notebook)
        png = folder / f"{name}.png"
        fig.savefig(png, dpi=dpi, bbox_inches="tight")
        fig.savefig(folder / f"{name}.pdf", bbox_inches="tight", metadata=PDF_METADATA)
        (folder / f"{name}.json").write_text(json.dumps(self._sidecar("figure", name, ref, models, caption), indent=1))
        self.written.append(png)
        return png

    def records(self, df: pd.DataFrame, name: str, ref: str, filters=(), text=(), models=(), caption: str = "",
                max_rows: int | None = 20000) -> Path:
        """Save the per-example rows behind a table (gzipped CSV + sidecar) for the explorer (notebook 91).

        `filters` names the columns a reader filters by (label, category, level, outcome ...); `text` the
        long-text columns shown in the detail view. Cells holding lists/dicts are stored as JSON strings.
        Larger frames are truncated to `max_rows` rows (seeded sample), and the sidecar says so.
        """
        _check_ref(ref)
        folder = self._folder("tables", self.notebook, "records")
        n_total = len(df)
        if max_rows is not None and n_total > max_rows:
            df = df.sample(max_rows, random_state=self.seed).sort_index()
        df = self._tiered(df).copy()
        for col in df.columns:
            if df[col].dtype == object and df[col].map(lambda v: isinstance(v, (list, tuple, dict, set))).any():
                df[col] = df[col].map(lambda v: json.dumps(sorted(v) if isinstance(v, set) else v, default=str)
                                      if isinstance(v, (list, tuple, dict, set)) else v)
        path = folder / f"{name}{RECORD_SUFFIX}"
        df.to_csv(path, index=False)
        meta = self._sidecar("records", name, ref, models, caption)
        meta.update(filters=[c for c in filters if c in df.columns], text=[c for c in text if c in df.columns],
                    n_rows=len(df), n_total=n_total)
        (folder / f"{name}.json").write_text(json.dumps(meta, indent=1, default=str))
        self.written.append(path)
        return path

    def score(self, ref: str, quantity: str, ours: float, model: str, *, basis: str, note: str = "") -> dict:
        """Record one of our numbers against the paper's value (ref, quantity) for the scorecard (notebook 90).

        `basis` says how ours relates to the paper's number (`nli_lib.basis`: data, released, paper-model,
        stand-in); it has no default, and an unknown basis, or 'paper-model' outside the paper profile,
        raises ValueError. The (ref, quantity) pair must exist in resources/paper_values/<paper>.csv (a typo
        raises KeyError). Entries go to tables/<notebook>/scorecard.jsonl (staged; published with the run's
        other outputs), rewritten from scratch by each run; a model-free entry (data, released) is labelled
        tier "data".
        """
        from .paper_values import paper_value
        check_basis(basis, self.tier)
        paper = paper_value(ref, quantity)
        entry = {"ref": ref, "quantity": quantity, "paper": paper, "ours": float(ours), "model": model,
                 "basis": basis, "tier": entry_tier(basis, self.tier), "notebook": self.notebook,
                 "quick": bool(self.params.get("quick", False)), "note": note}
        self.scored = [e for e in self.scored if (e["ref"], e["quantity"], e["model"]) != (ref, quantity, model)]
        self.scored.append(entry)
        folder = self._folder("tables", self.notebook)
        (folder / "scorecard.jsonl").write_text("".join(json.dumps(e) + "\n" for e in self.scored))
        return entry

    def score_frame(self, frame: pd.DataFrame, *, basis, ref: str | None = None, note: str = "") -> int:
        """`score` every row of a frame (quantity, ours, model; optional ref, note, paper) that has a value;
        returns how many were recorded. The one way notebooks and paper modules fill the scorecard.

        `basis` is one of `nli_lib.basis.BASES` for every row, or one per row (e.g. `frame["basis"]`, set
        by the function that built the frame). A row's own `ref` wins over the argument; its `note` comes
        before the argument's. Rows without our value, or whose `paper` column is empty (a `beside_paper`
        quantity the paper does not print), are skipped.
        """
        bases = [basis] * len(frame) if isinstance(basis, str) else list(basis)
        if len(bases) != len(frame):
            raise ValueError(f"basis has {len(bases)} entries for {len(frame)} rows")
        n = 0
        for row, row_basis in zip(frame.to_dict("records"), bases):
            if pd.isna(row["ours"]) or ("paper" in row and pd.isna(row["paper"])):
                continue
            row_ref = row.get("ref") if isinstance(row.get("ref"), str) and row.get("ref") else ref
            if row_ref is None:
                raise ValueError(f"no ref for {row['quantity']!r}: pass ref= or give the frame a ref column")
            row_note = row.get("note") if isinstance(row.get("note"), str) else ""
            self.score(row_ref, row["quantity"], row["ours"], row["model"], basis=row_basis,
                       note="; ".join(x for x in (row_note, note) if x))
            n += 1
        return n

    @property
    def paper_systems(self) -> dict:
        """The profile's `paper_systems`: our model id -> the paper's system it is (empty offline)."""
        return dict(self.params.get("paper_systems") or {})

    def model_basis(self, stands_for: dict) -> str:
        """'paper-model' or 'stand-in' for a number computed with `stands_for` (paper system -> our model),
        as the profile declares (`nli_lib.basis.model_basis`)."""
        return model_basis(self.paper_systems, stands_for)

    @contextlib.contextmanager
    def data_only(self):
        """Label what is written inside the block tier "data" (model-free outputs of a model notebook)."""
        tier, self.tier = self.tier, "data"
        try:
            yield self
        finally:
            self.tier = tier


def markdown_table(df: pd.DataFrame, index: bool = False) -> str:
    """Markdown for reading: whole-number float columns (counts) as integers, other floats to 4 significant digits.

    >>> print(markdown_table(pd.DataFrame({"n": [10071.0, 2.0], "acc": [0.76741, 1.2e-08]})))
    |     n |     acc |
    |------:|--------:|
    | 10071 | 0.7674  |
    |     2 | 1.2e-08 |
    """
    df = df.copy()
    for col in df.columns:
        values = df[col]
        if pd.api.types.is_float_dtype(values) and values.notna().any() and (values.dropna() % 1 == 0).all() \
                and values.abs().max() < 2**53:
            df[col] = values.astype("Int64")
    return df.to_markdown(index=index, floatfmt=".4g")


RECORD_SUFFIX = ".csv.gz"


def staging_dir(notebook: str, root: Path | None = None) -> Path:
    """Where a running notebook's outputs wait until it succeeds: <output root>/.staging/<run id>/<notebook>, the
    run's own (`runguard.run_id`): another run of the same notebook, even one left behind by a killed runner,
    never writes, removes or publishes these files."""
    return (root or output_dir()) / STAGING / run_id() / notebook


ENTRY_COLUMNS = ["ref", "quantity", "paper", "ours", "model", "basis", "tier", "notebook", "quick", "note"]


def scorecard_entries(root: Path | None = None) -> pd.DataFrame:
    """Every entry recorded with `Outputs.score` under tables/*/scorecard.jsonl (an entry without a valid
    basis raises: it was recorded before bases existed, so rerun its notebook)."""
    root = root or output_dir()
    rows = []
    for path in sorted((root / "tables").glob("*/scorecard.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                rows.append(json.loads(line))
                if rows[-1].get("basis") not in BASES:
                    raise ValueError(f"{path}: entry {rows[-1].get('quantity')!r} has basis {rows[-1].get('basis')!r}, "
                                     f"not one of {BASES}: rerun notebook {path.parent.name}")
    return pd.DataFrame(rows, columns=ENTRY_COLUMNS)


def paper_of(ref: str, notebook: str) -> str:
    """The paper a saved output belongs to: its ref's paper, or for companion refs the notebook's series.

    >>> paper_of("taxinli-fig-5", "51_x"), paper_of("companion-table-27", "22_phrasis_error_analysis")
    ('taxinli', 'phrasis')
    """
    paper = ref.split("-")[0]
    if paper != COMPANION:
        return paper
    owner = paper_of_notebook(notebook)
    return paper if owner is None else owner.name


RECORD_COLUMNS = ["notebook", "name", "paper", "ref", "filters", "text", "caption", "n_rows", "tier", "run", "path"]


def record_roots(checkout: Path | None = None) -> list[tuple[str, Path]]:
    """Where per-example records may lie, each with the run that writes there: $NLI_OUTPUT_DIR or the checkout (a
    full run), every quick run's outputs (runs/<profile>-quick/outputs) and runs/interactive (JupyterLab kernels
    and scripts). Records are never committed, so after `./run_all.sh --quick` only the quick run's folder has them.
    A process that publishes into the output root (a runner's kernel, or $NLI_OUTPUT_DIR set) reads only there: a
    run's outputs never list another run's records. `checkout`: the checkout (default `config.CHECKOUT`)."""
    from .config import CHECKOUT, INTERACTIVE_OUTPUTS

    checkout = CHECKOUT if checkout is None else checkout
    root = output_dir()
    if root == checkout:
        label = "full run"
    elif checkout is not None and root.name == "outputs" and root.parent.parent == checkout / "runs":
        label = f"quick run ({root.parent.name})"
    else:  # a label, never a path: the record list is an output, and outputs name no local folder
        label = "this run's outputs ($NLI_OUTPUT_DIR)"
    roots = [(label, root)]
    if checkout is not None and write_dir() != output_dir():
        runs = checkout / "runs"
        roots += [(f"quick run ({p.parent.name})", p) for p in sorted(runs.glob("*-quick/outputs"))]
        roots.append(("interactive kernels (runs/interactive)", checkout.joinpath(*INTERACTIVE_OUTPUTS)))
    seen, unique = set(), []
    for label, root in roots:
        if root.resolve() not in seen:
            seen.add(root.resolve())
            unique.append((label, root))
    return unique


def list_records(root: Path | None = None, roots: list[tuple[str, Path]] | None = None) -> pd.DataFrame:
    """One row per saved per-example record set: notebook, name, paper, filters, caption, n_rows, the run that
    wrote it and its path. With `root`, the sets under it; without, the newest copy of each set across
    `roots` (default `record_roots()`: a quick run's when it is newer than the last full run's), `run` saying
    which."""
    rows = {}
    for label, folder in ([("given", root)] if root is not None else roots or record_roots()):
        for side in sorted((folder / "tables").glob("*/records/*.json")):
            meta = json.loads(side.read_text())
            key = (meta["notebook"], meta["name"])
            mtime = side.stat().st_mtime
            if key in rows and rows[key][0] >= mtime:
                continue
            rows[key] = (mtime, {
                "notebook": meta["notebook"],
                "name": meta["name"],
                "paper": paper_of(meta["ref"], meta["notebook"]),
                "ref": meta["ref"],
                "filters": meta.get("filters", []),
                "text": meta.get("text", []),
                "caption": meta.get("caption", ""),
                "n_rows": meta.get("n_rows"),
                "tier": meta["tier"],
                "run": label,
                "path": str(side.parent / (side.stem + RECORD_SUFFIX)),
            })
    found = [row for _, row in sorted(rows.values(), key=lambda r: (r[1]["notebook"], r[1]["name"]))]
    return pd.DataFrame(found, columns=RECORD_COLUMNS)


def load_records(notebook: str, name: str, root: Path | None = None) -> pd.DataFrame:
    """Read back a record set written by `Outputs.records` (without `root`: its newest copy, `list_records`)."""
    if root is not None:
        path = root / "tables" / notebook / "records" / f"{name}{RECORD_SUFFIX}"
    else:
        sets = list_records()
        match = sets[(sets.notebook == notebook) & (sets.name == name)]
        path = Path(match.path.iloc[0]) if len(match) else \
            output_dir() / "tables" / notebook / "records" / f"{name}{RECORD_SUFFIX}"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist: run notebook {notebook} first (./run_all.sh --only {notebook[:2]}, or "
            f"./run_all.sh --quick)"
        )
    return pd.read_csv(path)


def _index_rows(root: Path) -> dict[str, dict]:
    """{path relative to the output root: index row} for every sidecar under root/tables and root/figures."""
    rows = {}
    for sub in ("tables", "figures"):
        for side in sorted((root / sub).glob("*/*.json")):
            meta = json.loads(side.read_text())
            ext = ".csv" if meta["kind"] == "table" else ".png"
            path = str(side.with_suffix(ext).relative_to(root))
            rows[path] = {"ref": meta["ref"], "kind": meta["kind"], "path": path, "notebook": meta["notebook"],
                          "tier": meta["tier"], "models": ";".join(meta["models"]), "caption": meta.get("caption", "")}
    return rows


def _index_frame(rows: dict) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame(columns=INDEX_COLUMNS)
    return pd.DataFrame(list(rows.values()), columns=INDEX_COLUMNS).sort_values(["ref", "path"])


def rebuild_index(root: Path | None = None) -> pd.DataFrame:
    """Regenerate tables/index.csv from every sidecar under tables/ and figures/."""
    root = root or output_dir()
    index = _index_frame(_index_rows(root))
    (root / "tables").mkdir(parents=True, exist_ok=True)
    atomic.write_text(root / "tables" / "index.csv", index.to_csv(index=False))  # never read half-written
    return index


def pending_index(out: Outputs) -> pd.DataFrame:
    """tables/index.csv as it will read once `out` is published (published outputs + this run's staged ones)."""
    rows = _index_rows(out.root)
    rows.update(_index_rows(out.staging))
    return _index_frame(rows)
