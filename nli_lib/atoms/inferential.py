"""§6 Inferential consistency: group δ-SNLI examples by equivalent critical atoms and score I_C.

1. Embed the unique critical atoms (the paper: NV-Embed-7B; here any sentence-transformers model, offline
   all-MiniLM-L6-v2) and draw an edge between two atoms when cosine >= 0.75 *and* the NLI model of §3.2
   predicts entailment in both directions.
2. Equivalence groups = the maximal cliques of that graph (networkx `find_cliques`, Tomita et al. 2006);
   an atom with no edge is its own clique, and an atom can sit in several maximal cliques.
3. Buckets: an example belongs to every clique holding one of its critical atoms, with its weight (1) split
   equally over those buckets.
4. θ_b = weighted accuracy of a model in bucket b; I_C = E_b[θ_b²] + E_b[(1 - θ_b)²] (Eq. 2), the mean over
   buckets; a bootstrap over buckets gives a 95% interval.

>>> rows = pd.DataFrame({"bucket": [0, 0, 1, 1], "pair_id": ["a", "b", "c", "d"], "weight": [1.0] * 4})
>>> theta = bucket_accuracy(rows, {"a": True, "b": True, "c": True, "d": False})["theta"].tolist(); theta
[1.0, 0.5]
>>> inferential_consistency(theta)          # ((1 + 0) + (0.25 + 0.25)) / 2
0.75

Singleton buckets (one example) always score 1: no pair of examples shares their atom. `table4` therefore
drops buckets with fewer than `min_examples` (default 2) examples and reports the all-bucket value beside it;
the paper does not say which it used.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import networkx as nx
import numpy as np
import pandas as pd


def equivalence_graph(atoms: Sequence[str], encoder, nli, threshold: float = 0.75) -> tuple[nx.Graph, pd.DataFrame]:
    """Graph over unique atoms: edge iff cosine >= threshold and mutual entailment. Returns (graph, edge rows)."""
    from ..models import cosine_matrix

    nodes = sorted(set(str(a) for a in atoms))
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    if len(nodes) < 2:
        return graph, pd.DataFrame(columns=["a", "b", "cosine", "a_entails_b", "b_entails_a", "edge"])
    emb = encoder.encode(nodes)
    sim = cosine_matrix(emb, emb)
    i, j = np.triu_indices(len(nodes), k=1)
    keep = sim[i, j] >= threshold
    i, j = i[keep], j[keep]
    cand = pd.DataFrame({"a": [nodes[k] for k in i], "b": [nodes[k] for k in j], "cosine": sim[i, j]})
    if len(cand):
        e = list(nli.labels).index("entailment")
        fwd = nli.predict_proba(cand["a"].tolist(), cand["b"].tolist()).argmax(1) == e
        bwd = nli.predict_proba(cand["b"].tolist(), cand["a"].tolist()).argmax(1) == e
        cand["a_entails_b"], cand["b_entails_a"] = fwd, bwd
        cand["edge"] = fwd & bwd
        graph.add_edges_from(cand.loc[cand["edge"], ["a", "b"]].itertuples(index=False, name=None))
    else:
        cand = cand.assign(a_entails_b=[], b_entails_a=[], edge=[])
    return graph, cand


def atom_cliques(graph: nx.Graph) -> list[tuple[str, ...]]:
    """Maximal cliques (each sorted; the list sorted by size descending, then text) — isolated atoms included."""
    cliques = [tuple(sorted(c)) for c in nx.find_cliques(graph)]
    return sorted(cliques, key=lambda c: (-len(c), c))


def buckets(critical: pd.DataFrame, cliques: Sequence[Sequence[str]]) -> pd.DataFrame:
    """Example-to-bucket rows with fractional weights.

    `critical`: one row per (pair_id, critical atom). An example's weight 1 is split equally over every
    bucket (clique) that holds at least one of its critical atoms.
    """
    member: dict[str, list[int]] = {}
    for b, clique in enumerate(cliques):
        for atom in clique:
            member.setdefault(atom, []).append(b)
    rows = []
    for pid, atoms in critical.groupby("pair_id", sort=False)["atom"]:
        ids = sorted({b for a in atoms for b in member.get(str(a), [])})
        rows += [{"bucket": b, "pair_id": pid, "weight": 1.0 / len(ids)} for b in ids]
    return pd.DataFrame(rows, columns=["bucket", "pair_id", "weight"])


def bucket_accuracy(bucket_rows: pd.DataFrame, correct: Mapping[str, bool] | pd.Series) -> pd.DataFrame:
    """θ per bucket: Σ weight·correct / Σ weight, with the number of examples and total weight."""
    correct = pd.Series(correct) if not isinstance(correct, pd.Series) else correct
    df = bucket_rows.assign(correct=bucket_rows["pair_id"].map(correct).astype(float))
    df = df[df["correct"].notna()]
    df["wc"] = df["weight"] * df["correct"]
    g = df.groupby("bucket")
    out = pd.DataFrame(
        {"n_examples": g.size(), "weight": g["weight"].sum(), "theta": g["wc"].sum() / g["weight"].sum()}
    )
    return out.reset_index()


def inferential_consistency(theta: Sequence[float]) -> float:
    """I_C = mean over buckets of θ² + (1 - θ)² (Eq. 2)."""
    t = np.asarray(theta, dtype=float)
    return float(np.mean(t ** 2 + (1 - t) ** 2)) if len(t) else float("nan")


def ic_bootstrap(theta: Sequence[float], n_boot: int = 2000, seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap interval of I_C, resampling buckets with replacement."""
    t = np.asarray(theta, dtype=float)
    if len(t) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    per = t ** 2 + (1 - t) ** 2
    stats = per[rng.integers(0, len(t), size=(n_boot, len(t)))].mean(axis=1)
    return float(np.quantile(stats, alpha / 2)), float(np.quantile(stats, 1 - alpha / 2))


def table4(bucket_rows: pd.DataFrame, correct: Mapping[str, pd.Series], tiers: Mapping[str, str] | str = "offline",
           min_examples: int = 2, seed: int = 0) -> pd.DataFrame:
    """Table 4: I_C (%) per model over buckets with >= min_examples examples, bootstrap 95% CI, all-bucket I_C."""
    rows = []
    for model, corr in correct.items():
        acc = bucket_accuracy(bucket_rows, corr)
        used = acc[acc["n_examples"] >= min_examples]
        lo, hi = ic_bootstrap(used["theta"], seed=seed)
        rows.append(
            {
                "model": model,
                "tier": tiers if isinstance(tiers, str) else tiers[model],
                "buckets": len(used),
                "examples": int(bucket_rows.loc[bucket_rows["bucket"].isin(used["bucket"]), "pair_id"].nunique()),
                "inferential_consistency": 100 * inferential_consistency(used["theta"]),
                "ci_low": 100 * lo,
                "ci_high": 100 * hi,
                "accuracy_in_buckets": 100 * float((used["theta"] * used["weight"]).sum() / used["weight"].sum())
                if len(used)
                else np.nan,
                "ic_all_buckets": 100 * inferential_consistency(acc["theta"]),
                "min_examples": min_examples,
            }
        )
    return pd.DataFrame(rows)


def top_critical_atoms(bucket_rows: pd.DataFrame, cliques: Sequence[Sequence[str]], critical: pd.DataFrame,
                       k: int = 10) -> pd.DataFrame:
    """The most frequent critical atoms: buckets by number of examples, named by their most common atom."""
    counts = bucket_rows.groupby("bucket").agg(examples=("pair_id", "nunique"), weight=("weight", "sum"))
    freq = critical["atom"].value_counts()
    rows = []
    for b, r in counts.sort_values(["examples", "weight"], ascending=False).head(k).iterrows():
        clique = list(cliques[b])
        rep = max(clique, key=lambda a: (freq.get(a, 0), -len(a)))
        rows.append({"bucket": b, "critical_atom": rep, "examples": int(r["examples"]), "weight": float(r["weight"]),
                     "clique_size": len(clique), "members": " | ".join(clique)})
    return pd.DataFrame(rows)


def equivalent_examples(atom: str, critical: pd.DataFrame, encoder, nli, threshold: float = 0.75) -> pd.DataFrame:
    """Examples whose critical atoms include `atom` or an atom equivalent to it by the graph's edge rule
    (cosine >= threshold and mutual entailment): how we count the paper's top critical atoms in our data.

    Returns the matching (pair_id, atom) rows of `critical` with a `match` column ('exact' or 'equivalent').
    """
    from ..models import cosine_matrix

    norm = lambda t: " ".join(str(t).lower().rstrip(".").split())  # noqa: E731
    atoms = sorted(set(critical["atom"].astype(str)))
    exact = {a for a in atoms if norm(a) == norm(atom)}
    others = [a for a in atoms if a not in exact]
    equivalent: set[str] = set()
    if others:
        sim = cosine_matrix(encoder.encode([atom]), encoder.encode(others))[0]
        cand = [a for a, s in zip(others, sim) if s >= threshold]
        if cand:
            e = list(nli.labels).index("entailment")
            fwd = nli.predict_proba([atom] * len(cand), cand).argmax(1) == e
            bwd = nli.predict_proba(cand, [atom] * len(cand)).argmax(1) == e
            equivalent = {a for a, f, b in zip(cand, fwd, bwd) if f and b}
    rows = critical[critical["atom"].isin(exact | equivalent)].copy()
    rows["match"] = np.where(rows["atom"].isin(exact), "exact", "equivalent")
    return rows


def bucket_records(bucket_rows: pd.DataFrame, cliques: Sequence[Sequence[str]], examples: pd.DataFrame,
                   correct: Mapping[str, pd.Series]) -> pd.DataFrame:
    """One row per (bucket, example, model): the bucket's atoms, the example's texts, its weight and whether the
    model's full prediction was correct; the rows behind Table 4 (filterable by model and correctness)."""
    size = bucket_rows.groupby("bucket")["pair_id"].nunique()
    out = bucket_rows.copy()
    out["bucket_examples"] = out["bucket"].map(size)
    out["bucket_size"] = pd.cut(
        out["bucket_examples"], [0, 1, 2, 5, 10, np.inf], labels=["1", "2", "3-5", "6-10", ">10"]
    ).astype(str)
    out["critical_atoms"] = out["bucket"].map(lambda b: " | ".join(cliques[b]))
    cols = ["pair_id", "premise", "hypothesis", "update", "update_type"]
    out = out.merge(examples[cols].drop_duplicates("pair_id"), on="pair_id", how="left")
    frames = [out.assign(model=model, correct=out["pair_id"].map(corr)) for model, corr in correct.items()]
    return pd.concat(frames, ignore_index=True) if frames else out.assign(model=None, correct=None)
