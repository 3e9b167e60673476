"""FactNLI: filter (truth set, maximum clique), fusion, the level loop, retrieval stand-ins and the §4 metrics.

Hand-made judges (`TableJudge`), a bag-of-words stand-in encoder and in-memory caches keep these tests fast;
tests marked `mirror` use the offline data mirror (POS tagger, WordNet).
"""
from __future__ import annotations

import itertools
import json
import random
import re
import time
import urllib.parse

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from nli_lib.cache import CallCache, ReplayMiss
from nli_lib.config import LABELS
from nli_lib.factnli import (
    Augmenter,
    FactExtractor,
    FactNLISettings,
    NLIJudge,
    Page,
    RetrievalError,
    Snippet,
    SnippetRetriever,
    TableJudge,
    WikipediaPages,
    ablation_table,
    accuracy_by_level,
    check_fusion,
    compose,
    controls_table,
    diagnostics,
    diagnostics_table,
    filter_facts,
    growth_by_level,
    hypothesis_subsets,
    max_clique,
    no_filter,
    paper_table,
    rewrite_only,
    template_fuser,
    truth_set_filter,
    unrelated_facts,
)
from nli_lib.factnli.extraction import parse_b1, snippets_from_b1
from nli_lib.factnli.fusion import Fuser, inputs_from_b2
from nli_lib.factnli.pipeline import NAMESPACE, PremiseFacts, atoms_rewrite_answer
from nli_lib.llm import PROMPTS, OfflineLLM

from kit import RuleClassifier, TableClassifier, TableWordNet, constant
from stand_ins import local_server

# --------------------------------------------------------------------------------------------------------------
# Maximum clique (Appendix C, stage 3)
# --------------------------------------------------------------------------------------------------------------

def _adj(n, edges):
    adj = {i: set() for i in range(n)}
    for u, v in edges:
        adj[u].add(v)
        adj[v].add(u)
    return adj


def test_max_clique_hand_graphs():
    assert max_clique(0, {}) == []  # empty input
    assert max_clique(1, {0: set()}) == [0]
    assert max_clique(3, _adj(3, [])) == [0]  # no edges: a single fact, the first-ranked
    # triangle 0-1-2 with a pendant 3 on 2
    assert max_clique(4, _adj(4, [(0, 1), (1, 2), (0, 2), (2, 3)])) == [0, 1, 2]
    # two disjoint edges tie at size 2: the earlier-ranked pair wins
    assert max_clique(4, _adj(4, [(2, 3), (0, 1)])) == [0, 1]
    # a 4-clique hidden behind a larger sparse part
    edges = [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4), (0, 1), (0, 5), (5, 6)]
    assert max_clique(7, _adj(7, edges)) == [1, 2, 3, 4]
    # ties among three triangles sharing node 2: {0,1,2}, {2,3,4}, {2,5,6} -> {0,1,2}
    edges = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (2, 4), (2, 5), (5, 6), (2, 6)]
    assert max_clique(7, _adj(7, edges)) == [0, 1, 2]
    assert max_clique(5, _adj(5, itertools.combinations(range(5), 2))) == [0, 1, 2, 3, 4]


def test_max_clique_matches_networkx_on_random_graphs():
    rng = random.Random(0)
    for _ in range(60):
        n = rng.randint(1, 11)
        edges = [e for e in itertools.combinations(range(n), 2) if rng.random() < 0.5]
        got = max_clique(n, _adj(n, edges))
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(edges)
        cliques = [sorted(c) for c in nx.find_cliques(g)]
        size = max(len(c) for c in cliques)
        assert len(got) == size
        assert all(g.has_edge(u, v) for u, v in itertools.combinations(got, 2))
        assert got == min(c for c in cliques if len(c) == size)  # deterministic tie-break


# --------------------------------------------------------------------------------------------------------------
# Truth-set filter and the graph filter
# --------------------------------------------------------------------------------------------------------------

def test_truth_set_filter_removes_contradicting_and_entailed_facts():
    truth = ["A man sleeps on a bench.", "There is a person."]
    judge = TableJudge({
        ("A man sleeps on a bench.", "The man is running."): "contradiction",
        ("A man sleeps on a bench.", "A man is resting."): "entailment",
        ("There is a person.", "The person is a man."): "neutral",
        ("A bench is a seat.", "A man sleeps on a bench."): "entailment",  # f => t does not remove f
    })
    cands = ["The man is running.", "A man is resting.", "A bench is a seat.", "The person is a man."]
    kept, decisions = truth_set_filter(truth, cands, judge)
    assert kept == ["A bench is a seat.", "The person is a man."]
    assert decisions["The man is running."] == ("contradicts truth set", "A man sleeps on a bench.")
    assert decisions["A man is resting."] == ("entailed by truth set", "A man sleeps on a bench.")
    # every (t, f) pair was judged, in the direction truth element -> candidate
    assert {(t, f) for t in truth for f in cands} <= set(judge.asked)


def test_truth_set_filter_reports_contradiction_before_entailment_and_handles_empty_input():
    judge = TableJudge({("t1", "f"): "entailment", ("t2", "f"): "contradiction"})
    assert truth_set_filter(["t1", "t2"], ["f"], judge) == ([], {"f": ("contradicts truth set", "t2")})
    assert truth_set_filter(["t1"], [], judge) == ([], {})
    assert truth_set_filter([], ["f", "g"], judge)[0] == ["f", "g"]  # empty truth set keeps everything


def test_filter_facts_clique_decisions_and_entailment_subgraph():
    judge = TableJudge({("t", "c"): "contradiction", ("a", "b"): "entailment", ("b", "d"): "contradiction"})
    r = filter_facts(["t"], ["a", "b", "c", "d", "a"], judge)  # duplicate 'a' ignored
    assert r.candidates == ["a", "b", "c", "d"]
    assert r.retained == ["a", "b", "d"]
    assert r.clique == ["a", "d"]  # a-b entail, b-d contradict: {a, d} is the maximum neutral clique
    assert set(r.neutral_graph.edges()) == {("a", "d")}
    assert list(r.entailment_graph.edges()) == [("a", "b")]
    assert list(r.entailment_subgraph.edges()) == []
    assert r.decision("c") == "contradicts truth set" and r.decision("b") == "outside maximum clique"
    assert r.decision("a") == r.decision("d") == "selected"
    empty = filter_facts(["t"], [], judge)
    assert empty.clique == [] and empty.retained == [] and empty.neutral_graph.number_of_nodes() == 0


def test_symmetric_neutrality_versus_appendix_c_literal():
    # ENTAILS(v, u) only: Appendix C's NEUTRAL(u, v) test (i < j) still links u and v
    judge = TableJudge({("v", "u"): "entailment"})
    strict = filter_facts([], ["u", "v"], judge, symmetric=True)
    literal = filter_facts([], ["u", "v"], judge, symmetric=False)
    assert strict.clique == ["u"]
    assert literal.clique == ["u", "v"]
    assert list(literal.entailment_subgraph.edges()) == [("v", "u")]


def test_no_filter_keeps_every_candidate():
    r = no_filter(["a", "b", "a"])
    assert r.clique == ["a", "b"] and r.decision("a") == "selected (no filter)"


def test_nli_judge_thresholds_and_label_order():
    # columns in a hub model's order (contradiction, entailment, neutral)
    model = TableClassifier({("a", "b"): [0.1, 0.6, 0.3], ("a", "c"): [0.45, 0.1, 0.45], ("a", "d"): [0.2, 0.3, 0.5]},
                            labels=("contradiction", "entailment", "neutral"), default=[1 / 3] * 3, name="fixed")
    judge = NLIJudge(model, tau_e=0.5, tau_c=0.4)
    assert judge.probs("a", "b") == (0.6, 0.1)
    assert judge.entails("a", "b") and not judge.contradicts("a", "b")
    assert judge.contradicts("a", "c") and not judge.entails("a", "c")  # 0.45 >= tau_c = 0.4
    assert judge.neutral("a", "d")
    assert not NLIJudge(model, tau_e=0.7).entails("a", "b")


# --------------------------------------------------------------------------------------------------------------
# Fusion
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("anchor", ["A woman looks into a window on a city street .", "Two dogs run", "A man sleeps!"])
def test_compose_keeps_anchor_verbatim_and_each_fact_once(anchor):
    facts = ["Carnaby Street is pedestrianised.", "A street is a thoroughfare", "The dog barked all night.",
             "Street fashion is seen in major urban centers."]
    text = compose(anchor, facts)
    assert text.startswith(anchor)
    check = check_fusion(text, anchor, facts)
    assert check == {"anchor_verbatim": True, "fact_counts": [1, 1, 1, 1], "each_fact_once": True}
    # nothing but the anchor, the facts and the neutral connectors
    rest = text[len(anchor):]
    for f in facts:
        body = f if f.endswith(".") else f + "."
        variants = [body, body[:1].lower() + body[1:]]
        hit = next(v for v in variants if v in rest)
        rest = rest.replace(hit, "", 1)
    assert rest.replace("Additionally,", "").replace("Meanwhile,", "").strip() in ("", ".")


def test_check_fusion_detects_missing_and_repeated_facts():
    anchor, facts = "A man sleeps.", ["A bench is a seat.", "Parks have benches."]
    assert check_fusion("A man sleeps. A bench is a seat.", anchor, facts)["fact_counts"] == [1, 0]
    assert not check_fusion("A man sleeps. A bench is a seat. a bench is a seat.", anchor, facts)["each_fact_once"]
    assert not check_fusion("The man sleeps. A bench is a seat.", anchor, facts)["anchor_verbatim"]


def test_template_fuser_through_prompt_b2_and_llm_failure():
    fuser = template_fuser(cache=CallCache(":memory:"))
    out = fuser.fuse_many([("A man sleeps .", ["A bench is a seat."]), ("A dog runs .", [])])
    assert out[0].text == "A man sleeps . Additionally, a bench is a seat." and out[0].ok
    assert out[1].text == "A dog runs ." and fuser.client.stats()["calls"] == 1  # no facts: no call
    messages = PROMPTS["factnli.B2"].render(ANCHOR_TEXT="A man sleeps .", FACT_LIST_JSON=["x is y.", 'q "z".'])
    assert inputs_from_b2(messages) == ("A man sleeps .", ["x is y.", 'q "z".'])
    broken = Fuser(OfflineLLM(lambda m: "I cannot do that.", name="broken", cache=CallCache(":memory:")), "broken", "paper")
    res = broken.fuse_many([("A man sleeps .", ["A bench is a seat."])])[0]
    assert not res.ok and res.text is None and res.error  # no template text passed off as the LLM's fusion


def test_hypothesis_subsets_rank_by_similarity_and_keep_level_order():
    vecs = {"far": np.array([0.0, 1.0]), "near": np.array([1.0, 0.0]), "mid": np.array([0.7, 0.7])}
    h = np.array([1.0, 0.0])
    assert hypothesis_subsets([["far", "near", "mid"], ["far"], []], h, vecs, share=0.5) == [["near", "mid"], ["far"], []]
    assert hypothesis_subsets([["far", "near", "mid"]], h, vecs, share=0.3) == [["near"]]


# --------------------------------------------------------------------------------------------------------------
# The level loop with stand-in components
# --------------------------------------------------------------------------------------------------------------

class BowEncoder:
    """Deterministic bag-of-words unit vectors (a stand-in for MiniLM)."""

    fingerprint = "bow-test"

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in str(t).lower().replace(".", " ").split():
                out[i, sum(map(ord, w)) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class DictPages:
    """Pages keyed by a word of the query: {word: [sentences]}."""

    name = "dict-pages"

    def __init__(self, pages):
        self.pages = pages

    def search(self, query, exclude=frozenset(), new_text=None, used=frozenset()):
        words_ = {w.strip(".,").lower() for w in query.split()}
        return [Page(f"test:{w}", w, tuple(s)) for w, s in self.pages.items() if w in words_]


def _snippet_extractor(cache):
    """B.1 stand-in: every snippet is one fact (keeps the test independent of the tagger)."""

    def answer(messages):
        return json.dumps({"facts": [{"text": s, "snippet": k} for k, s in enumerate(snippets_from_b1(messages), 1)]})

    return FactExtractor(OfflineLLM(answer, name="snippet-facts", cache=cache), "snippet-facts", "offline")


PAGES = {
    "street": ["A street is a road in a town.", "A street is lined with houses."],
    "road": ["A road is a way for vehicles to travel.", "The road was empty."],
    "woman": ["A woman is an adult female person.", "The woman is asleep."],
    "dog": ["A dog is a domestic animal.", "A dog barks at night."],
    "animal": ["An animal is a living organism."],
    "houses": ["Houses are buildings for people to live in."],
}
RELATIONS = {("A woman walks down the street .", "The woman is asleep."): "contradiction",
             ("A dog runs on the street .", "A dog barks at night."): "entailment"}


def _augmenter(cache, judge=None, **settings):
    judge = judge or TableJudge(RELATIONS)
    retriever = SnippetRetriever(DictPages(PAGES), BowEncoder(), tau=-1.0, max_snippets=3)
    return Augmenter(retriever, _snippet_extractor(cache), judge, template_fuser(cache=cache),
                     PremiseFacts(lambda ps: [[] for _ in ps], "no-atoms"),
                     FactNLISettings(levels=3, max_snippets=3, max_candidates=3, **settings), cache)


EXAMPLES = pd.DataFrame({
    "premise": ["A woman walks down the street .", "A woman walks down the street .", "A dog runs on the street ."],
    "hypothesis": ["A woman is outside .", "A man is sleeping .", "An animal is moving ."],
    "label": ["entailment", "contradiction", "entailment"],
    "pair_id": ["p0", "p1", "p2"],
})


class RecordingFuser:
    """Delegates to a fuser and records every (anchor, facts) job."""

    def __init__(self, inner):
        self.inner, self.name, self.client, self.jobs = inner, inner.name, inner.client, []

    def fuse_many(self, jobs, progress=False):
        self.jobs += [(a, list(f)) for a, f in jobs]
        return self.inner.fuse_many(jobs, progress=progress)


def test_levels_hypothesis_always_from_original_and_premise_accumulates():
    cache = CallCache(":memory:")
    aug = _augmenter(cache)
    recorder = aug.fuser = RecordingFuser(aug.fuser)
    data = aug.build(EXAMPLES, progress=False)
    items = data.items
    assert sorted(items["level"].unique()) == [0, 1, 2, 3] and len(items) == 12
    for _, g in items.groupby("pair_id"):
        g = g.sort_values("level")
        h0, p0 = g["hypothesis"].iloc[0], g["premise"].iloc[0]
        prev_p, prev_hf = p0, []
        for _, row in g.iterrows():
            assert row["hypothesis"].startswith(h0)  # every level starts from the original h
            assert row["premise"].startswith(prev_p)  # p(t) is fused onto p(t-1)
            assert check_fusion(row["hypothesis"], h0, row["hyp_facts"])["each_fact_once"]
            assert check_fusion(row["premise"], p0, row["premise_facts"])["each_fact_once"]
            assert set(row["hyp_facts"]) <= set(row["premise_facts"])  # h's facts are fused into p too
            assert set(prev_hf) <= set(row["hyp_facts"])  # F* grows with the level
            prev_p, prev_hf = row["premise"], row["hyp_facts"]
    # the hypothesis fusion was given the ORIGINAL h as anchor at every level (never h(t-1))
    hyp_jobs = [(a, f) for a, f in recorder.jobs if not a.startswith(tuple(EXAMPLES["premise"]))]
    assert len(hyp_jobs) == 3 * len(EXAMPLES)  # one job per pair and level, each anchored on the original h
    assert {a for a, _ in hyp_jobs} == set(EXAMPLES["hypothesis"])
    # the filter removed the contradicting and the entailed snippet facts
    trace = data.trace
    assert trace.loc[trace["fact"] == "The woman is asleep.", "decision"].tolist() == ["contradicts truth set"]
    assert trace.loc[trace["fact"] == "A dog barks at night.", "decision"].tolist() == ["entailed by truth set"]
    fused = {f for fs in items["premise_facts"] for f in fs}
    assert "The woman is asleep." not in fused and "A dog barks at night." not in fused
    # provenance: every fused fact has its page source, its level and its snippet
    assert all(s.startswith("test:") for ss in items["sources"] for s in ss)
    for row in items.itertuples():
        prov = row.fact_provenance
        assert [x["fact"] for x in prov] == row.premise_facts
        assert all(1 <= x["level"] <= row.level and x["source"].startswith("test:") for x in prov)
        assert all(x["fact"] in PAGES[x["title"]] and x["snippet"] == x["fact"] for x in prov)  # one fact per snippet
        assert [x["fact"] for x in prov if x["in_hypothesis"]] == [f for f in row.premise_facts if f in row.hyp_facts]
        assert [x["fact"] for x in prov if x["level"] == row.level] == (row.level_facts if row.level else [])
    g = growth_by_level(items)
    assert list(g["premise_facts"]) == sorted(g["premise_facts"]) and g["premise_words"].is_monotonic_increasing


def test_no_filter_fuses_conflicts_and_never_asks_the_judge():
    cache = CallCache(":memory:")
    judge = TableJudge(RELATIONS)
    data = _augmenter(cache, judge=judge, use_filter=False).build(EXAMPLES, progress=False)
    fused = {f for fs in data.items["premise_facts"] for f in fs}
    assert "The woman is asleep." in fused and "A dog barks at night." in fused
    assert judge.asked == [] and data.variant == "no-filter"


def test_build_resumes_from_cached_levels():
    cache = CallCache(":memory:")
    aug = _augmenter(cache)
    first = aug.build(EXAMPLES, progress=False)
    # drop one premise's level-3 record, as if the run had been interrupted there
    cache.delete(NAMESPACE, aug._key("A dog runs on the street .", 3))
    counting = TableJudge(RELATIONS)
    again = _augmenter(cache, judge=counting)
    assert again.fingerprint == aug.fingerprint
    second = again.build(EXAMPLES, progress=False)
    asked_premises = {a for a, _ in counting.asked}
    assert "A woman walks down the street ." not in asked_premises  # finished chain: read from the cache
    assert counting.asked  # the missing level was recomputed
    pd.testing.assert_frame_equal(first.items, second.items)


def test_a_failed_fusion_is_recorded_not_built_and_not_cached():
    cache = CallCache(":memory:")
    aug = _augmenter(cache)
    compose_answer, state = aug.fuser.client.generate, {"fail": True}

    def flaky(messages):
        if state["fail"] and "[Inputs]\nA dog" in messages[-1]["content"]:
            raise RuntimeError("endpoint down")
        return compose_answer(messages)

    aug.fuser = Fuser(OfflineLLM(flaky, name="flaky-fuser", cache=cache), "flaky-fuser", "paper")
    data = aug.build(EXAMPLES, progress=False)
    assert len(data.items) == 9 and set(data.items.loc[data.items["pair_id"] == "p2", "level"]) == {0}
    assert data.failed["pair_id"].tolist() == ["p2"] * 3 and data.failed["level"].tolist() == [1, 2, 3]
    assert data.failed["failure"].str.startswith("level 1: premise fusion (B.2) failed: call failed").all()
    assert data.items["premise"].notna().all() and data.items["hypothesis"].notna().all()
    state["fail"] = False  # the endpoint is back: the failed level was not cached, so it is built now
    again = aug.build(EXAMPLES, progress=False)
    assert len(again.items) == 12 and again.failed.empty
    pd.testing.assert_frame_equal(again.items[again.items["pair_id"] != "p2"].reset_index(drop=True),
                                  data.items[data.items["pair_id"] != "p2"].reset_index(drop=True))


def test_rewrite_only_leaves_out_failed_rewrites():
    cache = CallCache(":memory:")
    data = _augmenter(cache).build(EXAMPLES, progress=False)
    good = atoms_rewrite_answer(lambda s: ["Restatement one is here."])
    client = OfflineLLM(lambda m: "Sorry, I can't help with that." if "A dog" in m[-1]["content"] else good(m),
                        name="rewrite-refuses", cache=cache)
    rw = rewrite_only(data, client=client)
    assert set(rw["pair_id"]) == {"p0", "p1"} and rw["premise"].notna().all()
    failed = rw.attrs["failed"]
    assert [r["pair_id"] for r in failed] == ["p2"] and failed[0]["failure"].startswith("rewrite failed: refusal")
    assert len(pd.concat([rw, rw], ignore_index=True)) == 2 * len(rw)  # attrs must not break concatenation


def test_controls_unrelated_facts_and_rewrite_only():
    cache = CallCache(":memory:")
    aug = _augmenter(cache)
    data = aug.build(EXAMPLES, progress=False)
    unrelated = unrelated_facts(data, aug, seed=0)
    own = {r.orig_premise: r.level_facts for r in data.level(1).itertuples()}
    for r in unrelated.itertuples():
        assert r.donor_premise != r.orig_premise
        assert not set(r.premise_facts) & set(own[r.orig_premise])
        assert r.premise.startswith(r.orig_premise) and r.hypothesis.startswith(r.orig_hypothesis)
        assert set(r.hyp_facts) <= set(r.premise_facts)
    client = OfflineLLM(atoms_rewrite_answer(lambda s: ["Restatement one is here.", "Restatement two is here."]),
                        name="rewrite-test", cache=cache)
    rw = rewrite_only(data, client=client)
    assert (rw["premise"].str.len() >= rw["orig_premise"].str.len()).all()
    assert all(p.startswith(o) for p, o in zip(rw["premise"], rw["orig_premise"]))
    assert set(rw["variant"]) == {"rewrite"}


# --------------------------------------------------------------------------------------------------------------
# Retrieval and extraction
# --------------------------------------------------------------------------------------------------------------

def test_snippet_retriever_threshold_order_cap_and_exclusion():
    r = SnippetRetriever(DictPages(PAGES), BowEncoder(), tau=0.2, max_snippets=2)
    query = "A dog runs down the street ."
    pool = r.retrieve_many([query])[0]
    enc = BowEncoder()
    q = enc.encode([query])[0]
    scores = {s: float(enc.encode([s])[0] @ q) for w in PAGES if w in ("dog", "street") for s in PAGES[w]}
    expected = [s for s, v in sorted(scores.items(), key=lambda kv: -kv[1]) if v >= 0.2][:2]
    assert [s.text for s in pool] == expected
    assert all(s.score >= 0.2 for s in pool) and pool == sorted(pool, key=lambda s: -s.score)
    from nli_lib.text import normalise
    again = r.retrieve_many([query], [{normalise(expected[0])}])[0]
    assert expected[0] not in [s.text for s in again]


def test_parse_b1_attributes_facts_to_snippets():
    snippets = [Snippet("Carnaby Street is in Soho.", "w:Carnaby", "Carnaby Street", 0.5),
                Snippet("Street fashion is linked to youth culture.", "w:Fashion", "Street fashion", 0.4)]
    llm_answer = '{"facts": [{"text": "Street fashion is linked to youth culture,"}, {"text": "Carnaby Street is in Soho."}]}'
    facts, err = parse_b1(llm_answer, snippets)
    assert err is None and [f.source for f in facts] == ["w:Fashion", "w:Carnaby"]
    assert facts[0].text == "Street fashion is linked to youth culture"  # B.1's "<fact>," comma removed
    assert parse_b1("no json here", snippets) == ([], "no JSON object found")
    messages = PROMPTS["factnli.B1"].render(SNIPPETS=[s.text for s in snippets])
    assert snippets_from_b1(messages) == [s.text for s in snippets]


WIKI_HITS: list = []


def _wiki_answer(method, path, body):
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(path).query))
    WIKI_HITS.append(q)
    if q.get("list") == "search":
        titles = {"street": ["Carnaby Street"], "fashion": ["Street fashion"]}.get(q["srsearch"], [])
        return 200, {"query": {"search": [{"title": t} for t in titles]}}
    extracts = {"Carnaby Street": "Carnaby Street is a shopping street in Soho. It is pedestrianised.",
                "Street fashion": "Street fashion is associated with youth culture."}
    return 200, {"query": {"pages": {str(i): {"title": t, "extract": extracts[t]}
                                     for i, t in enumerate(q["titles"].split("|"))}}}


@pytest.fixture()
def wiki_server():
    WIKI_HITS.clear()
    with local_server(_wiki_answer) as url:
        yield f"{url}/w/api.php"


def test_wikipedia_pages_against_a_local_stand_in(wiki_server):
    cache = CallCache(":memory:")
    wiki = WikipediaPages(wiki_server, cache=cache, terms=lambda q: ["street", "fashion"])
    pages = wiki.search("A woman on a street looks at fashion.")
    assert [p.title for p in pages] == ["Carnaby Street", "Street fashion"]
    assert pages[0].sentences == ("Carnaby Street is a shopping street in Soho.", "It is pedestrianised.")
    assert pages[0].source == "wikipedia:Carnaby Street"
    n = len(WIKI_HITS)
    assert wiki.search("A woman on a street looks at fashion.") == pages and len(WIKI_HITS) == n  # cached
    from nli_lib.text import normalise
    assert [p.title for p in wiki.search("x", exclude={normalise(s) for s in pages[1].sentences})] == ["Carnaby Street"]
    offline = WikipediaPages("http://127.0.0.1:9/w/api.php", cache=CallCache(":memory:"), replay_only=True,
                             terms=lambda q: ["street"])
    with pytest.raises(ReplayMiss):
        offline.search("street")


@pytest.mark.mirror
def test_atomize_splits_clauses_resolves_and_drops_pronouns():
    from nli_lib.factnli import atomize

    assert atomize("A window is a framework of wood that contains a glass windowpane and is built into a wall.") == [
        "A window is a framework of wood.", "A window contains a glass windowpane.", "A window is built into a wall."]
    assert atomize("The dog barked all night and it woke the neighbours.") == [
        "The dog barked all night.", "The dog woke the neighbours."]
    assert atomize("He lives on Nassau Street.") == []
    assert atomize("It is pedestrianised.") == []
    assert atomize("London had a population of 9,841,000 in 2025.") == ["London had a population of 9,841,000 in 2025."]
    assert atomize("the streets of the small town") == []  # a fragment is not a fact
    # no vacuous "X is someone." from a relative clause after a pronominal head
    assert atomize("A snowboarder is someone who slides down snow-covered slopes.") == [
        "A snowboarder is someone who slides down snow-covered slopes."]
    # "and" + participle after a copula stays in the predicate (no fragment "A body regarded as an entity.")
    assert atomize("A body is a group of persons associated by some common tie and regarded as an entity.") == [
        "A body is a group of persons associated by some common tie and regarded as an entity."]
    assert atomize("The dog barked all night and woke the neighbours.") == [
        "The dog barked all night.", "The dog woke the neighbours."]  # past-tense VPs do split


@pytest.mark.mirror
@pytest.mark.slow  # parses the real Open English WordNet on a cold cache
def test_wordnet_pages_and_definition_sentences():
    from nli_lib.factnli import WordNetPages, definition_sentences

    assert definition_sentences("street", "a thoroughfare (usually including sidewalks) that is lined with buildings") \
        == ["A street is a thoroughfare that is lined with buildings."]
    assert definition_sentences("dog", "a member of the genus Canis; occurs in many breeds") == [
        "A dog is a member of the genus Canis.", "A dog occurs in many breeds."]
    assert definition_sentences("laborer", "someone who works with their hands") == [
        "A laborer is someone who works with their hands."]  # not "Laborer is a someone ..."
    assert definition_sentences("bird", "warm-blooded egg-laying vertebrates characterized by feathers") == [
        "Birds are warm-blooded egg-laying vertebrates characterized by feathers."]
    assert definition_sentences("water", "binary compound that occurs at room temperature as a clear liquid") == [
        "Water is a binary compound that occurs at room temperature as a clear liquid."]
    # quantified later parts get the plural subject; a part without a finite verb is dropped
    assert definition_sentences("herb", "a plant lacking a permanent woody stem; many are flowering garden plants; "
                                        "some having medicinal properties; some are pests") == [
        "A herb is a plant lacking a permanent woody stem.", "Many herbs are flowering garden plants.",
        "Some herbs are pests."]
    # number follows the head noun of the gloss, not its first noun
    assert definition_sentences("gallinaceous bird", "heavy-bodied largely ground-feeding domestic or game birds") == [
        "Gallinaceous birds are heavy-bodied largely ground-feeding domestic or game birds."]
    wn_pages = WordNetPages()
    pages = wn_pages.search("A woman wearing a tank top looks into a window on a city street .")
    titles = [p.title for p in pages]
    assert {"woman", "tank top", "street"} <= set(titles)
    assert all(p.source.startswith("oewn:") and p.sentences for p in pages)
    # one page per query noun: 'street' gets its thoroughfare sense only, not its other senses pooled
    assert [p.source for p in pages if p.title == "street"] == ["oewn:04341737-n"]
    # 'window' (house window vs car window fit almost equally here) is skipped, not guessed
    window = next(c for c in wn_pages.choices if c.term == "window")
    assert window.synset is None and window.reason.startswith("ambiguous") and "window" not in titles


# --------------------------------------------------------------------------------------------------------------
# §4 metrics on hand-computed cases
# --------------------------------------------------------------------------------------------------------------

def _preds(rows):
    df = pd.DataFrame(rows, columns=["model", "variant", "level", "label", "pred"])
    df["tier"], df["pair_id"] = "offline", range(len(df))
    df["correct"] = df["label"] == df["pred"]
    return df


def test_accuracy_ablation_and_controls_tables():
    E, N, C = LABELS
    rows = [("m", "full", 0, E, E), ("m", "full", 0, N, N), ("m", "full", 0, C, C), ("m", "full", 0, C, E),
            ("m", "full", 1, E, E), ("m", "full", 1, N, E), ("m", "full", 1, C, C), ("m", "full", 1, C, E),
            ("m", "no-filter", 1, E, N), ("m", "no-filter", 1, N, E), ("m", "no-filter", 1, C, C), ("m", "no-filter", 1, C, E),
            ("m", "rewrite", 1, E, E), ("m", "rewrite", 1, N, N), ("m", "rewrite", 1, C, C), ("m", "rewrite", 1, C, C),
            ("m", "unrelated-facts", 1, E, E), ("m", "unrelated-facts", 1, N, N), ("m", "unrelated-facts", 1, C, E),
            ("m", "unrelated-facts", 1, C, E)]
    preds = _preds(rows)
    t2 = accuracy_by_level(preds)
    assert t2.loc[0, "Acc L=0"] == 75.0 and t2.loc[0, "Acc L=1"] == 50.0 and t2.loc[0, "drop L0→L1"] == 25.0
    t3 = ablation_table(preds)
    assert t3.loc[0, "Acc L=1, Full"] == 50.0 and t3.loc[0, "Acc L=1, No-Filter"] == 25.0
    t7 = controls_table(preds)
    assert t7.loc[0, ["Original", "FactNLI L=1", "Rewrite", "Unrelated-Facts"]].tolist() == [75.0, 50.0, 100.0, 50.0]


def test_growth_by_level_hand_computed():
    items = pd.DataFrame({"level": [0, 0, 1, 1], "premise_words": [10, 20, 30, 50], "hyp_words": [5, 5, 10, 20],
                          "n_premise_facts": [0, 0, 2, 4], "n_hyp_facts": [0, 0, 1, 2]})
    g = growth_by_level(items)
    assert g["premise_words"].tolist() == [15, 40] and g["Δ premise_words"].tolist()[1] == 25
    assert g["hypothesis ×L0"].tolist() == [1.0, 3.0] and g["premise_facts"].tolist() == [0, 3]


def test_diagnostics_hand_computed():
    p = "A man sleeps ."
    p1, h1 = p + " One. Two. Three. Vee.", "A man rests . One."
    items = pd.DataFrame([
        {"pair_id": "x", "level": 0, "label": "entailment", "orig_premise": p, "premise": p, "hypothesis": "A man rests .",
         "premise_facts": [], "hyp_facts": [], "variant": "full"},
        {"pair_id": "x", "level": 1, "label": "entailment", "orig_premise": p, "premise": p1, "hypothesis": h1,
         "premise_facts": ["F1.", "F2.", "F3.", "Vee."], "hyp_facts": ["F1."], "variant": "full"},
    ])
    # F1..F3 are paraphrased in the texts ("One.", ...): only they need a judge; "Vee." is carried verbatim
    judge = TableJudge({("F1.", "F2."): "contradiction", (p, "F3."): "entailment",
                        (p1, "F1."): "entailment", (p1, "F2."): "entailment", (h1, "F1."): "entailment"})
    labeller = TableClassifier({(p, "A man rests ."): [0.8, 0.1, 0.1], (p1, h1): [0.2, 0.7, 0.1]},
                               default=[1 / 3] * 3, name="fixed")
    rows = diagnostics(items, judge, long_judge=judge, label_model=labeller, support="text")
    r = rows.iloc[0]
    assert r["conflict"] and r["n_redundant"] == 1 and r["n_facts"] == 4  # F3 entailed by p
    assert r["conflict_forward"] and r["conflict_pair"] == "F1. ⊥ F2."
    assert r["n_checks"] == 5 and r["n_verbatim"] == 1 and r["n_nli_checked"] == 4
    assert r["n_supported"] == 4  # Vee (verbatim) + F1 twice + F2; F3 not entailed by p(1)
    assert (p1, "Vee.") not in judge.asked  # a verbatim fact never goes to the judge
    assert r["label_pred"] == "neutral" and not r["label_preserved"] and not r["label_stable"]
    t = diagnostics_table(rows, "table-judge").iloc[0]
    assert (t["Conflict (%)"], t["Redundancy (%)"], t["Factuality (%)"], t["Verbatim (%)"]) == (100.0, 25.0, 80.0, 20.0)
    assert t["facts judged by NLI"] == 4
    # sentence-level support: a fact counts when one of its k most related sentences entails it
    sent_judge = TableJudge({("One.", "F1."): "entailment", ("Three.", "F3."): "entailment",
                             ("F2.", "F1."): "contradiction"})
    rows = diagnostics(items, sent_judge, label_model=labeller, k=5)
    r = rows.iloc[0]
    assert r["n_supported"] == 4 and r["n_checks"] == 5  # Vee, F1 twice (p and h), F3; F2 never entailed
    assert r["conflict"] and not r["conflict_forward"]  # only the reverse order (F2 ⊥ F1) contradicts
    assert (h1, "F1.") not in sent_judge.asked  # whole texts are not judged
    with pytest.raises(ValueError):
        diagnostics(items, sent_judge, label_model=labeller, support="paragraph")


def test_paper_values_table():
    t = paper_table("factnli-table-2", ["GPT-4o", "Average"], ["Acc L=0", "Acc L=3"])
    assert t["Acc L=0"].tolist() == [84.8, 80.7] and t["Acc L=3"].tolist() == [55.3, 56.7]
    t7 = paper_table("factnli-table-7", ["GPT-4o"], ["Original", "Rewrite"], dataset="")
    assert t7.iloc[0][["Original", "Rewrite"]].tolist() == [84.8, 78.6]


# --------------------------------------------------------------------------------------------------------------
# Scorecard rows, audit sample, records
# --------------------------------------------------------------------------------------------------------------

def _scoreable_quantities():
    """Every (ref, quantity) the notebooks' scoring functions produce for an offline MiniLM run."""
    from nli_lib.factnli import accuracy_scores, growth_scores

    model = "minilm-esnli"
    t2 = pd.DataFrame([{"model": model, **{f"Acc L={k}": 50.0 + k for k in range(4)}}])
    t3 = pd.DataFrame([{"model": model, "Acc L=0": 1.0, "Acc L=3, Full": 2.0, "Acc L=3, No-Filter": 3.0}])
    t7 = pd.DataFrame([{"model": model, "Original": 1.0, "FactNLI L=1": 2.0, "Rewrite": 3.0, "Unrelated-Facts": 4.0}])
    growth = growth_by_level(pd.DataFrame({"level": [0, 3], "premise_words": [10, 100], "hyp_words": [5, 50],
                                           "n_premise_facts": [0, 9], "n_hyp_facts": [0, 5]}))
    gen = "factnli-fuse-template-v1"
    frames = [accuracy_scores(t2, "factnli-table-2", {f"Acc L={k}": f"SNLI Acc L={k}" for k in range(4)}, {}, gen,
                              stand_in=model),
              accuracy_scores(t3, "factnli-table-3", {c: c for c in t3.columns[1:]}, {}, gen, stand_in=model),
              accuracy_scores(t7, "factnli-table-7", {c: c for c in t7.columns[1:]}, {}, gen, stand_in=model),
              growth_scores(growth, pd.DataFrame({"premise": ["a b"], "hypothesis": ["c"]}), gen, {})]
    return pd.concat(frames, ignore_index=True)


def _mnli_quantities():
    """What an offline run adds once MultiNLI is at hand: Table 2's MNLI columns, MNLI's L=0 lengths."""
    from nli_lib.factnli import growth_scores, table_scores

    t2 = pd.DataFrame([{"model": "minilm-esnli", "tier": "offline", "dataset": "MNLI (matched+mismatched)",
                        **{f"Acc L={k}": 50.0 + k for k in range(4)}}])
    growth = growth_by_level(pd.DataFrame({"level": [0], "premise_words": [10], "hyp_words": [5],
                                           "n_premise_facts": [0], "n_hyp_facts": [0]}))
    pairs = pd.DataFrame({"premise": ["a b"], "hypothesis": ["c"]})
    frames = [table_scores(t2, "factnli-table-2", {}, "factnli-fuse-template-v1", stand_in="minilm-esnli"),
              growth_scores(growth, pairs, "gen", {}, mnli_validation=pairs).iloc[2:]]
    return pd.concat(frames, ignore_index=True)


def test_every_factnli_paper_value_is_scored_or_has_a_reason():
    from nli_lib.paper_values import paper_values_frame

    values = paper_values_frame("factnli")
    scored = _scoreable_quantities()
    keys = set(zip(scored["ref"], scored["quantity"]))
    assert len(keys) == len(scored)  # no quantity scored twice for one model
    assert keys <= set(zip(values["ref"], values["quantity"]))  # every score() call names a real paper value
    without_reason = set(zip(values.loc[values["reason"] == "", "ref"], values.loc[values["reason"] == "", "quantity"]))
    # notebook 00 scores the SNLI test size; everything else without a reason is scored by notebooks 40/41;
    # the human audit (Tables 4-5) is never scored against our automatic proxies, so it carries a reason
    assert without_reason == keys | {("factnli-table-1", "SNLI test size")}
    assert not {ref for ref, _ in without_reason} & {"factnli-table-4", "factnli-table-5"}
    assert set(scored["basis"]) == {"data", "stand-in"}  # offline: only the SNLI lengths are like for like
    with_reason = set(zip(values.loc[values["reason"] != "", "ref"], values.loc[values["reason"] != "", "quantity"]))
    assert not keys & with_reason
    # with MultiNLI fetched, Table 2's MNLI columns and MNLI's L=0 lengths are scored too; they keep their
    # reason (online-only data), which the scorecard shows only where a run did not compute them
    mnli = _mnli_quantities()
    mnli_keys = set(zip(mnli["ref"], mnli["quantity"]))
    assert len(mnli_keys) == 6 and mnli_keys <= with_reason
    assert all("online-only" in r for r in values.set_index(["ref", "quantity"]).loc[list(mnli_keys), "reason"])


def test_accuracy_scores_use_declared_rows_and_one_named_stand_in():
    from nli_lib.factnli import accuracy_scores

    t = pd.DataFrame({"model": ["minilm-esnli", "tfidf-logreg", "cross-encoder/nli-deberta-v3-large",
                                "deepseek-reasoner"], "Original": [80.0, 60.0, 90.0, 95.0]})
    rows = accuracy_scores(t, "factnli-table-7", {"Original": "Original"}, {}, "gpt-4o-2024-08-06", note="n=3",
                           stand_in="minilm-esnli")
    # only the named stand-in sits beside the paper's encoder row; lookalike names (deberta, deepseek) sit nowhere
    assert rows[["quantity", "ours", "model", "basis"]].values.tolist() == [
        ["DeBERTa-v3-large Original", 80.0, "minilm-esnli", "stand-in"]]
    assert "stand-in" in rows["note"][0] and rows["note"][0].endswith("n=3")
    declared = {"cross-encoder/nli-deberta-v3-large": "DeBERTa-v3-large", "gpt-4o-2024-08-06": "GPT-4o",
                "deepseek-reasoner": ["DeepSeek-V3"]}
    rows = accuracy_scores(t, "factnli-table-7", {"Original": "Original"}, declared, "gpt-4o-2024-08-06",
                           stand_in="minilm-esnli")
    assert rows[["quantity", "basis"]].values.tolist() == [["DeBERTa-v3-large Original", "stand-in"],
                                                           ["DeBERTa-v3-large Original", "paper-model"],
                                                           ["DeepSeek-V3 Original", "paper-model"]]
    other_gen = accuracy_scores(t, "factnli-table-7", {"Original": "Original"}, declared, "factnli-fuse-template-v1")
    assert other_gen["basis"].tolist() == ["stand-in", "stand-in"]  # the paper's models on our levels
    # levels filtered by a judge not declared the paper's cross-encoder are not the paper's levels either
    judged = accuracy_scores(t, "factnli-table-7", {"Original": "Original"}, declared, "gpt-4o-2024-08-06",
                             judge="my-judge")
    assert judged["basis"].tolist() == ["stand-in", "stand-in"]
    declared["my-judge"] = ["DeBERTa-v3-base cross-encoder"]
    assert accuracy_scores(t, "factnli-table-7", {"Original": "Original"}, declared, "gpt-4o-2024-08-06",
                           judge="my-judge")["basis"].tolist() == ["paper-model", "paper-model"]


def test_growth_scores_hand_computed():
    from nli_lib.factnli import growth_scores

    growth = growth_by_level(pd.DataFrame({"level": [0, 0, 3, 3], "premise_words": [10, 20, 90, 150],
                                           "hyp_words": [5, 5, 40, 60], "n_premise_facts": [0, 0, 9, 11],
                                           "n_hyp_facts": [0, 0, 4, 6]}))
    test = pd.DataFrame({"premise": ["one two three", "one"], "hypothesis": ["a b", "c d"]})
    scores = growth_scores(growth, test, "gen", {}).set_index("quantity")
    assert scores.at["Premise words L=0 (low end)", "basis"] == "data"
    assert scores.at["Premise words L=3 (low end)", "basis"] == "stand-in"
    g = scores["ours"]
    assert g["Premise words L=0 (low end)"] == 2.0 and g["Hypothesis words L=0 (low end)"] == 2.0
    assert g["Premise words L=3 (low end)"] == 120.0 and g["Premise growth L=0 to L=3 (x, low end)"] == 8.0
    assert g["Hypothesis growth L=0 to L=3 (x, low end)"] == 10.0


def test_diagnostic_sample_distinct_premises_balanced_labels_and_levels():
    from types import SimpleNamespace

    from nli_lib.factnli import session as S

    cache = CallCache(":memory:")
    examples = pd.DataFrame({
        "premise": [f"A dog runs on the street number {i} ." for i in range(6) for _ in range(3)],
        "hypothesis": [f"h{i}-{lab}" for i in range(6) for lab in LABELS],
        "label": [lab for _ in range(6) for lab in LABELS], "pair_id": [f"{i}-{j}" for i in range(6) for j in range(3)]})
    aug = _augmenter(cache)
    data = {"full": aug.build(examples, progress=False),
            "no-filter": aug.with_settings(use_filter=False).build(examples, progress=False)}
    audit = S.diagnostic_items(SimpleNamespace(quick=False, seed=0), data, n=3)
    full, nf = audit["full"], audit["no-filter"]
    assert full["pair_id"].nunique() == 3 and full.groupby("pair_id")["orig_premise"].first().nunique() == 3
    assert sorted(full.drop_duplicates("pair_id")["label"]) == sorted(LABELS)  # one per label
    assert sorted(full["level"].unique()) == [0, 1, 2, 3] and sorted(nf["level"].unique()) == [0, 3]
    assert set(nf["pair_id"]) == set(full["pair_id"])


def test_sample_size_override(monkeypatch):
    from types import SimpleNamespace

    from nli_lib.factnli import session as S

    nb = SimpleNamespace(quick=False, tier="offline", seed=0)
    monkeypatch.delenv(S.PREMISES_ENV, raising=False)
    assert S.n_premises(nb) == S.OFFLINE_PREMISES
    assert S.n_premises(SimpleNamespace(quick=True, tier="offline")) == S.QUICK_PREMISES
    assert S.n_premises(SimpleNamespace(quick=False, tier="paper")) is None  # all 9,824 pairs
    monkeypatch.setenv(S.PREMISES_ENV, "all")
    assert S.n_premises(nb) is None
    monkeypatch.setenv(S.PREMISES_ENV, "7")
    assert S.n_premises(nb) == 7


def test_prediction_and_diagnostic_records():
    from nli_lib.factnli import diagnostic_records, prediction_records

    preds = _preds([("m", "full", 0, "entailment", "entailment"), ("m", "full", 1, "entailment", "neutral"),
                    ("m", "no-filter", 1, "entailment", "entailment")])
    preds["pair_id"] = 7
    rec = prediction_records(preds)
    assert rec["flipped"].tolist() == [False, True, False] and rec["right_at_L0"].all()
    rows = pd.DataFrame({"variant": ["full"], "pair_id": [7], "level": [1], "conflict": [True]})
    items = pd.DataFrame({"pair_id": [7, 7], "level": [0, 1], "premise": ["p", "p F."], "hypothesis": ["h", "h F."],
                          "premise_facts": [[], ["F."]], "hyp_facts": [[], ["F."]]})
    out = diagnostic_records(rows, {"full": items, "no-filter": items})
    assert len(out) == 1 and out.loc[0, "premise"] == "p F." and out.loc[0, "premise_facts"] == ["F."]


# --------------------------------------------------------------------------------------------------------------
# Truthful offline facts: sense choice, no usage examples, parentheticals, vacuity, context, gold precision
# --------------------------------------------------------------------------------------------------------------

class ToyWordNet(TableWordNet):
    """Two nouns: 'dog' (animal first, 'unattractive woman' second, a slang sense third) and 'animal'."""

    SYNSETS = {
        "d1": ("a domesticated animal that barks and guards the house", ["dog"], ["a1"], ["the dog barked all night"]),
        "d2": ("a dull unattractive unpleasant girl or woman", ["dog", "frump"], [], ["she got a dog for a wife"]),
        "d3": ("(slang) a worthless thing", ["dog"], [], []),
        "a1": ("a living organism that can move", ["animal"], [], ["animals in the zoo barked loudly"]),
    }



def test_sense_choice_by_context_similarity_prior_margin_and_register():
    from nli_lib.factnli.senses import BagOfWords, SenseChooser

    chooser = SenseChooser(ToyWordNet(), BagOfWords(), prior=0.1, margin=0.0)
    assert chooser.candidates("dog") == ["d1", "d2"]  # the slang sense is no candidate
    scene, insult = chooser.choose_many([("dog", "A dog barks at the house."),
                                         ("dog", "An unpleasant girl or woman sits alone.")])
    assert scene.synset == "d1" and scene.reason == "best in context"
    assert insult.synset == "d2"  # a rarer sense wins when its gloss fits the sentence clearly better
    assert [s for s, _ in scene.scores] == ["d1", "d2"]
    # the prior: with no evidence either way, the more frequent sense is chosen
    assert chooser.choose_many([("dog", "Nothing here.")])[0].synset == "d1"
    # a sense that wins by less than the margin is not guessed
    strict = SenseChooser(ToyWordNet(), BagOfWords(), prior=0.0, margin=2.0)
    skipped = strict.choose_many([("dog", "A dog barks at the house.")])[0]
    assert skipped.synset is None and skipped.reason.startswith("ambiguous")
    assert chooser.choose_many([("animal", "x")])[0].reason == "only sense"


@pytest.mark.mirror
def test_wordnet_pages_use_one_sense_and_never_usage_examples():
    from nli_lib.factnli import WordNetPages
    from nli_lib.factnli.senses import BagOfWords

    pages = WordNetPages(ToyWordNet(), encoder=BagOfWords(), margin=0.0)
    found = pages.search("A dog barks at the house .")
    assert [p.source for p in found] == ["oewn:d1", "oewn:a1"]  # chosen sense + its hypernym, not 'd2' pooled
    sentences = [s for p in found for s in p.sentences]
    examples = [e for s in ToyWordNet.SYNSETS.values() for e in s[3]]
    assert sentences and not any(normalise_(e) in map(normalise_, sentences) for e in examples)
    assert all(" is " in s for s in sentences)  # only gloss sentences ("A dog is ...")
    table = pages.sense_table("A dog barks at the house .")  # notebook 40's sense table
    assert list(table.columns) == ["term", "chosen", "reason", "gloss"]
    dog = table.set_index("term").loc["dog"]
    assert dog["chosen"] == "d1" and dog["gloss"] == ToyWordNet().definition("d1")


def normalise_(text):
    from nli_lib.text import normalise

    return normalise(text)


@pytest.mark.mirror
def test_meaning_bearing_parentheticals_are_kept_elaborations_dropped():
    from nli_lib.factnli import atomize, definition_sentences
    from nli_lib.factnli.text import strip_parentheticals

    assert definition_sentences("French leave", "an abrupt and unannounced departure (without saying farewell)") == [
        "French leave is an abrupt and unannounced departure (without saying farewell)."]
    assert definition_sentences("woman", "an adult female person (as opposed to a man)") == [
        "A woman is an adult female person (as opposed to a man)."]
    assert definition_sentences("street", "a thoroughfare (usually including sidewalks) that is lined with buildings") \
        == ["A street is a thoroughfare that is lined with buildings."]  # an elaboration: dropped
    assert atomize("French leave is an abrupt and unannounced departure (without saying farewell).") == [
        "French leave is an abrupt and unannounced departure (without saying farewell)."]
    assert strip_parentheticals("a bench (not a chair)") == "a bench (not a chair)"
    # labels: a subject field frames the fact, a register label gives none, a number marker is dropped
    assert definition_sentences("bat", "(baseball) a turn trying to get a hit") == [
        "In baseball, a bat is a turn trying to get a hit."]
    assert definition_sentences("suit", "(slang) a businessman dressed in a business suit") == []
    # agreement: a plural title takes a plural verb, also in later parts
    assert definition_sentences("pants", "(usually in the plural) a garment extending from the waist to the ankle; "
                                         "covers each leg separately") == [
        "Pants are a garment extending from the waist to the ankle.", "Pants cover each leg separately."]
    assert definition_sentences("people", "(plural) any group of human beings collectively") == [
        "People are any group of human beings collectively."]


def test_vacuous_atoms_are_defined_and_left_out_of_the_truth_set():
    from nli_lib.factnli import is_vacuous, truth_seed

    for atom in ["There is a person.", "There are two dogs.", "There are people.", "There is a tank top.",
                 "The person is wearing something.", "The people are holding something."]:
        assert is_vacuous(atom), atom
    for atom in ["The person is a woman.", "There is a man in a red shirt.", "There is a man outside.",
                 "The tank top is yellow.", "The person is wearing a hat.", "The dogs run."]:
        assert not is_vacuous(atom), atom
    p = "A woman walks her dog ."
    atoms = ["There is a person.", "The person is a woman."]
    assert truth_seed(p, atoms) == [p, "The person is a woman."]
    assert truth_seed(p, atoms, drop_vacuous=False) == [p, *atoms]
    # in the pipeline: the vacuous atom would veto a fact (the judge calls it a contradiction) but is no evidence
    cache = CallCache(":memory:")
    judge = TableJudge({("There is a person.", "A dog is a domestic animal."): "contradiction"})
    examples = pd.DataFrame({"premise": ["A dog runs on the street ."], "hypothesis": ["A dog runs ."],
                             "label": ["entailment"], "pair_id": ["v0"]})

    def build(drop):
        aug = _augmenter(cache, judge=judge, drop_vacuous=drop)
        aug.premise_facts = PremiseFacts(lambda ps: [["There is a person.", "The dog runs."] for _ in ps], "toy-atoms")
        return aug.build(examples, progress=False)

    kept, vetoed = build(True), build(False)
    def decision(d):
        return d.trace.set_index("fact").loc["A dog is a domestic animal.", "decision"]

    assert decision(kept) != "contradicts truth set" and decision(vetoed) == "contradicts truth set"
    assert kept.chains["A dog runs on the street ."]["truth"] == ["A dog runs on the street .", "The dog runs."]


class _WordTokenizer:
    """One token per word plus 3 special tokens; a 40-token model limit."""

    model_max_length = 40

    def __call__(self, a, b, truncation=False):
        assert truncation is False
        return {"input_ids": [[0] * (len(x.split()) + len(y.split()) + 3) for x, y in zip(a, b)]}


class _TokModel:
    name, tokenizer = "tok", _WordTokenizer()

    def __init__(self, max_length=8):
        self.max_length, self._fingerprint = max_length, f"tok|max_len={max_length}"

    @property
    def fingerprint(self):
        return self._fingerprint


def test_context_window_is_sized_from_the_data_and_truncation_is_counted():
    from nli_lib.factnli import context_report, needed_length, sized_view

    frames = {"full": pd.DataFrame({"level": [0, 0, 3], "premise": ["a b c", "a", "w " * 20], "hypothesis": ["d", "e", "f g"]}),
              "no-filter": pd.DataFrame({"level": [3], "premise": ["w " * 30], "hypothesis": ["h"]})}
    # longest pair: 30 + 1 + 3 = 34 tokens -> 64 (multiple of 32), capped at the tokenizer's 40
    assert needed_length(_TokModel(), frames) == 40
    assert needed_length(_TokModel(), {"full": frames["full"]}) == 32  # 20 + 2 + 3 = 25 -> 32
    assert needed_length(_TokModel(), {"full": frames["full"]}, multiple=8) == 32
    rep = context_report(_TokModel(), frames, 32)
    assert rep[["variant", "level", "n", "max tokens", "truncated"]].values.tolist() == [
        ["full", 0, 2, 7, 0], ["full", 3, 1, 25, 0], ["no-filter", 3, 1, 34, 1]]
    view = sized_view(_TokModel(), {"full": frames["full"]})
    assert view.max_length == 32 and view.fingerprint == "tok|max_len=32"  # its own cache key
    assert sized_view("tfidf", frames) == "tfidf"  # no tokenizer: unchanged


def test_token_counts_are_kept_per_tokenizer_identity_and_pairs(tmp_path, monkeypatch):
    """A model with a weights_id (its folder's hash, tokenizer files included) has its pair lengths and token limit
    kept in the file cache: sizing the window (`sized_view` included) and the context report again read no
    tokenizer; another
    identity or other pairs tokenize afresh."""
    from nli_lib.factnli import context_report, needed_length, sized_view

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))

    class Counting(_TokModel):
        weights_id, reads = "tok@sha256:0123456789abcdef", 0

        @property
        def tokenizer(self):
            type(self).reads += 1
            return _WordTokenizer()

    frames = {"full": pd.DataFrame({"level": [0, 3], "premise": ["a b c", "w " * 50], "hypothesis": ["d", "f g"]})}
    window, report = needed_length(Counting(), frames), context_report(Counting(), frames, 32)
    assert window == 40 and report["max tokens"].tolist() == [7, 55] and Counting.reads == 2  # limit and lengths
    assert needed_length(Counting(), frames) == 40
    pd.testing.assert_frame_equal(context_report(Counting(), frames, 32), report)
    assert Counting.reads == 2  # served from the cache, tokenizer limit included
    assert sized_view(Counting(), frames).max_length == 40 and Counting.reads == 2  # no lazy tokenizer read to
    # decide whether the model has one
    other = Counting()
    other.weights_id = "another tokenizer"
    needed_length(other, frames)
    needed_length(Counting(), {"full": frames["full"].assign(hypothesis=["d e", "f"])})
    assert Counting.reads == 6


def test_gold_precision_hand_computed():
    from nli_lib.factnli import gold_precision, match_gold, precision_table

    gold = pd.DataFrame({"query": ["q1", "q1", "q1", "q2", "q3", "q3"], "fact": ["A.", "B.", "C.", "D.", "E.", "F."],
                         "correct": [1, 1, 0, 1, 1, 1], "level": [1, 1, 2, 2, 3, 3], "generator": "g1",
                         "premise_ok": [True, True, True, True, True, False]})
    current = {"q1": {"A.", "B.", "C."}, "q2": {"D."}, "q3": {"F."}}  # E no longer produced; F's premise changed
    matched = match_gold(gold, current, generator="g1")  # every row judged for the generator that is scored
    assert matched["current"].tolist() == [True, True, True, True, False, False]
    r = gold_precision(matched)
    assert (r["k"], r["n"], r["stale"], r["precision"]) == (3, 4, 2, 0.75)
    # Wilson 95%: p=0.75, n=4, z=1.96 -> centre (0.75 + 0.4802) / 1.9604 = 0.6275, half 0.4330 -> (0.3006, 0.9544)
    assert (r["ci_low"], r["ci_high"]) == (0.3006, 0.9544)
    t = precision_table(matched, generator="g2").set_index("level")
    assert t.loc["all", "precision (%)"] == 75.0 and t.loc[1, "precision (%)"] == 100.0
    assert t.loc[2, "n"] == 2 and t.loc[3, "n"] == 0 and t.loc[3, "stale gold items"] == 2
    assert t.loc["all", "gold generator"] == "g1" and t.loc["all", "current generator"] == "g2"


def test_filter_figure_draws_truth_set_and_rejected_candidates():
    from nli_lib.factnli import draw_filter, filter_key

    judge = TableJudge({("t1", "c2"): "contradiction", ("t2", "c3"): "entailment", ("c1", "c4"): "entailment"})
    r = filter_facts(["t1", "t2"], ["c1", "c2", "c3", "c4"], judge)
    key = filter_key(r, ["t1", "t2"])
    assert key == [("T1", "truth set", "t1"), ("T2", "truth set", "t2"), ("C1", "selected", "c1"),
                   ("C2", "contradicts T1", "c2"), ("C3", "entailed T2", "c3"), ("C4", "outside maximum clique", "c4")]
    long_fact = "A very long candidate fact " * 6
    r2 = filter_facts(["t1"], [long_fact, "c2"], judge)
    fig = draw_filter(r2, ["t1"])
    shown = " ".join(t.get_text().replace("\n", " ") for ax in fig.axes for t in ax.texts)
    assert " ".join(long_fact.split()) in " ".join(shown.split())  # the full text, wrapped, never clipped
    assert "T1" in shown and "C2" in shown  # the truth set and the rejected candidate are drawn


def test_accuracy_figure_separates_models_sideways():
    from nli_lib.factnli import accuracy_figure

    acc = pd.DataFrame({"model": ["a", "a", "b", "b", "c", "c"], "tier": "offline", "level": [0, 1] * 3, "n": 12,
                        "accuracy": 50.0, "ci_low": 30.0, "ci_high": 70.0})
    fig = accuracy_figure(acc)
    xs = [tuple(round(x, 2) for x in c.lines[0].get_xdata()) for c in fig.axes[0].containers]
    assert xs == [(-0.12, 0.88), (0.0, 1.0), (0.12, 1.12)]  # identical intervals no longer overlap
    assert "n=12 per level" in fig.axes[0].get_legend().get_texts()[0].get_text()


@pytest.mark.mirror
def test_gloss_sentences_articles_agreement_and_constructions():
    from nli_lib.factnli import atomize, definition_sentences
    from nli_lib.factnli.retrieval import Countability

    texts = ["a violin with strings", "a violin;", "a violin of wood", "an instrument that", "an instrument;",
             "an instrument of", "a uniform of", "a uniform;", "a uniform with", "a canoe;", "a canoe of", "a canoe with",
             "a boat;", "a boat of", "a boat with",
             "clothing in clothing of clothing for clothing and clothing " * 3]
    c = Countability(texts=texts)
    assert c("violin") and c("instrument") and not c("clothing") and c.frequent("clothing")
    # a count title gets its article (no "Violin is bowed stringed instrument."), and so does its gloss head
    assert definition_sentences("violin", "bowed stringed instrument that is the highest member", c) == [
        "A violin is a bowed stringed instrument that is the highest member."]
    # a mass title gets none (no "A clothing is ..."), nor does a gloss headed by a mass noun
    assert definition_sentences("clothing", "a covering designed to be worn on a person's body", c) == [
        "Clothing is a covering designed to be worn on a person's body."]
    assert definition_sentences("uniform", "clothing of distinctive design", c) == [
        "A uniform is clothing of distinctive design."]
    # a word WordNet's text rarely uses keeps the article its gloss implies
    assert definition_sentences("skidder", "a person who slips or slides", c) == ["A skidder is a person who slips or slides."]
    # no article before a participle phrase; an anaphoric later part takes the title as subject
    assert definition_sentences("canoe", "small and light boat; propelled with a paddle", c) == [
        "A canoe is a small and light boat.", "A canoe is propelled with a paddle."]
    assert definition_sentences("violin", "bowed stringed instrument; this instrument has four strings", c)[1] == \
        "A violin has four strings."
    # a "the ..." gloss: "The" for a body part, none for a frequent (mass, abstract) word
    assert definition_sentences("face", "the front of the human head", c, body_part=True) == [
        "The face is the front of the human head."]
    assert definition_sentences("clothing", "the garments people wear", c) == ["Clothing is the garments people wear."]
    # a gloss about the word, not the thing, gives no sentence
    assert definition_sentences("leg", "a human limb; commonly used to refer to a whole limb", c) == [
        "A leg is a human limb."]
    # constructions and clause glosses give no sentence
    assert definition_sentences("hands", "(with ‘in’) guardianship over", c) == []
    assert definition_sentences("lottery", "players buy chances and prizes are distributed by casting lots", c) == []
    # atomize: no split that breaks agreement or leaves a fragment
    assert atomize("A class is a body of students who are taught together.") == [
        "A class is a body of students who are taught together."]
    assert atomize("A violin has four strings and a hollow body and an unfretted fingerboard and is played with a bow.") \
        == ["A violin has four strings and a hollow body and an unfretted fingerboard.", "A violin is played with a bow."]


# --------------------------------------------------------------------------------------------------------------
# Online retrieval: new pages per level, retries, User-Agent (a local MediaWiki-API stand-in)
# --------------------------------------------------------------------------------------------------------------

SEARCH = {"street": ["Carnaby Street", "Street fashion"], "soho": ["Carnaby Street", "Soho"],
          "london": ["Soho", "London"], "fashion": ["Street fashion", "Fashion"], "district": ["Soho", "District"]}
EXTRACTS = {"Carnaby Street": "Carnaby Street is a shopping street in Soho.",
            "Street fashion": "Street fashion is linked to youth culture.",
            "Soho": "Soho is a district of London.", "London": "London is the capital of England.",
            "Fashion": "Fashion is a form of self-expression.", "District": "A district is an area of a city."}
VOCAB = set(SEARCH)


def _vocab_terms(text):
    return list(dict.fromkeys(w.lower() for w in re.findall(r"[A-Za-z]+", text) if w.lower() in VOCAB))


class MediaWiki:
    """A MediaWiki API stand-in: canned search hits and intro extracts; `fail` maps a srsearch term to the
    statuses to answer before succeeding (e.g. [429, 503]); `slow` terms sleep before their first answer."""

    def __init__(self, fail=None, slow=()):
        self.log, self.fail, self.slow = [], {k: list(v) for k, v in (fail or {}).items()}, set(slow)

    def __call__(self, method, path, body):
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(path).query))
        self.log.append(q)
        term = q.get("srsearch")
        if term in self.slow:
            self.slow.discard(term)
            time.sleep(0.6)
        if self.fail.get(term):
            return self.fail[term].pop(0), {"error": "busy"}
        if q.get("list") == "search":
            hits = SEARCH.get(term, [])[: int(q["srlimit"])]
            return 200, {"query": {"search": [{"title": t} for t in hits]}}
        return 200, {"query": {"pages": {str(i): {"title": t, "extract": EXTRACTS[t]}
                                         for i, t in enumerate(q["titles"].split("|"))}}}

    def searched(self):
        return [q["srsearch"] for q in self.log if q.get("list") == "search"]


def _wiki(url, cache, **kw):
    return WikipediaPages(f"{url}/w/api.php", cache=cache, terms=_vocab_terms, retry_base_s=0.0,
                          sleep=lambda s: None, **kw)


def _wiki_augmenter(url, cache, **kw):
    retriever = SnippetRetriever(_wiki(url, cache, **kw), BowEncoder(), tau=-1.0, max_snippets=3)
    retriever.pages.searched_texts = []  # the text each level's search terms were taken from
    retriever.pages.terms_fn = lambda text: retriever.pages.searched_texts.append(text) or _vocab_terms(text)
    return Augmenter(retriever, _snippet_extractor(cache), TableJudge({}), template_fuser(cache=cache),
                     PremiseFacts(lambda ps: [[] for _ in ps], "no-atoms"),
                     FactNLISettings(levels=3, max_snippets=3, max_candidates=3), cache)


def test_each_level_searches_the_facts_the_previous_level_added_and_skips_used_pages(monkeypatch):
    from stand_ins import no_proxy

    no_proxy(monkeypatch)
    wiki = MediaWiki()
    ex = pd.DataFrame({"premise": ["A woman walks down the street ."], "hypothesis": ["A woman is outside ."],
                       "label": ["entailment"], "pair_id": ["w0"]})
    with local_server(wiki) as url:
        aug = _wiki_augmenter(url, CallCache(":memory:"))
        data = aug.build(ex, progress=False)
    levels = data.chains[ex["premise"][0]]["levels"]
    assert aug.retriever.pages.searched_texts == [ex["premise"][0]] + [
        " ".join(f["text"] for f in rec["facts"]) for rec in levels[:2]]  # never p(t-1) as a whole
    assert len(levels) == 3 and all(rec["facts"] for rec in levels)  # every level, L=3 included, adds facts
    sources = [{s["source"] for s in rec["snippets"]} for rec in levels]
    assert not (sources[0] & sources[1]) and not ((sources[0] | sources[1]) & sources[2])  # new pages only
    assert sources[0] == {"wikipedia:Carnaby Street"}
    # level t searches the terms of the facts level t-1 fused (level 1: the premise's)
    assert levels[0]["search_text"] is None
    for prev, rec in zip(levels, levels[1:]):
        assert rec["search_text"] == " ".join(f["text"] for f in prev["facts"])
    expected = _vocab_terms(ex["premise"][0]) + [t for rec in levels[:2] for t in _vocab_terms(
        " ".join(f["text"] for f in rec["facts"]))]
    assert wiki.searched() == list(dict.fromkeys(expected))  # a term searched again is answered by the cache
    # a term whose first hit is a used page moves on to the next hit: 'street' at L2 gives Street fashion
    assert "wikipedia:Street fashion" in sources[1] and "wikipedia:Soho" in sources[1]


def test_wikipedia_retries_429_5xx_and_timeouts_with_backoff(monkeypatch):
    from nli_lib import calls

    from stand_ins import no_proxy

    no_proxy(monkeypatch)
    wiki = MediaWiki(fail={"street": [429, 503]}, slow={"soho"})
    waits = []
    with local_server(wiki) as url:
        pages = WikipediaPages(f"{url}/w/api.php", cache=CallCache(":memory:"), terms=_vocab_terms,
                               retry_base_s=0.5, retry_max_s=1.5, timeout_s=0.3, sleep=waits.append)
        before = calls.snapshot()
        found = pages.search("the street in soho", used={"wikipedia:Carnaby Street"})
    assert [p.title for p in found] == ["Street fashion", "Soho"]
    assert wiki.searched() == ["street", "street", "street", "soho", "soho"]  # 2 retries, 1 timeout retry
    assert len(waits) == 3 and 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 1.5  # exponential, jittered, capped
    row = calls.summary(since=before).loc[pages.source]
    assert (row["requests"], row["retries"], row["errors"]) == (3, 3, 0)


def test_wikipedia_gives_up_loudly_and_the_level_records_the_failure(monkeypatch):
    from nli_lib import calls

    from stand_ins import no_proxy

    no_proxy(monkeypatch)
    wiki = MediaWiki(fail={"street": [503] * 10, "soho": [404]})
    cache = CallCache(":memory:")
    with local_server(wiki) as url:
        pages = _wiki(url, cache, max_retries=2)
        with pytest.raises(RetrievalError, match=r"HTTP 503 after 3 attempts"):
            pages.search("a street")
        with pytest.raises(RetrievalError, match=r"HTTP 404 \("):  # not retried
            pages.search("soho")
        assert wiki.searched() == ["street"] * 3 + ["soho"]
        assert cache.get("http", {"url": wiki_url(wiki.log[-1], url)}) is None  # failures are never cached
        ex = pd.DataFrame({"premise": ["A woman walks down the street ."], "hypothesis": ["A woman is out ."],
                           "label": ["entailment"], "pair_id": ["w1"]})
        before = calls.snapshot()
        wiki.fail["street"] = [503] * 10
        aug = _wiki_augmenter(url, cache, max_retries=1)
        data = aug.build(ex, progress=False)
    assert data.failed["failure"].str.startswith("level 1: retrieval failed: wikipedia @").all()
    assert len(data.failed) == 3 and set(data.items["level"]) == {0}
    assert calls.summary(since=before).loc[pages.source, "errors"] == 1
    assert cache.get(NAMESPACE, aug._key(ex["premise"][0], 1)) is None  # a failed level is not cached


def wiki_url(query: dict, base: str) -> str:
    return f"{base}/w/api.php?" + urllib.parse.urlencode(sorted(query.items()))


def test_wikipedia_user_agent_needs_contact_and_is_sent(monkeypatch):
    import urllib.request

    from nli_lib.factnli.wikipedia import has_contact

    from stand_ins import no_proxy

    no_proxy(monkeypatch)
    with pytest.raises(ValueError, match="paper_models.factnli.user_agent"):
        WikipediaPages("https://en.wikipedia.org/w/api.php", user_agent="nli-companion/0.1")
    WikipediaPages("https://en.wikipedia.org/w/api.php", user_agent="x/1 (https://example.org/me)")
    WikipediaPages("https://en.wikipedia.org/w/api.php", replay_only=True)  # a replay sends nothing
    assert has_contact("bot/1 (me@example.org)") and not has_contact("bot/1 (@home)")
    sent, real = [], urllib.request.urlopen
    monkeypatch.setattr(urllib.request, "urlopen", lambda req, **kw: sent.append(req.get_header("User-agent"))
                        or real(req, **kw))
    with local_server(MediaWiki()) as url:
        _wiki(url, CallCache(":memory:"), user_agent="nli-companion/0.1 (me@example.org)").search("street")
    assert sent and set(sent) == {"nli-companion/0.1 (me@example.org)"}


def test_profile_user_agent_and_api_url_reach_the_retriever(tmp_path, monkeypatch):
    from nli_lib.factnli import session as S
    from nli_lib.notebook import start

    (tmp_path / "judge").mkdir()
    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path / "out"))
    (tmp_path / "p.yaml").write_text(
        "tier: paper\nbaselines: []\nllm: {base_url: 'http://127.0.0.1:9/v1', model: m}\n"
        "paper_models:\n  factnli:\n    judge: judge\n    wikipedia_api: http://127.0.0.1:9/w/api.php\n"
        "    user_agent: nli-companion/0.1 (me@example.org)\n")
    nb = start({"profile": str(tmp_path / "p.yaml"), "quick": True}, name="99_demo")
    monkeypatch.setattr(nb, "nli_model", lambda spec=None: None)
    monkeypatch.setattr(S, "encoder_for", lambda nb: BowEncoder())
    pages = S.augmenter_for(nb).retriever.pages
    assert pages.api_url == "http://127.0.0.1:9/w/api.php"
    assert pages.user_agent == "nli-companion/0.1 (me@example.org)"


# --------------------------------------------------------------------------------------------------------------
# MNLI validation sets (online-only): a tiny synthetic MultiNLI archive
# --------------------------------------------------------------------------------------------------------------

def _mnli_line(premise, hypothesis, label, pair):
    return json.dumps({"sentence1": premise, "sentence2": hypothesis, "gold_label": label, "pairID": pair,
                       "promptID": pair[:-1], "genre": "fiction",
                       "annotator_labels": [label if label != "-" else "neutral"]})


@pytest.fixture()
def mnli_archive(tmp_path, monkeypatch):
    """A MultiNLI-layout zip with 2 + 1 pairs (and one without gold label), served as if fetched."""
    import zipfile

    from nli_lib.data import fetch, rows

    path = tmp_path / "multinli_1.0.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("multinli_1.0/multinli_1.0_dev_matched.jsonl", "\n".join([
            _mnli_line("A dog runs on the street .", "An animal is moving .", "entailment", "m1e"),
            _mnli_line("A dog runs on the street .", "A cat sleeps .", "contradiction", "m1c"),
            _mnli_line("A woman walks down the street .", "Nobody walks .", "-", "m2n")]) + "\n")
        zf.writestr("multinli_1.0/multinli_1.0_dev_mismatched.jsonl",
                    _mnli_line("A woman walks down the street .", "A woman is outside .", "entailment", "x1e") + "\n")
    monkeypatch.setattr(fetch, "available", lambda key, manifest=None: key == "mnli_full/multinli_1.0.zip")
    monkeypatch.setattr(rows, "fetch", lambda key: path if key == "mnli_full/multinli_1.0.zip" else pytest.fail(key))
    return path


def test_mnli_absent_says_what_is_missing_and_how_to_fetch(monkeypatch, capsys):
    from types import SimpleNamespace

    from nli_lib.data import fetch, rows
    from nli_lib.factnli import session as S

    monkeypatch.setattr(fetch, "available", lambda key, manifest=None: False)
    monkeypatch.setattr(rows, "fetch", lambda key: pytest.fail("a notebook must never start a download"))
    assert S.mnli_examples_for(SimpleNamespace(quick=True, tier="offline", seed=0)) == {}
    said = capsys.readouterr().out
    assert "mnli_full/multinli_1.0.zip" in said and "nli-companion fetch" in said
    assert S.build_mnli_for(SimpleNamespace(quick=True, tier="offline", seed=0)) == {}


def test_mnli_validation_sets_are_augmented_and_scored_beside_snli(mnli_archive, monkeypatch, capsys):
    from types import SimpleNamespace

    from nli_lib.factnli import predict_datasets, report, table2, table_scores
    from nli_lib.factnli import session as S

    monkeypatch.delenv(S.PREMISES_ENV, raising=False)
    nb = SimpleNamespace(quick=False, tier="offline", seed=0)
    examples = S.mnli_examples_for(nb)
    assert capsys.readouterr().out == ""
    assert list(examples) == ["MNLI validation_matched", "MNLI validation_mismatched"]
    assert examples["MNLI validation_matched"]["pair_id"].tolist() == ["m1e", "m1c"]  # no-gold pair left out
    cache = CallCache(":memory:")
    aug = _augmenter(cache)
    monkeypatch.setattr(S, "augmenter_for", lambda nb: aug)
    mnli = S.build_mnli_for(nb, examples, progress=False)
    assert {name: sorted(d.items["level"].unique()) for name, d in mnli.items()} == \
        {name: [0, 1, 2, 3] for name in examples}
    t1 = report.table1(EXAMPLES, examples, 9824, {n: len(S.mnli_validation(n)) for n in examples})
    assert t1["size at hand"].tolist() == [9824, 2, 1] and t1["augmented in this run"].tolist() == [3, 2, 1]
    snli = aug.build(EXAMPLES, progress=False)

    always = RuleClassifier(constant([1.0, 0.0, 0.0]), name="minilm-test")  # entailment everywhere
    assert always.labels[0] == "entailment"
    preds = predict_datasets({"SNLI test": {"full": snli.items}, **{n: {"full": d.items} for n, d in mnli.items()}},
                             {"minilm-test": always})
    table = table2(preds)
    ours = table[table["tier"] == "offline"].set_index("dataset")
    assert list(ours.index) == ["SNLI test", "MNLI validation_matched", "MNLI validation_mismatched",
                                "MNLI (matched+mismatched)"]
    assert ours.loc["MNLI validation_matched", "Acc L=0"] == 50.0 and ours.loc["MNLI validation_mismatched", "n"] == 1
    assert ours.loc["MNLI (matched+mismatched)", "Acc L=3"] == pytest.approx(200 / 3)  # pooled, not averaged
    paper = table[table["tier"] == "paper (printed)"]
    assert paper.loc[paper["dataset"] == "MNLI (matched+mismatched)", "Acc L=0"].iloc[0] == 90.4  # RoBERTa-large
    scores = table_scores(table, "factnli-table-2", {}, "gen", stand_in="minilm-test")
    assert scores.loc[scores["quantity"].str.contains("MNLI"), "ours"].tolist() == pytest.approx([200 / 3] * 4)
    assert set(scores["quantity"].str.split(" ").str[1]) == {"SNLI", "MNLI"}


# --------------------------------------------------------------------------------------------------------------
# Appendix F: a declared Qwen2.5-14B-Instruct generator
# --------------------------------------------------------------------------------------------------------------

def test_table8_is_scored_only_for_levels_of_a_declared_qwen_generator():
    from nli_lib.factnli import QWEN_GENERATOR, table8, table_scores

    table = pd.DataFrame({"model": ["qwen-local (B.1, 0-shot)", "minilm-esnli"], "tier": "paper",
                          "dataset": "SNLI test", "n": 9, "Acc L=0": [80.0, 70.0], "Acc L=3": [50.0, 40.0]})
    declared = {"qwen-local": QWEN_GENERATOR}
    assert table_scores(table, "factnli-table-8", declared, "qwen-local", None).empty  # offline stand-in
    assert table_scores(table, "factnli-table-8", declared, "qwen-local", "GPT-4o").empty  # other generator
    rows = table_scores(table, "factnli-table-8", declared, "qwen-local", QWEN_GENERATOR)
    assert rows["quantity"].tolist() == ["Qwen2.5-14B-Instruct SNLI Acc L=0", "Qwen2.5-14B-Instruct SNLI Acc L=3"]
    assert set(rows["basis"]) == {"paper-model"} and rows["ours"].tolist() == [80.0, 50.0]
    # Table 2 was generated by GPT-4o: levels by a declared Qwen stay stand-ins there
    two = table_scores(table, "factnli-table-2", declared, "qwen-local", QWEN_GENERATOR)
    assert set(two["basis"]) == {"stand-in"}
    beside = table8(table)
    assert beside.loc[beside["tier"] == "paper (printed)", "Acc L=3"].tolist() == [50.0, 45.8, 51.6]


def test_the_llm_sections_as_declares_the_generator(tmp_path, monkeypatch):
    from nli_lib.factnli import session as S
    from nli_lib.notebook import start

    monkeypatch.setenv("NLI_USER_CWD", str(tmp_path))
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path / "out"))

    def session(llm: str):
        (tmp_path / "p.yaml").write_text(f"tier: paper\nbaselines: []\n{llm}")
        return start({"profile": str(tmp_path / "p.yaml"), "quick": True}, name="99_demo")

    nb = session("llm: {base_url: 'http://127.0.0.1:9/v1', model: qwen-local, as: Qwen2.5-14B-Instruct}\n")
    assert S.generator_system(nb) == "Qwen2.5-14B-Instruct"
    assert S.declared(nb)["qwen-local"] == ["Qwen2.5-14B-Instruct"]
    nb = session("llm: {base_url: 'http://127.0.0.1:9/v1', model: m, as: llama-3-8b-it}\n")
    assert S.generator_system(nb) is None  # not one of FactNLI's generators
    nb = session("llm: {base_url: 'http://127.0.0.1:9/v1', model: m}\n")
    assert S.generator_system(nb) is None and "m" not in S.declared(nb)


# --------------------------------------------------------------------------------------------------------------
# Truth-set seeds: well-formed atoms only
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.mirror
def test_premise_facts_use_well_formed_atoms_only():
    from nli_lib.atoms.grammar.wellformed import AtomCheck
    from nli_lib.factnli.pipeline import atom_premise_facts

    premise = "A woman wearing a yellow tank top and white pants looking into a window on a city street."
    every = atom_premise_facts(CallCache(":memory:"), checker=None)([premise])[0]
    assert len(every) >= 2

    class Checker:
        name = "test-checker"

        def __call__(self, atom, sentence, sole):
            return AtomCheck("malformed" if atom == every[0] else "ok", "test")

    facts = atom_premise_facts(CallCache(":memory:"), checker=Checker())
    assert facts([premise])[0] == every[1:] and facts.name.endswith("|usable:test-checker")
    assert atom_premise_facts(CallCache(":memory:"), checker=None).name.endswith("|usable:unchecked")


# --------------------------------------------------------------------------------------------------------------
# Notebooks 40-41: outputs declared in the catalog, short lines
# --------------------------------------------------------------------------------------------------------------

def test_factnli_notebooks_save_declared_outputs_only():
    import ast
    from pathlib import Path

    import nbformat

    from nli_lib.catalog import specs

    for stem in ("40_factnli_augment", "41_factnli_evaluation"):
        nb = nbformat.read(Path(__file__).parents[1] / "notebooks" / f"{stem}.ipynb", as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert all(len(line) <= 100 for src in code for line in src.splitlines()), stem
        saved = []
        for src in code:
            for node in ast.walk(ast.parse(src)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    target = ast.unparse(node.func)
                    assert target not in ("nb.out.table", "nb.out.figure", "nb.out.records"), (stem, target)
                    if target == "nb.save":
                        saved.append(node.args[1].value)
        declared = {s.name for s in specs(stem)}
        assert set(saved) == declared, (stem, set(saved) ^ declared)


def test_current_facts_are_generated_once_per_augmenter_and_queries(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from nli_lib import outputs
    from nli_lib.factnli import gold

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(gold, "generated_facts", lambda aug, qs: calls.append(list(qs)) or
                        {q: {f"{q} fact.", "A dog is an animal."} for q in qs})
    aug = SimpleNamespace(fingerprint="aug-1", extractor=SimpleNamespace(name="rules-v1"))
    first = gold.current_facts(aug, ["q1", "q2", "q1"])
    assert first == {"q1": {"q1 fact.", "A dog is an animal."}, "q2": {"q2 fact.", "A dog is an animal."}}
    assert gold.current_facts(aug, ["q1", "q2"]) == first and calls == [["q1", "q2"]]  # read back: same sets
    gold.current_facts(SimpleNamespace(fingerprint="aug-2", extractor=aug.extractor), ["q1", "q2"])
    gold.current_facts(aug, ["q1"])
    monkeypatch.setattr(outputs, "nli_lib_hash", lambda: "edited-library")
    gold.current_facts(aug, ["q1", "q2"])
    gold.current_facts(aug, ["q1", "q2"], cached=False)
    assert len(calls) == 5  # another augmenter, other queries, an edited library, uncached


def test_the_audit_tables_are_built_when_no_item_reached_a_level_with_a_fact():
    """An LLM whose facts were all rejected leaves no item at L >= 1: the §4.5 diagnostics are an empty frame with
    their columns, and Tables 4/5 hold only the paper's rows (notebook 41 stopped with KeyError 'variant')."""
    from nli_lib.factnli.evaluation import audit_tables, diagnostic_records, diagnostics, diagnostics_table

    class Judge:  # never asked: there is nothing to judge
        model, tau_e, tau_c = None, 0.5, 0.5

        def prefetch(self, pairs):
            assert not list(pairs)

    class Labels:
        labels = ["entailment", "neutral", "contradiction"]

        def predict_proba(self, premises, hypotheses):
            return np.tile([1.0, 0.0, 0.0], (len(premises), 1))

    items = pd.DataFrame({"pair_id": [1], "level": [0], "orig_premise": ["p"], "premise": ["p"], "hypothesis": ["h"],
                          "label": ["entailment"], "premise_facts": [[]], "hyp_facts": [[]]})
    rows = diagnostics(items, Judge(), long_judge=Judge(), label_model=Labels())
    assert rows.empty and "variant" in rows
    diag = diagnostics_table(rows, judge_name="j")
    table4, table5 = audit_tables(diag, deepest=3)
    assert len(table4) == 3 and len(table5) == 2 and table4["variant"].str.contains("paper").all()
    assert diagnostic_records(rows, {"full": items}).empty
