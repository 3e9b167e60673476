"""§3.3 / Appendix C: truth-set filtering, the neutral-edge graph, its maximum clique, the entailment subgraph.

Predicates (Appendix C), with the NLI model M judging (premise=a, hypothesis=b):

    ENTAILS(a, b)     = P_M(a => b) >= tau_e
    CONTRADICTS(a, b) = P_M(a _|_ b) >= tau_c
    NEUTRAL(a, b)     = not ENTAILS(a, b) and not CONTRADICTS(a, b)

Stage 1 keeps a candidate f only if no truth-set element t has CONTRADICTS(t, f) or ENTAILS(t, f).
Stage 2 links two retained facts when they are neutral, and records entailment edges u -> v.
Stage 3 takes the maximum clique of the neutral graph (Bron-Kerbosch with pivot, as Appendix C).
Stage 4 returns the entailment subgraph induced by the clique.

Worked example (a hand-made judge; "t" is the truth set, "a".."d" candidates):

>>> rel = {("t", "c"): "contradiction", ("a", "b"): "entailment"}
>>> judge = TableJudge(rel)                 # every pair not listed is neutral
>>> r = filter_facts(["t"], ["a", "b", "c", "d"], judge)
>>> r.retained, r.clique
(['a', 'b', 'd'], ['a', 'd'])
>>> r.decision("c"), r.decision("b")
('contradicts truth set', 'outside maximum clique')

Two choices the paper leaves open, made explicit here:

* `symmetric=True` (default) links u and v only when NEUTRAL(u, v) and NEUTRAL(v, u), so the clique is
  pairwise neutral in both directions as §3.3 states; Appendix C's pseudo-code tests NEUTRAL(u, v) for i < j
  only (`symmetric=False` reproduces it literally, and then G=>[S*] can hold edges v -> u).
* Ties between maximum cliques: Appendix C keeps the first one found (|C| > |S*|), which depends on set
  iteration order. Here the clique with the lexicographically smallest sorted index tuple wins, i.e. the
  facts ranked first (higher retrieval score) are preferred; the result is deterministic.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import networkx as nx
import numpy as np

from ..config import LABELS

# --------------------------------------------------------------------------------------------------------------
# Judges: the NLI model M behind the predicates
# --------------------------------------------------------------------------------------------------------------

class NLIJudge:
    """An NLI classifier with Appendix C's thresholds; judgements memoised per (a, b) and cached on disk.

    `prefetch(pairs)` scores many pairs in one batch (through the classifier's call cache); the predicates
    then read the memo. Any `Classifier` with 'entailment' and 'contradiction' among its labels works.
    """

    def __init__(self, model, tau_e: float = 0.5, tau_c: float = 0.5):
        self.model, self.tau_e, self.tau_c = model, float(tau_e), float(tau_c)
        labels = list(getattr(model, "labels", LABELS))
        self._ie, self._ic = labels.index("entailment"), labels.index("contradiction")
        self._memo: dict[tuple[str, str], tuple[float, float]] = {}

    @property
    def name(self) -> str:
        return getattr(self.model, "name", type(self.model).__name__)

    @property
    def fingerprint(self) -> str:
        return f"{getattr(self.model, 'fingerprint', self.name)}|tau_e={self.tau_e}|tau_c={self.tau_c}"

    def prefetch(self, pairs: Iterable[tuple[str, str]]) -> None:
        todo = list(dict.fromkeys(p for p in pairs if p not in self._memo))
        if not todo:
            return
        probs = self.model.predict_proba([a for a, _ in todo], [b for _, b in todo])
        for pair, row in zip(todo, np.asarray(probs)):
            self._memo[pair] = (float(row[self._ie]), float(row[self._ic]))

    def probs(self, a: str, b: str) -> tuple[float, float]:
        """(P(a entails b), P(a contradicts b))."""
        if (a, b) not in self._memo:
            self.prefetch([(a, b)])
        return self._memo[(a, b)]

    def entails(self, a: str, b: str) -> bool:
        return self.probs(a, b)[0] >= self.tau_e

    def contradicts(self, a: str, b: str) -> bool:
        return self.probs(a, b)[1] >= self.tau_c

    def neutral(self, a: str, b: str) -> bool:
        return not self.entails(a, b) and not self.contradicts(a, b)


class TableJudge(NLIJudge):
    """A judge from a hand-written table {(a, b): 'entailment'|'contradiction'|'neutral'} (tests, examples).

    Pairs not in the table are neutral. Counts every pair it is asked about in `asked`.
    """

    def __init__(self, relations: Mapping[tuple[str, str], str], tau_e: float = 0.5, tau_c: float = 0.5):
        self.relations = dict(relations)
        self.tau_e, self.tau_c, self.model = tau_e, tau_c, None
        self._memo, self.asked = {}, []

    @property
    def name(self) -> str:
        return "table-judge"

    @property
    def fingerprint(self) -> str:
        return "table-judge:" + repr(sorted(self.relations.items()))

    def prefetch(self, pairs):
        for a, b in pairs:
            if (a, b) not in self._memo:
                self.asked.append((a, b))
                rel = self.relations.get((a, b), "neutral")
                self._memo[(a, b)] = (float(rel == "entailment"), float(rel == "contradiction"))


# --------------------------------------------------------------------------------------------------------------
# Vacuous truth-set atoms
# --------------------------------------------------------------------------------------------------------------

_EXISTENTIAL = re.compile(
    r"^there (?:is|are|was|were) (?:(?:a|an|the|some|several|many|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"\d+) )?(?P<np>[a-z][a-z'-]*(?: [a-z][a-z'-]*)?)$")
_PLACEHOLDER = re.compile(r"^(?:the|a|an) [a-z' -]+ (?:is|are|was|were)(?: [a-z]+ing)? "
                          r"(?:something|someone|somebody|somewhere|anything|anyone)$")
#: Words that make a two-word existential more than an entity's introduction ("There is a man outside").
_NOT_NOUNS = {"in", "on", "at", "by", "with", "near", "outside", "inside", "here", "there", "not", "no", "nearby"}


def is_vacuous(atom: str) -> bool:
    """Is a premise atom too empty to count as truth-set evidence?

    Vacuous (definition): (1) an existential that only introduces an entity, "There is/are" + an optional
    determiner or number + one or two words that are not a place or negation ("There is a person.",
    "There are two dogs.", "There is a tank top."); (2) a placeholder predicate, "The X is (V-ing)
    something/someone/somewhere" ("The person is wearing something."). Such atoms restate that an entity
    exists, which the premise p (always in the truth set) says already; as NLI premises they are near-empty,
    so a short-context judge's entailment/contradiction calls on them are noise, not evidence.

    >>> [is_vacuous(a) for a in ["There is a person.", "There are two dogs.", "The person is wearing something."]]
    [True, True, True]
    >>> [is_vacuous(a) for a in ["The person is a woman.", "There is a man in a red shirt.", "There is a man outside."]]
    [False, False, False]
    """
    text = " ".join(str(atom).lower().replace(".", " ").split())
    m = _EXISTENTIAL.match(text)
    if m:
        return not set(m.group("np").split()) & _NOT_NOUNS
    return bool(_PLACEHOLDER.match(text))


def truth_seed(premise: str, atoms: Sequence[str], drop_vacuous: bool = True) -> list[str]:
    """T(0): the premise and its atoms, vacuous atoms left out (`is_vacuous`) unless `drop_vacuous` is False.

    >>> truth_seed("A man sleeps.", ["There is a person.", "The person is a man.", "The person sleeps."])
    ['A man sleeps.', 'The person is a man.', 'The person sleeps.']
    """
    return list(dict.fromkeys([premise, *(a for a in atoms if not (drop_vacuous and is_vacuous(a)))]))


# --------------------------------------------------------------------------------------------------------------
# Maximum clique (Appendix C, stage 3: Bron-Kerbosch with pivot, as networkx's find_cliques)
# --------------------------------------------------------------------------------------------------------------

def max_clique(n: int, adj: Mapping[int, set]) -> list[int]:
    """Maximum clique of the graph on nodes 0..n-1 (adjacency sets); ties -> smallest sorted index tuple.

    >>> max_clique(4, {0: {1, 2}, 1: {0, 2}, 2: {0, 1, 3}, 3: {2}})
    [0, 1, 2]
    >>> max_clique(3, {0: set(), 1: set(), 2: set()}), max_clique(0, {})
    ([0], [])
    >>> max_clique(4, {0: {1}, 1: {0}, 2: {3}, 3: {2}})          # two maximum cliques: the earlier wins
    [0, 1]
    """
    if n == 0:
        return []
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((u, v) for u in range(n) for v in adj.get(u, ()) if u != v and 0 <= v < n)
    # every maximal clique, then the largest; among equally large ones the smallest sorted index tuple (the
    # deterministic tie-break, which networkx's max_weight_clique does not offer)
    return min((sorted(c) for c in nx.find_cliques(graph)), key=lambda c: (-len(c), c))


# --------------------------------------------------------------------------------------------------------------
# The filter
# --------------------------------------------------------------------------------------------------------------

@dataclass
class FilterResult:
    """Everything Appendix C computes for one level, plus per-candidate decisions for error analysis."""

    candidates: list  # C(t), in rank order
    retained: list  # V(t) = R: candidates neutral to every truth-set element
    clique: list  # F(t) = S*: maximum neutral clique, in rank order
    neutral_graph: nx.Graph  # G(t) on R: edges between neutral pairs
    entailment_graph: nx.DiGraph  # (R, E=>): u -> v when ENTAILS(u, v)
    entailment_subgraph: nx.DiGraph  # G=>[S*]
    decisions: dict = field(default_factory=dict)  # candidate -> (decision, blocking truth element or '')

    def decision(self, fact: str) -> str:
        return self.decisions[fact][0]


def truth_set_pairs(truth: Sequence[str], candidates: Sequence[str]) -> list[tuple[str, str]]:
    """Stage 1 judgements needed: (t, f) for every truth element t and candidate f."""
    return [(t, f) for f in candidates for t in truth]


def graph_pairs(retained: Sequence[str]) -> list[tuple[str, str]]:
    """Stage 2 judgements needed: both directions of every retained pair."""
    return [p for i, u in enumerate(retained) for v in retained[i + 1 :] for p in ((u, v), (v, u))]


def truth_set_filter(truth: Sequence[str], candidates: Sequence[str], judge) -> tuple[list, dict]:
    """Stage 1: (retained, decisions). A contradiction is reported before an entailment by the same truth set."""
    judge.prefetch(truth_set_pairs(truth, candidates))
    retained, decisions = [], {}
    for f in candidates:
        blocked = next((("contradicts truth set", t) for t in truth if judge.contradicts(t, f)), None) or \
            next((("entailed by truth set", t) for t in truth if judge.entails(t, f)), None)
        if blocked:
            decisions[f] = blocked
        else:
            retained.append(f)
    return retained, decisions


def filter_facts(truth: Sequence[str], candidates: Sequence[str], judge, symmetric: bool = True) -> FilterResult:
    """Appendix C on one level: truth-set filter, neutral graph, maximum clique, entailment subgraph.

    `candidates` are de-duplicated keeping the first occurrence (C(t) is a set; order = retrieval rank).
    An empty candidate list gives an empty result.
    """
    candidates = list(dict.fromkeys(candidates))
    retained, decisions = truth_set_filter(truth, candidates, judge)
    judge.prefetch(graph_pairs(retained))
    neutral, entail = nx.Graph(), nx.DiGraph()
    neutral.add_nodes_from(retained)
    entail.add_nodes_from(retained)
    adj: dict[int, set] = {i: set() for i in range(len(retained))}
    for i, u in enumerate(retained):
        for j in range(i + 1, len(retained)):
            v = retained[j]
            if judge.entails(u, v):
                entail.add_edge(u, v)
            if judge.entails(v, u):
                entail.add_edge(v, u)
            if judge.neutral(u, v) and (not symmetric or judge.neutral(v, u)):
                neutral.add_edge(u, v)
                adj[i].add(j)
                adj[j].add(i)
    clique = [retained[i] for i in max_clique(len(retained), adj)]
    for f in retained:
        decisions[f] = ("selected", "") if f in clique else ("outside maximum clique", "")
    return FilterResult(candidates, retained, clique, neutral, entail, entail.subgraph(clique).copy(), decisions)


def no_filter(candidates: Sequence[str]) -> FilterResult:
    """The NO-FILTER ablation: every candidate is fused; no truth set, no graph."""
    candidates = list(dict.fromkeys(candidates))
    g, d = nx.Graph(), nx.DiGraph()
    return FilterResult(candidates, list(candidates), list(candidates), g, d, d.copy(),
                        {f: ("selected (no filter)", "") for f in candidates})
