"""Counterfactual hypotheses from explanations: extract (regex | FSP) × transform (regex | FSP) (§2.4, Fig. 2).

`counterfactual_rows` returns one row per (pair, counterfactual slot) — E, C, N[A], N[B] — with the spans,
the counterfactual and, for failures, the reason (kept as rows for inspection, never dropped silently).

Regex transform (`regex_transform`): stem-tolerant substitution (`text.find_span`):

* E, C: the span found in the hypothesis is replaced by the other one (x[B\\A], or x[A\\B] when only B
  occurs); when both occur, A is replaced (the printed direction) and the row says so;
* N: x_cf[A] = the hypothesis with B replaced by A; x_cf[B] = the hypothesis with A replaced by B,
  or — when A does not occur — with its B span re-worded as B (the neutral claim kept).

Every produced counterfactual, whatever made it (regex, FSP stand-ins, an LLM), goes through the
well-formedness checks of `validity.check_counterfactual`; `status` says what became of each slot:
'ok', 'malformed' (produced, but a check fired: `reason` names the checks, x_cf kept for inspection; a
counterfactual equal to the hypothesis is one, except for N[B], which may keep the hypothesis, Proposition 3)
or 'failed' (nothing produced: no template, span not in the hypothesis, unparsable answer). A counterfactual
that passes the checks is then scored by the verifier learned from the gold set (`verifier.low_scores`); below
its threshold it is 'malformed' too (reason 'low_verifier_score: p=0.41'). `ok` is status == 'ok'; only ok
rows are scored.

>>> hypothesis = "Two kids walk home from school ."
>>> rows = regex_transform(hypothesis, "walking down a sidewalk", "walk home from school", "neutral")
>>> [(r.slot, r.x_cf) for r in rows]
[('N[A]', 'Two kids walking down a sidewalk .'), ('N[B]', 'Two kids walk home from school .')]
>>> regex_transform("There is a cat running", "dog", "cat", "contradiction")[0].x_cf
'There is a dog running'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..text import untokenize_ptb
from .fewshot import FewShotRewriter
from .logic import SHORT, as_label, counterfactual_targets
from .templates import extract_regex
from .text import find_span, replace_at
from .validity import check_cached

# Bump when a change to the extract/transform code changes counterfactual texts (gold-set items record it).
TRANSFORM_VERSION = 2
METHODS = ("regex", "fsp")


def pipeline_version() -> str:
    """Version of the counterfactual generators: TRANSFORM_VERSION + a hash of the modules that make the text
    (text, templates, fewshot, pipeline; not the validity checks, which only set ok/status).

    >>> pipeline_version().startswith(f"v{TRANSFORM_VERSION}+")
    True
    """
    from pathlib import Path

    from ..hashing import files_hash

    here = Path(__file__).parent
    sources = ("text.py", "templates.py", "fewshot.py", "pipeline.py", "../text.py")
    return f"v{TRANSFORM_VERSION}+{files_hash((here / f for f in sources), length=10)}"
PIPELINES = (("regex", "regex"), ("regex", "fsp"), ("fsp", "regex"), ("fsp", "fsp"))  # Table 4 row order


def pipeline_name(extract: str, transform: str) -> str:
    return f"{extract}-{transform}"


@dataclass(frozen=True)
class Rewrite:
    """One counterfactual slot produced by a transform step."""

    slot: str  # 'E', 'C', 'N[A]', 'N[B]'
    y_cf: str  # derived counterfactual label
    x_cf: str | None  # counterfactual hypothesis (None: failed)
    reason: str = ""  # why it failed, or a note ('both spans in hypothesis', 'A→B', ...)


def regex_transform(hypothesis: str, a: str, b: str, label: str) -> list[Rewrite]:
    """Regex substitution for every slot of `label` (see module doc)."""
    label = as_label(label)
    targets = counterfactual_targets(label)
    ma, mb = find_span(hypothesis, a), find_span(hypothesis, b)
    if label != "neutral":
        t = targets[0]
        if ma is not None and mb is not None:
            return [Rewrite(t.slot, t.y_cf, replace_at(hypothesis, ma, b), "both spans in hypothesis: A→B")]
        if ma is not None:
            return [Rewrite(t.slot, t.y_cf, replace_at(hypothesis, ma, b), f"A→B ({ma.kind})")]
        if mb is not None:
            return [Rewrite(t.slot, t.y_cf, replace_at(hypothesis, mb, a), f"B→A ({mb.kind})")]
        return [Rewrite(t.slot, t.y_cf, None, "transform: neither span in hypothesis")]
    t_a, t_b = targets
    x_a = Rewrite(t_a.slot, t_a.y_cf, replace_at(hypothesis, mb, a), f"B→A ({mb.kind})") if mb is not None else \
        Rewrite(t_a.slot, t_a.y_cf, None, "transform: B not in hypothesis")
    if ma is not None:
        x_b = Rewrite(t_b.slot, t_b.y_cf, replace_at(hypothesis, ma, b), f"A→B ({ma.kind})")
    elif mb is not None:
        x_b = Rewrite(t_b.slot, t_b.y_cf, replace_at(hypothesis, mb, b), f"B kept ({mb.kind})")
    else:
        x_b = Rewrite(t_b.slot, t_b.y_cf, None, "transform: neither span in hypothesis")
    return [x_a, x_b]


def _failure(parsed) -> str:
    """Why an FSP step gave nothing: the stand-in has no rule, the call failed, or the answer did not parse."""
    if parsed.error and parsed.error.startswith(("no answer", "call failed")):
        return parsed.error
    return f"unparsable answer ({parsed.error})"


def _fsp_rewrites(parsed, label: str) -> list[Rewrite]:
    targets = counterfactual_targets(label)
    if not parsed.ok:
        return [Rewrite(t.slot, t.y_cf, None, f"transform: {_failure(parsed)}") for t in targets]
    if as_label(label) == "neutral":
        return [Rewrite(targets[0].slot, targets[0].y_cf, parsed.value["A"]),
                Rewrite(targets[1].slot, targets[1].y_cf, parsed.value["B"])]
    return [Rewrite(targets[0].slot, targets[0].y_cf, parsed.value)]


ROW_COLUMNS = ["pair_id", "premise", "hypothesis", "label", "explanation", "pipeline", "extract", "transform",
               "template", "A", "B", "extract_ok", "slot", "y_cf", "x_cf", "ok", "status", "changed", "reason",
               "extract_shots", "transform_shots",  # priming examples in the FSP prompt sent (None: regex/not sent)
               "extract_shots_dropped", "transform_shots_dropped"]  # examples left out to fit the context


def counterfactual_rows(df: pd.DataFrame, extract: str = "regex", transform: str = "regex",
                        rewriter: FewShotRewriter | None = None, explanation_col: str = "explanation_1",
                        label_col: str = "label", progress: bool = False, verify: bool = True) -> pd.DataFrame:
    """One row per (pair, slot) with spans A/B, the counterfactual x_cf, status ('ok' | 'malformed' | 'failed'),
    ok (= status 'ok'), changed and a reason (the transform's note, or why the slot is not ok).

    `df` needs premise, hypothesis, pair_id, `label_col` (the label the explanation explains) and
    `explanation_col`. FSP steps need `rewriter` (`FewShotRewriter.offline()` or `.from_llm(client)`).
    `verify`: rule-passing rows also go through the learned verifier (`verifier.low_scores`); False: rules only
    (what the verifier itself is fit on). An FSP transformation answer whose counterfactual a rule check finds
    malformed counts toward the notebook's failure gate (`CachedChat.reject` of the transform's client).
    """
    if extract not in METHODS or transform not in METHODS:
        raise ValueError(f"extract/transform must be one of {METHODS}")
    if "fsp" in (extract, transform) and rewriter is None:
        raise ValueError("FSP steps need a FewShotRewriter (FewShotRewriter.offline() offline)")
    df = df.reset_index(drop=True)
    labels = [as_label(x) for x in df[label_col]]
    explanations = df[explanation_col].fillna("").astype(str).tolist()
    # Extract
    if extract == "regex":
        ex = [extract_regex(z, y) for z, y in zip(explanations, labels)]
        spans = [(e.A, e.B, e.template, "" if e.ok else "extract: no template matched") for e in ex]
    else:
        parsed = rewriter.extract(explanations, labels, progress=progress)
        spans = [(p.value["A"], p.value["B"], None, "") if p.ok else (None, None, None, f"extract: {_failure(p)}")
                 for p in parsed]
        extract_shots = [(getattr(p, "shots", None), getattr(p, "dropped", 0)) for p in parsed]
    if extract == "regex":
        extract_shots = [(None, 0)] * len(df)
    # Transform
    ok_idx = [i for i, s in enumerate(spans) if s[0] and s[1]]
    rewrites: dict[int, list[Rewrite]] = {}
    transform_shots: dict[int, tuple[int | None, int]] = {}
    transform_raw: dict[int, str] = {}  # pair -> the FSP transformation answer its counterfactuals come from
    if transform == "regex":
        for i in ok_idx:
            rewrites[i] = regex_transform(df.at[i, "hypothesis"], spans[i][0], spans[i][1], labels[i])
    elif ok_idx:
        parsed = rewriter.transform([df.at[i, "hypothesis"] for i in ok_idx], [spans[i][0] for i in ok_idx],
                                    [spans[i][1] for i in ok_idx], [labels[i] for i in ok_idx], progress=progress)
        for i, p in zip(ok_idx, parsed):
            rewrites[i] = _fsp_rewrites(p, labels[i])
            transform_raw[i] = p.raw
            transform_shots[i] = (getattr(p, "shots", None), getattr(p, "dropped", 0))
    rows, produced_rows = [], []  # every row; (row, the transform's note) of each counterfactual to be checked
    for i in range(len(df)):
        a, b, template, why = spans[i]
        base = {"pair_id": df.at[i, "pair_id"], "premise": df.at[i, "premise"], "hypothesis": df.at[i, "hypothesis"],
                "label": labels[i], "explanation": explanations[i], "pipeline": pipeline_name(extract, transform),
                "extract": extract, "transform": transform, "template": template, "A": a, "B": b,
                "extract_ok": i in rewrites, "extract_shots": extract_shots[i][0],
                "transform_shots": transform_shots.get(i, (None, 0))[0],
                "extract_shots_dropped": extract_shots[i][1],
                "transform_shots_dropped": transform_shots.get(i, (None, 0))[1]}
        items = rewrites.get(i) or [Rewrite(t.slot, t.y_cf, None, why) for t in counterfactual_targets(labels[i])]
        for r in items:
            produced = bool(r.x_cf and r.x_cf.strip())
            changed = produced and untokenize_ptb(r.x_cf) != untokenize_ptb(base["hypothesis"])
            row = {**base, "slot": r.slot, "y_cf": r.y_cf, "x_cf": r.x_cf if produced else None, "changed": changed,
                   "ok": False, "status": "failed", "reason": r.reason}
            rows.append(row)
            if produced:
                produced_rows.append((row, r.reason, i))
    verdicts = check_cached([(row["hypothesis"], row["x_cf"], row["slot"], row["explanation"], row["premise"])
                             for row, _, _ in produced_rows])
    for (row, note, _), verdict in zip(produced_rows, verdicts):
        row.update(ok=verdict.ok, status=verdict.status,
                   reason=note if verdict.ok else f"malformed: {verdict.reason}" + (f" [{note}]" if note else ""))
    if transform_raw:
        _reject_malformed_answers([(row, i) for row, _, i in produced_rows], transform_raw, rewriter, labels)
    out = pd.DataFrame(rows, columns=ROW_COLUMNS)
    # shot counts as nullable integers in every pipeline (None where a step ran no prompt): stacking pipelines then
    # keeps one dtype instead of mixing all-None object columns with numbers (pandas' FutureWarning on concat)
    out[["extract_shots", "transform_shots"]] = out[["extract_shots", "transform_shots"]].astype("Int64")
    if verify:
        _abstain_on_low_scores(out)
    out.attrs["fsp_model"] = rewriter.name if rewriter is not None and "fsp" in (extract, transform) else None
    return out


def _reject_malformed_answers(checked: list[tuple[dict, int]], answers: dict[int, str], rewriter: FewShotRewriter,
                              labels: list[str]) -> None:
    """Count each FSP transformation answer (`answers`: pair -> raw answer) that produced a counterfactual the
    rule checks found malformed as rejected by its client (once per pair, with the first reason), so it counts
    toward the notebook's failure gate like an unparsable answer."""
    rejected: dict[int, str] = {}
    for row, i in checked:
        if row["status"] == "malformed" and i in answers:
            rejected.setdefault(i, row["reason"])
    for i, why in rejected.items():
        rewriter.transform_clients[labels[i]].reject(f"ftc.transform.{SHORT[labels[i]]}", answers[i], why)


def _abstain_on_low_scores(out: pd.DataFrame) -> None:
    """Rule-passing rows the verifier scores below its threshold become malformed, with its reason (in place)."""
    from .verifier import low_scores

    status, reason = out["status"].tolist(), out["reason"].tolist()
    ok = [i for i, s in enumerate(status) if s == "ok"]
    columns = ["hypothesis", "x_cf", "premise", "A", "pipeline", "slot", "label"]
    doubted = {i: why for i, why in zip(ok, low_scores(out[columns].iloc[ok])) if why}
    if doubted:
        for i, why in doubted.items():
            status[i], reason[i] = "malformed", f"malformed: {why}" + (f" [{reason[i]}]" if reason[i] else "")
        out["status"], out["reason"], out["ok"] = status, reason, [s == "ok" for s in status]


def all_pipelines(df: pd.DataFrame, rewriter: FewShotRewriter | None, pipelines: Sequence[tuple[str, str]] = PIPELINES,
                  explanation_col: str = "explanation_1", label_col: str = "label") -> pd.DataFrame:
    """`counterfactual_rows` for every (extract, transform) combination, stacked (column `pipeline`)."""
    frames = [counterfactual_rows(df, e, t, rewriter, explanation_col=explanation_col, label_col=label_col)
              for e, t in pipelines]
    out = pd.concat(frames, ignore_index=True)
    out["fsp_model"] = [
        rewriter.name if rewriter is not None and "fsp" in p.split("-") else "" for p in out["pipeline"]
    ]
    return out
