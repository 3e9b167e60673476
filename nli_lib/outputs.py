"""Write tables and figures with provenance sidecars, and keep tables/index.csv current.

    >>> out = Outputs("50_taxinli_dataset", params={"quick": True}, tier="offline", seed=0)   # doctest: +SKIP
    >>> out.table(df, "table-2", ref="taxinli-table-2", models=[])                          # doctest: +SKIP

Files: tables/<notebook>/<name>.{csv,md,json} and figures/<notebook>/<name>.{png,pdf,json}, under
$NLI_OUTPUT_DIR (the repository root by default). The JSON sidecar records notebook, parameters, git
commit, nli_lib hash, data sha256s used, model ids, seed and tier. `tables/index.csv` lists every
output with its paper reference key `<paper>-<table|fig>-<number>` (e.g. `taxinli-fig-5`).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .config import REPO_ROOT, output_dir
from .data.fetch import used_data

PAPERS = ("atoms", "phrasis", "ftc", "factnli", "taxinli", "companion")
INDEX_COLUMNS = ["ref", "kind", "path", "notebook", "tier", "models", "caption"]


def nli_lib_hash() -> str:
    """sha256 over the nli_lib sources (names and bytes), 12 hex digits."""
    h = hashlib.sha256()
    for path in sorted((REPO_ROOT / "nli_lib").rglob("*.py")):
        h.update(str(path.relative_to(REPO_ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip() or "uncommitted"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _check_ref(ref: str) -> None:
    parts = ref.split("-")
    if len(parts) < 3 or parts[0] not in PAPERS or parts[1] not in ("table", "fig"):
        raise ValueError(f"paper reference {ref!r} must look like '<paper>-<table|fig>-<number>' with paper in {PAPERS}")


@dataclass
class Outputs:
    """Output writer of one notebook run."""

    notebook: str  # notebook stem, e.g. '50_taxinli_dataset'
    params: dict = field(default_factory=dict)  # papermill parameters of the run
    tier: str = "offline"  # model tier that produced the numbers
    seed: int = 0  # random seed of the run
    written: list = field(default_factory=list)  # paths written so far

    def _sidecar(self, kind: str, name: str, ref: str, models, caption: str) -> dict:
        return {
            "kind": kind, "name": name, "ref": ref, "caption": caption, "notebook": self.notebook,
            "params": self.params, "git_commit": git_commit(), "nli_lib_hash": nli_lib_hash(),
            "data_sha256": used_data(), "models": list(models), "seed": self.seed, "tier": self.tier,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }

    def table(self, df: pd.DataFrame, name: str, ref: str, models=(), caption: str = "", index: bool = False) -> Path:
        """Write df as CSV + Markdown + sidecar; returns the CSV path."""
        _check_ref(ref)
        folder = output_dir() / "tables" / self.notebook
        folder.mkdir(parents=True, exist_ok=True)
        csv_path = folder / f"{name}.csv"
        df.to_csv(csv_path, index=index)
        header = f"**{ref}** — {caption} _(tier: {self.tier}; models: {', '.join(models) or 'none'})_\n\n"
        (folder / f"{name}.md").write_text(header + df.to_markdown(index=index, floatfmt=".4g") + "\n")
        (folder / f"{name}.json").write_text(json.dumps(self._sidecar("table", name, ref, models, caption), indent=1))
        self.written.append(csv_path)
        rebuild_index()
        return csv_path

    def figure(self, fig, name: str, ref: str, models=(), caption: str = "", dpi: int = 120) -> Path:
        """Save a matplotlib figure as PNG + PDF + sidecar; returns the PNG path."""
        _check_ref(ref)
        folder = output_dir() / "figures" / self.notebook
        folder.mkdir(parents=True, exist_ok=True)
        png = folder / f"{name}.png"
        fig.savefig(png, dpi=dpi, bbox_inches="tight")
        fig.savefig(folder / f"{name}.pdf", bbox_inches="tight")
        (folder / f"{name}.json").write_text(json.dumps(self._sidecar("figure", name, ref, models, caption), indent=1))
        self.written.append(png)
        rebuild_index()
        return png


def rebuild_index(root: Path | None = None) -> pd.DataFrame:
    """Regenerate tables/index.csv from every sidecar under tables/ and figures/."""
    root = root or output_dir()
    rows = []
    for sub in ("tables", "figures"):
        for side in sorted((root / sub).glob("*/*.json")):
            meta = json.loads(side.read_text())
            ext = ".csv" if meta["kind"] == "table" else ".png"
            rows.append({
                "ref": meta["ref"], "kind": meta["kind"], "path": str(side.with_suffix(ext).relative_to(root)),
                "notebook": meta["notebook"], "tier": meta["tier"], "models": ";".join(meta["models"]),
                "caption": meta.get("caption", ""),
            })
    index = pd.DataFrame(rows, columns=INDEX_COLUMNS).sort_values(["ref", "path"]) if rows else pd.DataFrame(columns=INDEX_COLUMNS)
    (root / "tables").mkdir(parents=True, exist_ok=True)
    index.to_csv(root / "tables" / "index.csv", index=False)
    return index
