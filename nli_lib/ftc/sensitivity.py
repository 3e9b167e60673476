"""§3.4 sensitivity analysis (Tables 6 and 12) and label flips under input-embedding noise (LRA's F, Appendix 7.4).

The paper makes explanations pathological by withholding inputs from its explanation generator: it sees
only the hypothesis x, only the premise u, or only the label y. The companion has no explanation
generator, so it takes explanations written for OTHER e-SNLI pairs that share only that input with the
pair (`pathological_explanations`):

* 'x only': the pair whose hypothesis is most similar (TF-IDF cosine) among pairs with a different
  premise and a different label;
* 'u only': a pair with the same premise (SNLI's sibling hypotheses) and a different label;
* 'y only': a random pair with the same label and a different premise.

'x,u,y' (faithful by construction, as far as human explanations are) is the pair's own explanation_1.
FTC is then computed exactly as for faithful explanations (counterfactual from the explanation and the
pair's own hypothesis, y_cf from the pair's label). Text similarity to the pair's own explanations
(explanation_2/3) is reported beside it, as the paper does with METEOR and BERTScore (BERTScore's
roberta-large is not available offline; a MiniLM embedding cosine stands in and is named so).

LAS and LRA (Table 6's other faithfulness columns) come from `simulate`: a TF-IDF simulator of the task
model reads the condition's explanation (`simulated_rows`); LRA's F is the task model's label surviving
Gaussian noise N(0, σ²) added to its input (word) embeddings (`noise_label_flips`). `noise_summary` also
relates those flips to FTC directly.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..config import LABELS
from ..evaluation import wilcoxon_rho
from ..hashing import digest
from ..models.base import has_attributes
from ..text import spaceless_key
from .analysis import METRIC_NAMES, METRICS, score_rows
from .logic import SLOTS
from .metrics import ALPHA, meteor
from .pipeline import PIPELINES, all_pipelines

CONDITIONS = ("x,u,y", "x only", "u only", "y only")  # Table 6 row order
SEEN = {"x,u,y": ("✓", "✓", "✓"), "x only": ("✓", "", ""), "u only": ("", "✓", ""), "y only": ("", "", "✓")}


def pathological_explanations(sample: pd.DataFrame, pool: pd.DataFrame, seed: int = 0,
                              explanation_col: str = "explanation_1") -> pd.DataFrame:
    """The sample's pairs once per condition, with column `explanation` set to the condition's explanation.

    Adds condition, donor_pair_id, donor_hypothesis, donor_label. A pair without a donor for a condition
    (no sibling with another label, say) has no row for it.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    pool = pool.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    pkey = pool["premise"].map(spaceless_key).to_numpy()
    plabel = pool["label"].to_numpy()
    pid = pool["pair_id"].to_numpy()
    by_premise: dict[str, list[int]] = {}
    for i, k in enumerate(pkey):
        by_premise.setdefault(k, []).append(i)
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True).fit(pool["hypothesis"])
    pool_x = vec.transform(pool["hypothesis"])
    sample = sample.reset_index(drop=True)
    sims = (vec.transform(sample["hypothesis"]) @ pool_x.T).toarray()
    rows = []
    for i, r in sample.iterrows():
        k = spaceless_key(r["premise"])
        donors = {"x,u,y": None}
        sib = [j for j in by_premise.get(k, []) if pid[j] != r["pair_id"] and plabel[j] != r["label"]]
        if sib:
            donors["u only"] = int(rng.choice(sib))
        same = np.flatnonzero((plabel == r["label"]) & (pkey != k))
        if len(same):
            donors["y only"] = int(rng.choice(same))
        s = np.where((pkey != k) & (plabel != r["label"]), sims[i], -1.0)
        if s.max() >= 0:
            donors["x only"] = int(s.argmax())
        for cond in CONDITIONS:
            if cond not in donors:
                continue
            j = donors[cond]
            rows.append({**r.to_dict(), "condition": cond,
                         "explanation": r[explanation_col] if j is None else pool.at[j, explanation_col],
                         "donor_pair_id": r["pair_id"] if j is None else pid[j],
                         "donor_hypothesis": r["hypothesis"] if j is None else pool.at[j, "hypothesis"],
                         "donor_label": r["label"] if j is None else plabel[j]})
    return pd.DataFrame(rows)


def sensitivity_rows(conditions: pd.DataFrame, model, rewriter, pipelines: Sequence[tuple[str, str]] = PIPELINES,
                     alpha: float = ALPHA) -> pd.DataFrame:
    """Counterfactuals and FTC for every condition × pipeline (one row per pair, slot, pipeline, condition)."""
    frames = []
    for cond in CONDITIONS:
        sub = conditions[conditions["condition"] == cond]
        if not len(sub):
            continue
        rows = all_pipelines(sub, rewriter, pipelines, explanation_col="explanation")
        rows["condition"] = cond
        frames.append(rows)
    scored = score_rows(pd.concat(frames, ignore_index=True), model, alpha=alpha)
    return scored


def explanation_similarity(conditions: pd.DataFrame, encoder=None, wordnet=None) -> pd.DataFrame:
    """Per (pair, condition): METEOR and (with `encoder`) embedding cosine of the explanation vs the pair's
    explanation_2 and explanation_3 (multi-reference METEOR; cosine = max over the references)."""
    refs = conditions[["explanation_2", "explanation_3"]].fillna("").astype(str).values.tolist()
    out = conditions[["pair_id", "label", "condition"]].copy()
    out["MET"] = [meteor(z, rr, wordnet=wordnet) for z, rr in zip(conditions["explanation"], refs)]
    if encoder is not None:
        texts = conditions["explanation"].astype(str).tolist()
        e = encoder.encode(texts)
        r2, r3 = encoder.encode([r[0] for r in refs]), encoder.encode([r[1] for r in refs])
        out["COS"] = np.maximum((e * r2).sum(1), (e * r3).sum(1))
    return out.reset_index(drop=True)


def _with_marks(df: pd.DataFrame) -> pd.DataFrame:
    marks = pd.DataFrame([SEEN[c] for c in df["condition"]], columns=["x", "u", "y"], index=df.index)
    return pd.concat([marks, df], axis=1)


def simulated_rows(conditions: pd.DataFrame, sim, task_pred: dict, robust: dict | None = None) -> pd.DataFrame:
    """LAS/LRA inputs per (pair, condition): the simulator reads the condition's explanation.

    `task_pred` maps pair_id -> the task model's label on the pair, `robust` pair_id -> whether that label
    survives the input noise (F of LRA). Returns `simulate.las_lra_rows` columns plus condition, label.
    """
    from .simulate import las_lra_rows

    conditions = conditions.reset_index(drop=True)
    pred = [task_pred[p] for p in conditions["pair_id"]]
    flags = [robust[p] for p in conditions["pair_id"]] if robust is not None else None
    rows = las_lra_rows(sim, conditions, pred, flags, explanation_col="explanation")
    rows.insert(1, "condition", conditions["condition"].to_numpy())
    rows.insert(2, "label", conditions["label"].to_numpy())
    return rows


def sensitivity_table(scored: pd.DataFrame, similarity: pd.DataFrame | None = None,
                      pipeline: str = "fsp-fsp", simulated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 6 layout: one row per condition; text similarity (MET, COS), LAS and LRA (with `simulated`,
    `simulated_rows` output) and FTC-δ/K/W means (one pipeline)."""
    from .simulate import las_score

    sub = scored[scored["pipeline"] == pipeline]
    rows = []
    for cond in CONDITIONS:
        g = sub[sub["condition"] == cond]
        if not len(g):
            continue
        ok = g[g["ok"]]
        row = {"condition": cond, "pairs": g["pair_id"].nunique(), "coverage": g["ok"].mean()}
        if similarity is not None:
            s = similarity[similarity["condition"] == cond]
            row["MET"] = s["MET"].mean()
            if "COS" in s:
                row["COS (embedding cosine, BERTScore stand-in)"] = s["COS"].mean()
        if simulated is not None:
            r = simulated[simulated["condition"] == cond]
            row["LAS"] = las_score(r)["LAS"]
            if "lra" in r:
                row["LRA"] = r["lra"].mean()
        row.update({METRIC_NAMES[m]: ok[m].mean() for m in METRICS})
        rows.append(row)
    return _with_marks(pd.DataFrame(rows))


def sensitivity_by_pipeline(scored: pd.DataFrame) -> pd.DataFrame:
    """Table 12 layout: rows = conditions; columns = '<metric> <pipeline>' (means over produced counterfactuals)."""
    ok = scored[scored["ok"]]
    table = ok.groupby(["condition", "pipeline"])[list(METRICS)].mean().unstack("pipeline")
    table.columns = [f"{METRIC_NAMES[m]} {p}" for m, p in table.columns]
    order = [f"{METRIC_NAMES[m]} {e}-{t}" for m in ("ftc_w", "ftc_delta", "ftc_k") for e, t in PIPELINES]
    table = table.reindex(
        index=[c for c in CONDITIONS if c in table.index], columns=[c for c in order if c in table.columns]
    )
    return _with_marks(table.reset_index())


def sensitivity_by_slot(
    scored: pd.DataFrame, pipeline: str = "fsp-fsp", metrics: Sequence[str] = METRICS
) -> pd.DataFrame:
    """Per label class (slot) and condition, one pipeline: coverage and the mean of each FTC variant over
    the produced counterfactuals (faithful vs pathological explanations per label, §3.4)."""
    sub = scored[scored["pipeline"] == pipeline]
    rows = []
    for cond in CONDITIONS:
        for slot in SLOTS:
            g = sub[(sub["condition"] == cond) & (sub["slot"] == slot)]
            if len(g):
                ok = g[g["ok"]]
                rows.append({"condition": cond, "slot": slot, "n": len(g), "coverage": g["ok"].mean(),
                             **{METRIC_NAMES[m]: ok[m].mean() if len(ok) else np.nan for m in metrics}})
    return pd.DataFrame(rows)


def sensitivity_rho(scored: pd.DataFrame, pipeline: str = "fsp-fsp") -> pd.DataFrame:
    """ρ of the rank-sum test faithful ('x,u,y') vs each pathological condition, per metric and slot.

    ρ > 0.5: FTC tends to be higher on the pair's own explanations (the 'correct' direction, §3.4).
    """
    sub = scored[(scored["pipeline"] == pipeline) & scored["ok"]]
    rows = []
    for cond in CONDITIONS[1:]:
        for slot in ("all",) + SLOTS:
            f = sub[(sub["condition"] == "x,u,y") & ((sub["slot"] == slot) | (slot == "all"))]
            p = sub[(sub["condition"] == cond) & ((sub["slot"] == slot) | (slot == "all"))]
            for m in METRICS:
                res = wilcoxon_rho(f[m], p[m])
                rows.append({"pathological": cond, "slot": slot, "metric": METRIC_NAMES[m], **res})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------
# Label flips under Gaussian noise on the input embeddings (F of LRA; `simulate` computes LRA itself)
# ---------------------------------------------------------------------------------------------------

NOISE_NAMESPACE = "ftc.noise"


def _pair_seed(*parts) -> int:
    return int(digest("\x1f".join(map(str, parts)), length=15), 16)


def perturbs_embeddings(model) -> bool:
    """Whether `noise_label_flips` can perturb `model`'s input embeddings: it has a Hugging Face `model` and
    `tokenizer`. Asked of the class (or the instance's own attributes), so a lazily loaded classifier whose
    predictions are all cached is not loaded by the question (``hasattr(model, "model")`` would load it).

    >>> class Lazy:
    ...     loads = 0
    ...     @property
    ...     def model(self):
    ...         Lazy.loads += 1
    ...     tokenizer = None
    >>> perturbs_embeddings(Lazy()), Lazy.loads, perturbs_embeddings(object())
    (True, 0, False)
    """
    return has_attributes(model, "model", "tokenizer")


def noise_label_flips(model, df: pd.DataFrame, scales: Sequence[float] = (0.5, 1.0, 2.0), draws: int = 1,
                      seed: int = 0, cache=None) -> pd.DataFrame:
    """The model's prediction on each pair with N(0, σ²) noise added to every input word embedding.

    σ = scale × (std of the model's word-embedding matrix). Noise is drawn per pair from a generator
    seeded by (seed, draw, scale, pair text), so results do not depend on batching; they are cached in
    the call cache (namespace 'ftc.noise'). Needs a Hugging Face classifier (`HFClassifier`).
    Returns pair_id, label, scale, sigma, draw, pred_clean, pred_noisy, flipped.
    """
    from ..cache import default_cache, probability_check

    if not perturbs_embeddings(model):
        raise TypeError(
            "noise_label_flips needs a Hugging Face classifier (HFClassifier): it perturbs input embeddings"
        )
    cache = cache or default_cache()
    # σ's base (std of the word-embedding matrix) is cached too, so a fully cached call never loads the model
    sigma_key = {"model": model.fingerprint, "quantity": "embedding std"}
    base_sigma = cache.get(NOISE_NAMESPACE, sigma_key, validate=lambda v: None if isinstance(v, (int, float)) and
                           np.isfinite(v) and v > 0 else f"σ base {v!r} is not a positive number")
    if base_sigma is None:
        base_sigma = float(model.model.get_input_embeddings().weight.detach().float().std())
        cache.put(NOISE_NAMESPACE, sigma_key, base_sigma)
    premises, hyps = df["premise"].astype(str).tolist(), df["hypothesis"].astype(str).tolist()
    clean = model.predict(premises, hyps)
    labels = list(model.labels)
    records = []
    for scale in scales:
        sigma = scale * base_sigma
        for draw in range(draws):
            keys = [{"model": model.fingerprint, "p": p, "h": h, "scale": scale, "draw": draw, "seed": seed}
                    for p, h in zip(premises, hyps)]
            cached = cache.get_many(NOISE_NAMESPACE, keys, validate=probability_check(len(labels)))
            todo = [i for i, v in enumerate(cached) if v is None]
            if todo:
                import torch

                from ..models.first_token import first_token_only

                emb = model.model.get_input_embeddings()
            for start in range(0, len(todo), model.batch_size):
                idx = todo[start : start + model.batch_size]
                enc = model.tokenizer([premises[i] for i in idx], [hyps[i] for i in idx], truncation=True,
                                      max_length=model.max_length, padding=True, return_tensors="pt")
                enc = {k: v.to(model.device) for k, v in enc.items()}
                noise = (
                    torch.stack(
                        [
                            torch.randn(
                                (model.max_length, emb.embedding_dim),
                                generator=torch.Generator().manual_seed(
                                    _pair_seed(seed, draw, scale, premises[i], hyps[i])
                                ),
                            )
                            for i in idx
                        ]
                    )[:, : enc["input_ids"].shape[1]].to(model.device)
                    * sigma
                )

                def hook(_module, _inputs, output, noise=noise):
                    return output + noise.to(output.dtype)

                handle = emb.register_forward_hook(hook)
                try:  # the head reads the last layer's first token: that layer runs for it alone (same numbers)
                    with torch.inference_mode(), first_token_only(model.model):
                        logits = model.model(**enc).logits.float()
                finally:
                    handle.remove()
                probs = torch.softmax(logits, dim=-1).cpu().numpy()[:, model.unit_for_label]
                cache.put_many(NOISE_NAMESPACE, [(keys[i], probs[k].tolist()) for k, i in enumerate(idx)])
                for k, i in enumerate(idx):
                    cached[i] = probs[k].tolist()
            for i, v in enumerate(cached):
                noisy = labels[int(np.argmax(v))]
                records.append({"pair_id": df["pair_id"].iloc[i], "label": df["label"].iloc[i], "scale": scale,
                                "sigma": sigma, "draw": draw, "pred_clean": clean[i], "pred_noisy": noisy,
                                "flipped": noisy != clean[i]})
    out = pd.DataFrame(records)
    out.attrs.update(model=model.name, base_sigma=base_sigma)
    return out


def noise_summary(flips: pd.DataFrame, scored: pd.DataFrame | None = None, pipeline: str = "fsp-fsp",
                  metric: str = "ftc_k") -> pd.DataFrame:
    """Flip rate per label and noise scale; with `scored` (faithful rows), ρ of the pair-mean FTC between
    robust (no flip) and flipped pairs — ρ > 0.5: pairs whose label survives the noise have higher FTC."""
    rows = []
    per_pair = None
    if scored is not None:
        sub = scored[(scored["pipeline"] == pipeline) & scored["ok"]]
        if "condition" in sub:
            sub = sub[sub["condition"] == "x,u,y"]
        per_pair = sub.groupby("pair_id")[metric].mean()
    for (scale, label), g in flips.groupby(["scale", "label"]):
        row = {
            "scale": scale,
            "sigma": g["sigma"].iloc[0],
            "label": label,
            "n": len(g),
            "flip_rate": g["flipped"].mean(),
        }
        if per_pair is not None:
            ftc = g.assign(ftc=g["pair_id"].map(per_pair)).dropna(subset=["ftc"])
            res = wilcoxon_rho(ftc.loc[~ftc["flipped"], "ftc"], ftc.loc[ftc["flipped"], "ftc"])
            row.update({f"rho {METRIC_NAMES[metric]} robust vs flipped": res["rho"], "p_value": res["p_value"],
                        "n_robust": res["n1"], "n_flipped": res["n0"]})
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["label"] = pd.Categorical(out["label"], LABELS, ordered=True)
        out = out.sort_values(["scale", "label"]).reset_index(drop=True)
        out["label"] = out["label"].astype(str)
    return out
