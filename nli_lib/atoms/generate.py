"""§3.1 atom generation (Prompt A.1) and §3.2 validation, with the paper's own decompositions as exemplars.

One interface for both tiers: an `AtomGenerator` wraps a cached chat client and Prompt A.1.

* paper profile: `LLMClient` + A.1 with the paper's printed whole decompositions as in-context exemplars
  (`A1_EXEMPLARS`: Table 1 rows 3-4, Table 8, Appendix B.1); all printed decompositions
  (`PAPER_DECOMPOSITIONS`: also Table 1 rows 1-2, Table 7, Figure 3) are the coverage evaluation items;
* offline profile: `OfflineLLM` over the rule-based decomposer (`decompose.RuleDecomposer`): it reads the
  sentence out of the rendered A.1 prompt and answers in the A.1 format, so its outputs are cached and parsed
  exactly like an LLM's.

>>> gen = rule_generator(decomposer=lambda s: ["There is a person.", "The person dances."])   # doctest: +SKIP
>>> generate_atoms(["The man dances."], gen)[["sentence", "atom"]].values.tolist()             # doctest: +SKIP
[['The man dances.', 'There is a person.'], ['The man dances.', 'The person dances.']]

Coverage (§3.1 / Appendix A.1): a paper atom counts as covered when the NLI model says a generated atom and
it entail each other (both directions predicted 'entailment').
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..llm import PROMPTS, OfflineLLM, Parsed, make_llm
from ..text import normalise, words
from .prompts import ATOM_DECOMPOSITIONS

#: The paper's printed decompositions (the A.1 exemplars and the coverage evaluation items). Figure 3's
#: hypothesis and atoms and the Appendix B.1 "the man dances" example are added to the prompt registry's rows.
PAPER_DECOMPOSITIONS: tuple[dict, ...] = tuple(ATOM_DECOMPOSITIONS) + (
    {"sentence": "A man in an orange vest stands on a dock.",
     "atoms": ["The vest that the person wears is orange.", "The person stands.", "The person is on a dock."],
     "invalid_atoms": [], "source": "atoms Figure 3 (the three atoms the figure's updates target)"},
    {"sentence": "The man dances.", "atoms": ["There is a person.", "The person is a man.", "The person dances."],
     "invalid_atoms": [], "source": "atoms Appendix B.1 (use of hypernyms)"},
)

#: The A.1 in-context exemplars: the decompositions the paper prints *whole*, i.e. every generated atom of H
#: (Table 1 rows 3-4 with their invalid atoms removed, Table 8 with the atom the paper says is missing added,
#: both Appendix B.1 examples). The δ-SNLI rows (Table 1 rows 1-2, Table 7) list only the atoms left after
#: pruning atoms that P entails (so no "There is a person."), and Figure 3 only the three atoms its updates
#: target: as exemplars they would teach the model to leave information out, so they serve as evaluation
#: items only (`coverage`).
A1_EXEMPLARS: tuple[dict, ...] = tuple(
    {"sentence": d["sentence"], "atoms": list(d["atoms"]) + list(d.get("missing_atoms", [])), "source": d["source"]}
    for d in PAPER_DECOMPOSITIONS if d["source"] in {
        "atoms Table 1 row 3", "atoms Table 1 row 4", "atoms Table 8", "atoms Appendix B.1",
        "atoms Appendix B.1 (use of hypernyms)"})


@dataclass(frozen=True)
class AtomGenerator:
    """Prompt A.1 through a cached chat client (an LLM endpoint, or the offline rules)."""

    client: object  # LLMClient or OfflineLLM (both cached through the call cache)
    name: str  # model / generator name printed beside every result
    tier: str  # "paper" (LLM endpoint) or "offline" (rule-based decomposer)
    shots: tuple = field(default=(), repr=False)  # A.1 exemplar rows ({"sentence", "atoms"})

    def messages(self, sentence: str, exclude: str | None = None) -> list[dict]:
        """A.1 prompt for `sentence`; `exclude` drops an exemplar with that sentence (leave-one-out)."""
        shots = [s for s in self.shots if normalise(s["sentence"]) != normalise(exclude or "")]
        return PROMPTS["atoms.A1"].render(sentence=sentence, shots=shots)


def sentence_from_a1(messages) -> str:
    """The query sentence of a rendered A.1 prompt (the last 'SENTENCE:' line)."""
    content = messages[-1]["content"] if isinstance(messages, list) else str(messages)
    found = re.findall(r"SENTENCE:\s*(.*)", content)
    if not found:
        raise ValueError("not an A.1 prompt: no 'SENTENCE:' line")
    return found[-1].strip()


def rule_generator(style: str = "incremental", decomposer: Callable[[str], list[str]] | None = None,
                   cache=None) -> AtomGenerator:
    """The offline generator: the rule-based decomposer behind the A.1 interface (cached as an OfflineLLM)."""
    from .decompose import RULES_VERSION, default_decomposer

    fn = decomposer or default_decomposer(style).decompose
    name = f"{RULES_VERSION}-{style}" if decomposer is None else getattr(decomposer, "__name__", "custom-rules")

    def answer(messages) -> str | None:
        atoms = fn(sentence_from_a1(messages))
        if not atoms:
            return None  # the rules produce nothing for this sentence: a declared non-answer
        return "\n".join(f"{i}. {a}" for i, a in enumerate(atoms, 1)) + "\n[END]"

    return AtomGenerator(OfflineLLM(answer, name=name, cache=cache), name=name, tier="offline")


def llm_generator(llm, shots: Sequence[dict] = A1_EXEMPLARS) -> AtomGenerator:
    """Prompt A.1 with the paper's whole decompositions as exemplars (`A1_EXEMPLARS`; pass `shots` to change).

    `llm`: an LLMClient or a profile's llm section.
    """
    client = llm if hasattr(llm, "chat_many") else make_llm({"llm": llm})
    if client is None:
        raise ValueError("llm_generator needs an LLM endpoint (profile llm section); use rule_generator offline")
    return AtomGenerator(client, name=client.model, tier="paper",
                         shots=tuple({"sentence": s["sentence"], "atoms": list(s["atoms"])} for s in shots))


def atom_generator(llm=None, style: str = "incremental") -> AtomGenerator:
    """The profile's generator: `llm` None -> rules (offline); a profile llm section or client -> Prompt A.1."""
    return rule_generator(style) if llm is None else llm_generator(llm)


# words an atom may use whatever the sentence says (hypernyms and the frame of "There is a ...")
_GENERIC = frozenset("a an the there is are was were be been being it its this that these those of in on at to for "
                     "with by from and or not no some one two person people thing things someone something somebody "
                     "has have had do does did".split())


def _content(text: str) -> set[str]:
    return {w.lower().rstrip("s") for w in words(text)} - {g.rstrip("s") for g in _GENERIC}


def copied_exemplar_atoms(atoms: Sequence[str], sentence: str, shots: Sequence[dict]) -> list[str]:
    """Atoms that repeat, word for word, an atom of an exemplar of another sentence and name something
    `sentence` does not: the model copied the prompt's exemplar instead of decomposing the sentence.

    >>> shots = [{"sentence": "Two brothers climb a tree.", "atoms": ["There are two brothers.", "There is a person.",
    ...                                                               "The brothers climb a tree."]}]
    >>> copied_exemplar_atoms(["There is a person.", "The brothers climb a tree.", "The man climbs a mountain."],
    ...                       "A man climbs a mountain.", shots)
    ['The brothers climb a tree.']
    """
    own = _content(sentence)
    exemplar = {normalise(a) for s in shots if normalise(s["sentence"]) != normalise(sentence) for a in s["atoms"]}
    return [a for a in atoms if normalise(a) in exemplar and not _content(a) <= own]


def _bad_answers(out: pd.DataFrame) -> dict[str, str]:
    """sentence -> why, for answers with an atom a later check found malformed or unparsed (first reason)."""
    found: dict[str, str] = {}
    bad = out[out["status"].isin(("malformed", "unparsed"))]
    for sentence, status, reason in zip(bad["sentence"], bad["status"], bad["reason"]):
        found.setdefault(sentence, f"{status}: {reason}")
    return found


def generate_atoms(sentences: Sequence[str], generator: AtomGenerator, leave_one_out: bool = False,
                   progress: bool = False, checker="default") -> pd.DataFrame:
    """One row per (sentence, atom): sentence, atom_index, atom, generator, tier, parse_ok, error, status, reason,
    checker.

    Duplicate sentences are generated once. `leave_one_out` drops a sentence's own exemplar from its prompt
    (use it when scoring on the exemplars themselves). A failed call or an unparsable answer (a refusal, junk,
    atoms copied from the prompt's exemplars: `copied_exemplar_atoms`) gives a row with atom NaN, parse_ok False,
    status 'failed' and the cause in `error` (kept so failures are visible; the client counts them in the call
    ledger). Every atom is checked for well-formedness (`check_atoms`; `checker=None` only where no data mirror is
    available: status 'unchecked'); an answer with a malformed or unparsed atom counts toward the notebook's
    failure gate (`CachedChat.reject`).
    """
    unique = list(dict.fromkeys(str(s) for s in sentences))
    prompts = [generator.messages(s, exclude=s if leave_one_out else None) for s in unique]
    results = generator.client.chat_many(prompts, progress=progress)
    rows, raw = [], {}
    template, client = PROMPTS["atoms.A1"], generator.client
    for sentence, parsed in zip(unique, client.parse_many(template, results)):
        copied = copied_exemplar_atoms(parsed.value, sentence, generator.shots) if parsed.ok else []
        if copied:
            parsed = Parsed(False, None, parsed.raw, f"atoms copied from the prompt's exemplars: {copied[0]!r}")
            client.reject(template, parsed.raw, parsed.error)
        if not parsed.ok:
            rows.append({"sentence": sentence, "atom_index": -1, "atom": np.nan, "parse_ok": False,
                         "error": parsed.error})
            continue
        raw[sentence] = parsed.raw
        atoms = list(dict.fromkeys(a.strip() for a in parsed.value if a.strip()))
        rows += [{"sentence": sentence, "atom_index": i, "atom": a, "parse_ok": True, "error": None}
                 for i, a in enumerate(atoms)]
    out = pd.DataFrame(rows, columns=["sentence", "atom_index", "atom", "parse_ok", "error"])
    out["generator"], out["tier"] = generator.name, generator.tier
    out = check_atoms(out, checker)
    for sentence, why in _bad_answers(out).items():  # junk a later check caught counts like unparsable answers
        client.reject(template, raw[sentence], why)
    return out


USABLE = ("ok", "unchecked")  # statuses an analysis may use; malformed / unparsed / failed atoms never are


def check_atoms(atoms: pd.DataFrame, checker="default") -> pd.DataFrame:
    """Add status (ok | malformed | unparsed | failed | unchecked), reason and checker to generated atom rows.

    `checker`: an `AtomChecker` (or any callable (atom, sentence, sole) -> AtomCheck), "default" for the one over
    the decomposer's tagger (its verdicts kept in the file cache: `default_verdicts`), None for no check. A
    sentence's only atom that repeats it is 'unparsed'.

    >>> from nli_lib.atoms.grammar.wellformed import AtomCheck
    >>> rows = pd.DataFrame({"sentence": ["S s s s.", "A b.", "A b."], "atom": ["S s s s.", "Ok.", None],
    ...                      "parse_ok": [True, True, False]})
    >>> judge = lambda atom, sentence, sole: AtomCheck("unparsed" if sole and atom == sentence else "ok", "")
    >>> check_atoms(rows, judge)["status"].tolist(), check_atoms(rows, None)["status"].tolist()
    (['unparsed', 'ok', 'failed'], ['unchecked', 'unchecked', 'failed'])
    """
    out = atoms.copy()
    parsed = out["parse_ok"].astype(bool) & out["atom"].notna()
    counts = out[parsed].groupby("sentence")["atom"].transform("size")
    items = [(str(row["atom"]), str(row["sentence"]), bool(counts[i] == 1)) for i, row in out[parsed].iterrows()]
    if checker is None:
        checked, name = [("unchecked", "no well-formedness check (no data mirror)")] * len(items), "none"
    elif isinstance(checker, str) and checker == "default":
        from .grammar.wellformed import CHECK_VERSION

        checked, name = default_verdicts(items), CHECK_VERSION
    else:
        checked = [(c.status, c.reason) for c in (checker(*item) for item in items)]
        name = getattr(checker, "name", "custom")
    checked = iter(checked)  # one verdict per parsed row, in row order
    verdicts = []
    for i, row in out.iterrows():
        if parsed[i]:
            verdicts.append(next(checked))
        else:
            error = row.get("error")
            verdicts.append(("failed", error if isinstance(error, str) and error
                             else "the generator's answer could not be parsed"))
    out["status"] = [s for s, _ in verdicts]
    out["reason"] = [r for _, r in verdicts]
    out["checker"] = name
    return out


def default_verdicts(items: Sequence[tuple[str, str, bool]]) -> list[tuple[str, str]]:
    """(status, reason) of each (atom, sentence, sole) by the default checker (`wellformed.default_checker`),
    kept in the file cache (`filecache.cached_verdicts`: under the items and `filecache.library_state`, so the
    rules, the tagger and WordNet: library sources and data manifest). A warm notebook neither builds the
    checker (tagger and WordNet) nor re-checks its atoms (~1–3 s in each atoms and FactNLI notebook)."""
    from .. import filecache

    items = [(str(a), str(s), bool(sole)) for a, s, sole in items]

    def judge() -> list[tuple[str, str]]:
        from ..data.loaders import load_pos_tagger, load_wordnet
        from .grammar.wellformed import default_checker

        load_pos_tagger(), load_wordnet()  # noted (fetched) here, also when this process built the checker before
        check = default_checker()
        return [(v.status, v.reason) for v in (check(*item) for item in items)]

    return filecache.cached_verdicts("atom_checks", items, judge, "cached atom checks")


def usable(atoms: pd.DataFrame) -> pd.DataFrame:
    """The rows an analysis may use: parsed atoms whose status is ok (or unchecked, when no check could run)."""
    keep = atoms["parse_ok"].astype(bool)
    if "status" in atoms:
        keep &= atoms["status"].isin(USABLE)
    return atoms[keep]


def attach_atoms(examples: pd.DataFrame, atoms: pd.DataFrame, hypothesis_col: str = "hypothesis") -> pd.DataFrame:
    """Example rows × their hypothesis' usable atoms (one row per example and atom; failed, malformed and
    unparsed atoms dropped)."""
    good = usable(atoms).rename(columns={"sentence": hypothesis_col})
    return examples.merge(good, on=hypothesis_col, how="inner")


# --------------------------------------------------------------------------------------------------------------
# Coverage of the paper's atoms (§3.1, Appendix A.1)
# --------------------------------------------------------------------------------------------------------------

def _targets(item: dict) -> list[tuple[str, str]]:
    """(atom, role) pairs to look for: the paper's valid atoms, then atoms its generator missed (Table 8)."""
    return [(a, "paper atom") for a in item["atoms"]] + [(a, "missed by the paper's generator")
                                                         for a in item.get("missing_atoms", [])]


def coverage(items: Sequence[dict], generated: pd.DataFrame, nli) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How many of the paper's atoms each generated set covers (mutual entailment by `nli`).

    Returns (per-sentence summary, per-atom rows). A row's `best_match` is the generated atom with the
    highest min(P(e | g→a), P(e | a→g)); `covered` requires both directions to be predicted 'entailment'.
    Items may list `missing_atoms` (Table 8: information the paper's own generator left out); those rows have
    role "missed by the paper's generator" and are counted apart (`missed_recovered`), not in `coverage`.

    >>> class Same:  # a stand-in NLI model: entailment iff the two texts are equal
    ...     labels = ("entailment", "neutral", "contradiction")
    ...     def predict_proba(self, ps, hs):
    ...         return np.array([[1.0, 0, 0] if p == h else [0, 1.0, 0] for p, h in zip(ps, hs)])
    >>> gen = pd.DataFrame({"sentence": ["S"] * 2, "atom": ["a", "m"], "parse_ok": [True] * 2})
    >>> summary, detail = coverage([{"sentence": "S", "atoms": ["a", "b"], "missing_atoms": ["m"]}], gen, Same())
    >>> [float(summary.loc[0, c]) for c in ("paper_atoms", "covered", "coverage", "missed_recovered")]
    [2.0, 1.0, 0.5, 1.0]
    """
    pairs, meta = [], []
    ok = usable(generated)
    for item in items:
        gen = ok.loc[ok["sentence"] == item["sentence"], "atom"].tolist()
        for atom, _ in _targets(item):
            for g in gen:
                pairs.append((g, atom))
                meta.append((item["sentence"], atom, g))
    rows = []
    if pairs:
        fwd = nli.predict_proba([g for g, _ in pairs], [a for _, a in pairs])
        bwd = nli.predict_proba([a for _, a in pairs], [g for g, _ in pairs])
        e = list(nli.labels).index("entailment")
        scored = pd.DataFrame(meta, columns=["sentence", "paper_atom", "generated_atom"])
        scored["p_fwd"], scored["p_bwd"] = fwd[:, e], bwd[:, e]
        scored["mutual"] = (fwd.argmax(1) == e) & (bwd.argmax(1) == e)
        scored["score"] = np.minimum(scored["p_fwd"], scored["p_bwd"])
    else:
        scored = pd.DataFrame(columns=["sentence", "paper_atom", "generated_atom", "p_fwd", "p_bwd", "mutual", "score"])
    for item in items:
        for atom, role in _targets(item):
            cand = scored[(scored["sentence"] == item["sentence"]) & (scored["paper_atom"] == atom)]
            best = cand.sort_values(["mutual", "score"], ascending=False).head(1)
            rows.append({"sentence": item["sentence"], "source": item.get("source", ""), "paper_atom": atom,
                         "role": role,
                         "covered": bool(cand["mutual"].any()) if len(cand) else False,
                         "best_match": best["generated_atom"].iloc[0] if len(best) else None,
                         "best_score": float(best["score"].iloc[0]) if len(best) else np.nan})
    detail = pd.DataFrame(rows)
    counts = usable(generated).groupby("sentence")["atom"].nunique()
    paper = detail["role"] == "paper atom"
    summary = detail.assign(paper=paper, covered_paper=paper & detail["covered"], missed=~paper,
                            recovered=~paper & detail["covered"]).groupby(["sentence", "source"], sort=False).agg(
        paper_atoms=("paper", "sum"), covered=("covered_paper", "sum"), missed_by_paper=("missed", "sum"),
        missed_recovered=("recovered", "sum")).reset_index()
    summary["generated_atoms"] = summary["sentence"].map(counts).fillna(0).astype(int)
    summary["coverage"] = summary["covered"] / summary["paper_atoms"]
    total = pd.DataFrame([{"sentence": "ALL", "source": "", **{c: summary[c].sum() for c in (
        "paper_atoms", "covered", "missed_by_paper", "missed_recovered", "generated_atoms")},
        "coverage": summary["covered"].sum() / max(summary["paper_atoms"].sum(), 1)}])
    return pd.concat([summary, total], ignore_index=True), detail


# --------------------------------------------------------------------------------------------------------------
# Validation (§3.2)
# --------------------------------------------------------------------------------------------------------------

def validate_atoms(rows: pd.DataFrame, nli, check_premise: bool = True) -> pd.DataFrame:
    """Prune atoms with the NLI model: keep atoms entailed by H and (δ-SNLI) not entailed by P.

    `rows` needs hypothesis and atom columns (and premise when check_premise). Adds h_entails, p_entails,
    valid and the entailment probabilities. Each distinct (H, a) / (P, a) pair is scored once (cached).
    The paper follows this pruning with a human pass; import its outcome as 'invalid' gold labels.
    """
    out = rows.copy()
    e = list(nli.labels).index("entailment")
    ha = out[["hypothesis", "atom"]].drop_duplicates()
    ph = nli.predict_proba(ha["hypothesis"].tolist(), ha["atom"].tolist())
    ha = ha.assign(p_h_entails=ph[:, e], h_entails=ph.argmax(1) == e)
    out = out.merge(ha, on=["hypothesis", "atom"], how="left")
    if check_premise:
        pa = out.loc[out["h_entails"], ["premise", "atom"]].drop_duplicates()
        pp = (
            nli.predict_proba(pa["premise"].tolist(), pa["atom"].tolist())
            if len(pa)
            else np.zeros((0, len(nli.labels)))
        )
        pa = pa.assign(p_p_entails=pp[:, e] if len(pa) else [], p_entails=(pp.argmax(1) == e) if len(pa) else [])
        out = out.merge(pa, on=["premise", "atom"], how="left")
        out["p_entails"] = out["p_entails"].eq(True)
        out["valid"] = out["h_entails"] & ~out["p_entails"]
    else:
        out["valid"] = out["h_entails"]
    out.attrs["validator"] = nli.name
    return out


def pruning_counts(validated: pd.DataFrame, key: str = "hypothesis") -> pd.DataFrame:
    """Unique atoms generated, entailed by H, surviving the P check (Table 5 rows 4-5), per validation stage."""
    gen = validated[["hypothesis", "atom"]].drop_duplicates()
    by_h = validated[validated["h_entails"]][["hypothesis", "atom"]].drop_duplicates()
    valid = validated[validated["valid"]][["hypothesis", "atom"]].drop_duplicates()
    return pd.DataFrame(
        [
            {"stage": "generated", "unique_atoms": gen["atom"].nunique(), "hypothesis_atom_pairs": len(gen)},
            {"stage": "entailed by H", "unique_atoms": by_h["atom"].nunique(), "hypothesis_atom_pairs": len(by_h)},
            {
                "stage": "entailed by H, not by P",
                "unique_atoms": valid["atom"].nunique(),
                "hypothesis_atom_pairs": len(valid),
            },
        ]
    )
