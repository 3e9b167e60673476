"""How good each offline stand-in is, from a fresh sample of its output judged by hand after its last change.

The gold sets of `atoms.gold`, `ftc.gold` and `factnli.gold` are where the stand-ins' checks were tuned: their
precision is in sample. The number a notebook prints for a stand-in comes from here instead: a sample drawn with a
seed from the stand-in's *current* output on inputs none of those gold sets holds, read and judged by a person,
and stamped with the hash of the stand-in's code it was drawn from (`code_hash`). When the code changes, the
judgement no longer measures it: `notice` says so, and how to draw a new sample.

    python -m nli_lib.judged status            # each stand-in: judged against the current code, or not
    python -m nli_lib.judged status --check    # the same; exit 1 when a judgement is older than its code
    python -m nli_lib.judged draw ftc --n 80 --seed 5   # a fresh sample to judge (overwrites the file)

Files, per stand-in (`STAND_INS`), under data/fixtures/judged/:

* `<name>.csv`: one row per drawn item: item, stratum (what the precision is also shown by: source, level,
  pipeline), input (what the stand-in was given), output (what it wrote), then the judgement columns (`ok`,
  FactNLI also `scene`: 1 yes, 0 no, blank not judged yet), why, code_hash (of the code the item came from);
* `<name>.json`: how the sample was drawn (seed, population, what was kept out) and the stand-in's coverage on
  that population (`coverage`: inputs, outputs, and counts such as FTC's unchanged copies);
* `<name>.md`: the rubric the judge applied (written beside the file, before judging).

Precision is k of n judged items with a Wilson 95 % interval, overall and per stratum:

>>> items = pd.DataFrame({"stratum": ["a", "a", "b", "b"], "ok": [1, 0, 1, 1]})
>>> precision(items)[["stratum", "n", "k", "precision"]].values.tolist()
[['all', 4, 3, 0.75], ['a', 2, 1, 0.5], ['b', 2, 2, 1.0]]
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import REPO_ROOT
from ..evaluation import wilson_interval

JUDGED_DIR = REPO_ROOT / "data" / "fixtures" / "judged"
COLUMNS = ("item", "stratum", "input", "output", "ok", "why", "code_hash")
#: Modules of a paper package that are not its stand-ins' code: the paper's printed values and declarations
#: (`<paper>.paper`), its prompts for an LLM and the Wikipedia client of the paper tier.
NOT_STAND_IN = (".paper", ".prompts", ".wikipedia")
#: Coverage broken down in a sample's .json: key -> (covered, of) counts of each part.
PARTS = {"per_level": ("with_facts", "premises"), "per_source": ("with_ok_atom", "hypotheses"),
         "per_pipeline": ("ok", "slots")}


@dataclass(frozen=True)
class StandIn:
    """An offline stand-in whose output is judged by hand."""

    name: str  # file stem under data/fixtures/judged/
    title: str  # what it makes, for a reader
    modules: tuple[str, ...]  # the modules that make the output (their import closure is followed)
    within: tuple[str, ...]  # the module prefixes of that closure that are the stand-in (not the library around it)
    judgements: tuple[str, ...] = ("ok",)  # judgement columns (1/0)
    fixtures: tuple[str, ...] = ()  # data files (repo-relative) it reads: a refit verifier is a change too

    def command(self) -> str:
        """The command that draws a fresh sample to judge."""
        return f"python -m nli_lib.judged draw {self.name}"


STAND_INS = {s.name: s for s in (
    StandIn("ftc", "FTC counterfactuals of the four offline pipelines (rewrites; unchanged copies counted apart)",
            ("nli_lib.ftc.pipeline",), ("nli_lib.ftc.", "nli_lib.text"),
            fixtures=("data/fixtures/ftc/verifier.json",)),
    StandIn("atoms", "atoms of the offline rule decomposer (δ-SNLI-TEST and SNLI test hypotheses)",
            ("nli_lib.atoms.generate",), ("nli_lib.atoms.decompose", "nli_lib.atoms.generate",
                                          "nli_lib.atoms.grammar", "nli_lib.text")),
    StandIn("factnli", "FactNLI facts fused by the offline generator (WordNet senses, gloss rules, rule B.1)",
            ("nli_lib.factnli.pipeline",), ("nli_lib.factnli.", "nli_lib.atoms.decompose", "nli_lib.atoms.grammar",
                                            "nli_lib.data.wordnet", "nli_lib.text"),
            judgements=("ok", "scene")),
)}


def stand_in(name: str) -> StandIn:
    if name not in STAND_INS:
        raise KeyError(f"unknown stand-in {name!r}; one of {sorted(STAND_INS)}")
    return STAND_INS[name]


def code_hash(spec: StandIn, graph=None, root: Path = REPO_ROOT) -> str:
    """12 hex digits over the code texts of the stand-in's modules (`codehash`: docstrings, comments and blank
    lines do not count) and the bytes of its fixtures. The modules are the import closure of `spec.modules`
    restricted to `spec.within`: a change in the runner or the cache is not a change in how atoms are written."""
    from .. import codehash
    from ..hashing import digest

    g = codehash.graph() if graph is None else graph
    modules = [m for m in g.closure(set(spec.modules))
               if (m in spec.modules or m.startswith(spec.within)) and not m.endswith(NOT_STAND_IN)]
    return digest(g.hash(modules), *((root / f).read_bytes() for f in spec.fixtures), length=12)


@dataclass(frozen=True)
class Judged:
    """A stand-in's judged sample: `items` (COLUMNS + judgement columns) and `meta` (the .json)."""

    spec: StandIn
    items: pd.DataFrame
    meta: dict

    @property
    def code_hash(self) -> str:
        return self.meta["code_hash"]

    def unjudged(self) -> int:
        """Items with a judgement left blank."""
        return int(self.items[list(self.spec.judgements)].isna().any(axis=1).sum())


def paths(name: str, folder: Path = JUDGED_DIR) -> tuple[Path, Path]:
    return folder / f"{name}.csv", folder / f"{name}.json"


def load(name: str, folder: Path = JUDGED_DIR) -> Judged:
    """The judged sample of a stand-in; raises ValueError on a missing column, a judgement other than 0/1/blank,
    or an item drawn from other code than the sample's (one sample, one code hash)."""
    spec = stand_in(name)
    csv, meta_path = paths(name, folder)
    items = pd.read_csv(csv, dtype={"code_hash": str, "why": str}, keep_default_na=False, na_values={
        j: [""] for j in spec.judgements})
    meta = json.loads(meta_path.read_text())
    missing = [c for c in (*COLUMNS, *spec.judgements) if c not in items]
    if missing:
        raise ValueError(f"{csv}: missing column(s) {missing}")
    for j in spec.judgements:
        bad = items.index[~items[j].isna() & ~items[j].isin([0, 1])].tolist()
        if bad:
            raise ValueError(f"{csv}: rows {[i + 2 for i in bad][:10]} have a {j!r} other than 1, 0 or blank")
    others = sorted(set(items["code_hash"]) - {meta["code_hash"]})
    if others:
        raise ValueError(f"{csv}: items drawn from code {others}, the sample from {meta['code_hash']}")
    return Judged(spec, items, meta)


def rate(k: int, n: int) -> dict:
    """k of n with the share and its Wilson 95 % interval (NaN when n = 0).

    >>> rate(9, 10)
    {'n': 10, 'k': 9, 'precision': 0.9, 'ci_low': 0.5958, 'ci_high': 0.9821}
    """
    lo, hi = wilson_interval(k, n)
    return {"n": n, "k": k, "precision": round(k / n, 4) if n else float("nan"), "ci_low": lo, "ci_high": hi}


def precision(items: pd.DataFrame, column: str = "ok") -> pd.DataFrame:
    """Share of judged items with `column` == 1, overall and per stratum (blank judgements are not counted)."""
    judged = items[~items[column].isna()]
    parts = [("all", judged), *((s, g) for s, g in judged.groupby("stratum", sort=True))]
    return pd.DataFrame([{"stratum": s, **rate(int((g[column] == 1).sum()), len(g))} for s, g in parts])


def coverage(meta: dict) -> dict:
    """The stand-in's coverage on the population the sample came from: outputs (the kind the sample is drawn
    from) per input, with a Wilson interval; `meta['coverage']` holds the counts.

    >>> coverage({"coverage": {"inputs": 200, "outputs": 20, "unit": "slots"}})["coverage"]
    0.1
    """
    c = meta["coverage"]
    r = rate(int(c["outputs"]), int(c["inputs"]))
    return {"inputs": r["n"], "outputs": r["k"], "coverage": r["precision"], "coverage_low": r["ci_low"],
            "coverage_high": r["ci_high"], "unit": c.get("unit", "")}


def notice(judged: Judged, current: str | None = None) -> str:
    """'' when the sample was judged against the stand-in's current code; else the line a notebook prints."""
    current = code_hash(judged.spec) if current is None else current
    if judged.code_hash == current:
        return ""
    return (f"judged against code older than the current stand-in ({judged.spec.name}: judged {judged.code_hash}, "
            f"code now {current}): the precision below measures the earlier code; re-judge with "
            f"`{judged.spec.command()}`")


def report(name: str, folder: Path = JUDGED_DIR, current: str | None = None) -> tuple[pd.DataFrame, str]:
    """(table, notice): per judgement column and stratum n, k, precision, Wilson CI, with the coverage beside it
    and the code hash judged; the notice is '' when that hash is the current one."""
    judged = load(name, folder)
    rows = []
    for column in judged.spec.judgements:
        t = precision(judged.items, column)
        rows.append(t.assign(judgement=column))
    table = pd.concat(rows, ignore_index=True)
    cov = coverage(judged.meta)
    table = table.assign(stand_in=name, **{k: v for k, v in cov.items()}, judged_code=judged.code_hash,
                         unjudged=judged.unjudged())
    front = ["stand_in", "judgement", "stratum", "n", "k", "precision", "ci_low", "ci_high"]
    return table[front + [c for c in table if c not in front]], notice(judged, current)


def summary_line(table: pd.DataFrame, judgement: str = "ok") -> str:
    """One line: the overall precision of a `report` table, its interval and the coverage.

    >>> t = pd.DataFrame([{"stand_in": "x", "judgement": "ok", "stratum": "all", "n": 10, "k": 9, "precision": 0.9,
    ...                    "ci_low": 0.5958, "ci_high": 0.9821, "coverage": 0.1, "outputs": 20, "inputs": 200,
    ...                    "unit": "slots", "judged_code": "abc"}])
    >>> summary_line(t)
    'x: 9/10 judged ok = 0.900 (95% CI 0.596–0.982) on a fresh sample of code abc; coverage 20/200 slots = 0.100'
    """
    r = table[(table["judgement"] == judgement) & (table["stratum"] == "all")].iloc[0]
    return (f"{r.stand_in}: {r.k}/{r.n} judged {judgement} = {r.precision:.3f} (95% CI {r.ci_low:.3f}–"
            f"{r.ci_high:.3f}) on a fresh sample of code {r.judged_code}; coverage {r.outputs}/{r.inputs} {r.unit} "
            f"= {r.coverage:.3f}")


def lines(name: str, folder: Path = JUDGED_DIR, current: str | None = None) -> tuple[str, pd.DataFrame]:
    """(text, table): per judgement the overall line (`summary_line`) and the strata (source, level, slot), the
    outputs counted apart (FTC's unchanged copies), and the staleness notice when the code changed since."""
    table, note = report(name, folder, current)
    out = []
    for judgement in dict.fromkeys(table["judgement"]):
        out.append(summary_line(table, judgement))
        strata = table[(table["judgement"] == judgement) & (table["stratum"] != "all")]
        out.append("  by " + ", ".join(f"{r.stratum} {r.k}/{r.n} = {r.precision:.3f} ({r.ci_low:.3f}–{r.ci_high:.3f})"
                                       for r in strata.itertuples(index=False)))
    c = load(name, folder).meta["coverage"]
    for key, (part, whole) in PARTS.items():
        if isinstance(c.get(key), dict):
            out.append("  coverage by " + ", ".join(
                f"{k} {v[part] - v.get('ok_copies', 0)}/{v[whole]}" + (f" (+{v['ok_copies']} copies)"
                                                                       if "ok_copies" in v else "")
                for k, v in c[key].items()))
    if "ok_copies" in c:
        out.append(f"  unchanged copies of the hypothesis marked ok: {c['ok_copies']} of {c['ok']} ok slots (not "
                   "judged: a copy rewrites nothing; counted apart from the rewrites above)")
    if note:
        out.append(f"NOTE: {note}")
    return "\n".join(out), table


def show(name: str, folder: Path = JUDGED_DIR) -> pd.DataFrame:
    """Print `lines` (with the staleness notice when the code changed since the sample was judged); return the
    table."""
    text, table = lines(name, folder)
    print(text)
    return table


def draw(name: str, n: int, seed: int, make, folder: Path = JUDGED_DIR) -> tuple[Path, Path]:
    """Draw a fresh sample with `make(n, seed) -> (items, meta)` (the stand-in's draw function, `__main__`) and
    write it to be judged: blank judgements, the stand-in's current code hash on every item and in the meta."""
    spec = stand_in(name)
    items, meta = make(n, seed)
    h = code_hash(spec)
    items = items.assign(code_hash=h)
    for j in spec.judgements:
        items[j] = ""
    items["why"] = ""
    items = items[[*COLUMNS[:4], *spec.judgements, "why", "code_hash",
                   *[c for c in items if c not in (*COLUMNS, *spec.judgements)]]]
    csv, meta_path = paths(name, folder)
    folder.mkdir(parents=True, exist_ok=True)
    items.to_csv(csv, index=False)
    meta_path.write_text(json.dumps({"stand_in": name, "code_hash": h, "seed": seed, "n": len(items), **meta},
                                    indent=1, default=str) + "\n")
    return csv, meta_path


def status(folder: Path = JUDGED_DIR) -> tuple[str, int]:
    """(text, stale): every stand-in's `lines`, and how many were judged against older code."""
    texts, stale = [], 0
    for name in STAND_INS:
        text, _ = lines(name, folder)
        texts.append(text if "NOTE:" in text else text + "\n  judged against the current code")
        stale += "NOTE:" in text
    return "\n".join(texts), stale
