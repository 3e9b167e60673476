"""The multi-level retrieve-filter-fuse loop (§3.1, Fig. 2c) over a dataset, with caching and resumption.

For every premise p, level t = 1..L:  P(t) = retrieve(p(t-1)) ; C(t) = extract(P(t)) ;
F(t) = filter(T(t-1), C(t)) ; p(t) = fuse(p(t-1), F(t)) ; T(t) = T(t-1) ∪ F(t), with T(0) = {p} ∪ atoms(p).
For every pair (p, h, l), level t:  h(t) = fuse(h, F^(1) ∪ ... ∪ F^(t)) with F^(i) ⊆ F(i)  (always from h).

>>> aug = offline_augmenter(judge_model=nli_model)                       # doctest: +SKIP
>>> data = aug.build(snli_sample(n_premises=20))                        # doctest: +SKIP
>>> data.items.query("level == 3")[["premise", "hypothesis", "label"]]  # doctest: +SKIP

Batching, concurrency, progress, resumption: premises are processed in chunks, level by level; inside a
level every step is one batch (one embedding batch, one `chat_many` for B.1 and one for B.2 — concurrent
requests for an LLM endpoint — and two NLI batches). Every model/LLM call goes through the call cache, and
each premise's finished level is stored at once (namespace "factnli_level"), so an interrupted build
resumes at the first unfinished (premise, level). Progress bars: one over chunks × levels.

Since premise-side work depends only on the premise, the three SNLI hypotheses of a premise share it
(SNLI test has 3,323 distinct premises for its 9,824 pairs).
"""
from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass, field
from typing import Callable, Sequence

import pandas as pd

from ..cache import CallCache, default_cache
from ..decomposer import RULES_VERSION as ATOM_RULES_VERSION
from ..hashing import json_hash
from ..llm import OfflineLLM, PromptTemplate
from ..text import normalise, word_count
from .extraction import Fact, FactExtractor, llm_extractor, rule_extractor
from .filtering import NLIJudge, filter_facts, graph_pairs, no_filter, truth_seed, truth_set_filter
from .fusion import Fuser, hypothesis_subsets, llm_fuser, template_fuser
from .paper import JUDGE, WIKIPEDIA_API
from .retrieval import FailedPool, Snippet, SnippetRetriever, WordNetPages
from .wikipedia import WikipediaPages

NAMESPACE = "factnli_level"
PAPER_JUDGE = JUDGE  # the paper's "compact cross-encoder based on DeBERTa-v3-base" (profile default)


@dataclass(frozen=True)
class FactNLISettings:
    """Knobs of the framework; every one is part of the cache key of a build.

    The paper prints none of tau, tau_e, tau_c. tau = 0.25 keeps ~5 WordNet sentences per premise at L=1
    (MiniLM cosines of gloss sentences to SNLI premises have a median of ~0.2). tau_e = tau_c = 0.8: the
    offline MiniLM judge (~78% on SNLI) calls 28% of (truth element, definition) pairs 'entailment' at 0.5
    (probe of 12 premises), which vetoes most facts and starves levels 2-3; at 0.8 only confident
    judgements veto (12% entailment, 1% contradiction in the same probe).
    """

    levels: int = 3  # L: augmentation depth
    tau: float = 0.25  # retrieval: keep snippets with cosine(query, sentence) >= tau (value not printed)
    tau_e: float = 0.8  # ENTAILS(a, b) = P(a => b) >= tau_e (Appendix C; value not printed, see below)
    tau_c: float = 0.8  # CONTRADICTS(a, b) = P(a ⊥ b) >= tau_c (Appendix C; value not printed)
    max_snippets: int = 8  # pool size cap per level (companion choice, bounds cost)
    max_candidates: int = 6  # candidate facts per level sent to the filter, best-ranked first (companion choice)
    hyp_share: float = 0.5  # share of each level's facts fused into the hypothesis (the paper's "facts drop partly")
    use_filter: bool = True  # False = the NO-FILTER ablation (no truth set, no graph)
    symmetric: bool = True  # neutral edges need NEUTRAL both ways (see filtering.py)
    drop_vacuous: bool = True  # vacuous premise atoms ("There is a person.") are not truth-set evidence (is_vacuous)

    @classmethod
    def quick(cls, **overrides) -> "FactNLISettings":
        """Smaller pools for --quick runs."""
        return dataclasses.replace(cls(max_snippets=5, max_candidates=3), **overrides)

    def no_filter(self) -> "FactNLISettings":
        return dataclasses.replace(self, use_filter=False)

    @property
    def variant(self) -> str:
        return "full" if self.use_filter else "no-filter"


# --------------------------------------------------------------------------------------------------------------
# Truth-set seeds: facts of the original premise
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PremiseFacts:
    """T(0) minus p itself: facts extracted from the original premise (offline: the atoms decomposer)."""

    fn: Callable[[list[str]], list[list[str]]]  # premises -> facts of each
    name: str  # generator name (part of the cache key)

    def __call__(self, premises: list[str]) -> list[list[str]]:
        return self.fn(premises)


def atom_premise_facts(cache=None, checker="default") -> PremiseFacts:
    """Offline: the atoms paper's rule-based decomposer (Prompt A.1 stand-in, cached as an OfflineLLM), well-
    formed atoms only: each atom is checked (`checker` as in `atoms.generate.generate_atoms`) and only those
    `atoms.generate.usable` keeps enter the truth set (malformed, unparsed and failed atoms never do)."""
    from ..decomposer import generate_atoms, rule_generator, usable

    gen = rule_generator(cache=cache)
    if isinstance(checker, str) and checker == "default":
        from ..atoms.grammar.wellformed import default_checker

        checker = default_checker()

    def fn(premises: list[str]) -> list[list[str]]:
        rows = usable(generate_atoms(premises, gen, checker=checker))
        by = rows.groupby("sentence")["atom"].apply(list).to_dict()
        return [list(by.get(p, [])) for p in premises]

    return PremiseFacts(fn, f"atoms:{gen.name}|usable:{getattr(checker, 'name', 'unchecked')}")


def b1_premise_facts(extractor: FactExtractor) -> PremiseFacts:
    """Paper profile: Prompt B.1 with the premise as the only snippet."""

    def fn(premises: list[str]) -> list[list[str]]:
        pools = [[Snippet(p, "premise", "premise", 1.0)] for p in premises]
        # a failed B.1 call (None) leaves the truth seed at {p}; the call summary counts the failure
        return [[f.text for f in facts or []] for facts in extractor.extract_many(pools)]

    return PremiseFacts(fn, f"b1:{extractor.name}")


# --------------------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------------------

@dataclass
class FactNLIData:
    """A built augmentation: items (one row per pair and level) and the per-candidate trace behind them."""

    items: pd.DataFrame  # pair_id, level, variant, premise, hypothesis, label, facts, sources, fact_provenance
    #                      (level, page, title, snippet of every fused fact), word counts
    trace: pd.DataFrame  # one row per (premise, level, candidate fact): snippet, source, decision, blocking element
    chains: dict  # premise -> list of level records (JSON-able dicts, as cached)
    settings: FactNLISettings
    components: dict = field(default_factory=dict)  # names of retriever, extractor, judge, fuser, truth seed
    failed: pd.DataFrame = field(default_factory=pd.DataFrame)  # (pair, level) items not built, with `failure`

    @property
    def variant(self) -> str:
        return self.settings.variant

    def level(self, t: int) -> pd.DataFrame:
        return self.items[self.items["level"] == t].reset_index(drop=True)


def _fact_dict(f: Fact) -> dict:
    return dataclasses.asdict(f)


def _fact(d: dict) -> Fact:
    return Fact(**d)


@dataclass
class _Chain:
    premise: str
    atoms: list
    truth: list
    pooled: set
    current: str
    seed: list = field(default_factory=list)  # T(0): the premise and its non-vacuous atoms
    levels: list = field(default_factory=list)
    used_pages: set = field(default_factory=set)  # sources of the pages that gave snippets at earlier levels
    new_text: str | None = None  # the facts the last level fused (what it added to the query); None before L=1


# --------------------------------------------------------------------------------------------------------------
# The augmenter
# --------------------------------------------------------------------------------------------------------------

@dataclass
class Augmenter:
    """The framework's components and settings; `build(examples)` augments a dataset to levels 1..L."""

    retriever: SnippetRetriever  # pages + MiniLM threshold
    extractor: FactExtractor  # Prompt B.1 (LLM or rules)
    judge: NLIJudge  # the lightweight NLI model with tau_e, tau_c
    fuser: Fuser  # Prompt B.2 (LLM or template)
    premise_facts: PremiseFacts  # T(0) facts of the original premise
    settings: FactNLISettings = field(default_factory=FactNLISettings)
    cache: CallCache | None = None
    tier: str = "offline"

    @property
    def components(self) -> dict:
        return {"retriever": self.retriever.fingerprint, "extractor": self.extractor.name,
                "judge": self.judge.name, "fuser": self.fuser.name, "premise_facts": self.premise_facts.name,
                "tier": self.tier}

    @property
    def fingerprint(self) -> str:
        return json_hash({"settings": dataclasses.asdict(self.settings), **self.components,
                          "judge": self.judge.fingerprint,
                          "extractor_endpoint": getattr(self.extractor.client, "label", ""),
                          "fuser_endpoint": getattr(self.fuser.client, "label", "")}, length=16)

    def with_settings(self, **changes) -> "Augmenter":
        settings = dataclasses.replace(self.settings, **changes)
        judge = self.judge
        if settings.tau_e != judge.tau_e or settings.tau_c != judge.tau_c:
            judge = NLIJudge(judge.model, settings.tau_e, settings.tau_c)
        retriever = dataclasses.replace(self.retriever, tau=settings.tau, max_snippets=settings.max_snippets)
        return dataclasses.replace(self, settings=settings, judge=judge, retriever=retriever)

    @property
    def _cache(self) -> CallCache:
        return self.cache or default_cache()

    # -- premise side ------------------------------------------------------------------------------------------
    def _key(self, premise: str, level: int) -> dict:
        return {"augmenter": self.fingerprint, "premise": premise, "level": level}

    def _restore(self, premises: list[str]) -> list[_Chain]:
        seeds = self.premise_facts(premises) if self.settings.use_filter else [[] for _ in premises]
        chains = []
        for p, atoms in zip(premises, seeds):
            truth = truth_seed(p, atoms, self.settings.drop_vacuous) if self.settings.use_filter else []
            chains.append(_Chain(p, list(atoms), truth, set(), p, seed=list(truth)))
        for t in range(1, self.settings.levels + 1):
            todo = [c for c in chains if len(c.levels) == t - 1]
            if not todo:
                break
            for chain, rec in zip(todo, self._cache.get_many(NAMESPACE, [self._key(c.premise, t) for c in todo])):
                if rec is not None:
                    self._advance(chain, rec)
        return chains

    def _advance(self, chain: _Chain, rec: dict) -> None:
        chain.levels.append(rec)
        chain.pooled |= {normalise(s["text"]) for s in rec["snippets"]}
        chain.used_pages |= {s["source"] for s in rec["snippets"]}
        chain.new_text = " ".join(f["text"] for f in rec["facts"])
        if self.settings.use_filter:
            chain.truth += [f["text"] for f in rec["facts"] if f["text"] not in chain.truth]
        chain.current = rec["premise"]

    def _level(self, chains: list[_Chain], t: int) -> None:
        s = self.settings
        pools = self.retriever.retrieve_many([c.current for c in chains], [c.pooled for c in chains],
                                             new_texts=[c.new_text for c in chains],
                                             used=[c.used_pages for c in chains])
        cands = self.extractor.extract_many(pools)
        failures = [f"retrieval failed: {pool.error}" if isinstance(pool, FailedPool) else
                    "fact extraction (B.1) failed: failed call or unparsable answer" if f is None else ""
                    for pool, f in zip(pools, cands)]
        cands = [f or [] for f in cands]
        ranked = []
        for facts in cands:
            order = sorted(
                range(len(facts)), key=lambda i: (-(facts[i].score if facts[i].score == facts[i].score else 0), i)
            )
            ranked.append([facts[i] for i in order][: s.max_candidates])
        if s.use_filter:  # two NLI batches across the chunk, then the per-premise graph work reads the memo
            self.judge.prefetch([pair for c, fs in zip(chains, ranked) for pair in
                                 ((tr, f.text) for f in fs for tr in c.truth)])
            kept = [truth_set_filter(c.truth, [f.text for f in fs], self.judge)[0] for c, fs in zip(chains, ranked)]
            self.judge.prefetch([pair for r in kept for pair in graph_pairs(r)])
            results = [filter_facts(c.truth, [f.text for f in fs], self.judge, symmetric=s.symmetric)
                       for c, fs in zip(chains, ranked)]
        else:
            results = [no_filter([f.text for f in fs]) for fs in ranked]
        chosen = []
        for fs, r in zip(ranked, results):
            by_text = {}
            for f in fs:
                by_text.setdefault(f.text, f)
            chosen.append([by_text[x] for x in r.clique])
        fused = self.fuser.fuse_many([(c.current, [f.text for f in fs]) for c, fs in zip(chains, chosen)])
        records = []
        for c, pool, fs, r, sel, fu, failure in zip(chains, pools, ranked, results, chosen, fused, failures):
            if not fu.ok:
                failure = failure or f"premise fusion (B.2) failed: {fu.error}"
            rec = {
                "level": t, "query": c.current, "search_text": c.new_text, "truth_size": len(c.truth),
                "snippets": [dataclasses.asdict(x) for x in pool],
                "candidates": [_fact_dict(f) for f in fs],
                "decisions": {k: list(v) for k, v in r.decisions.items()},
                "retained": list(r.retained),
                "entailment_edges": [list(e) for e in r.entailment_graph.edges()],
                "facts": [_fact_dict(f) for f in sel],
                "premise": fu.text, "fusion_ok": fu.ok, "anchor_verbatim": fu.anchor_verbatim, "failure": failure,
            }
            records.append(rec)
            self._advance(c, rec)
        # a failed level is not stored (the next run tries it again) and ends its chain for this run
        self._cache.put_many(NAMESPACE, [(self._key(c.premise, t), rec) for c, rec in zip(chains, records)
                                         if not rec["failure"]])

    def build_premises(self, premises: Sequence[str], chunk_size: int = 64, progress: bool = True) -> dict:
        """Premise chains {premise: [level records]}; finished (premise, level) records are read from the cache."""
        from tqdm.auto import tqdm

        premises = list(dict.fromkeys(str(p) for p in premises))
        out: dict = {}
        chunks = [premises[i : i + chunk_size] for i in range(0, len(premises), chunk_size)]
        bar = tqdm(total=len(chunks) * self.settings.levels, desc=f"FactNLI {self.settings.variant} levels",
                   unit="chunk-level", disable=not progress)
        for chunk in chunks:
            chains = self._restore(chunk)
            for t in range(1, self.settings.levels + 1):
                todo = [c for c in chains if len(c.levels) == t - 1 and not any(r.get("failure") for r in c.levels)]
                if todo:
                    self._level(todo, t)
                bar.update()
            out.update({c.premise: {"atoms": c.atoms, "truth": c.seed, "levels": c.levels} for c in chains})
        bar.close()
        return out

    # -- hypothesis side and the item table --------------------------------------------------------------------
    def build(self, examples: pd.DataFrame, chunk_size: int = 64, progress: bool = True) -> FactNLIData:
        """Augment `examples` (premise, hypothesis, label, pair_id) to levels 0..L.

        An item whose premise chain failed at or before its level (B.1 or B.2 call failed, or its answer did not
        parse) or whose hypothesis fusion failed is not built: it goes to `FactNLIData.failed` with the reason,
        and the failed level is not cached, so the next run tries it again.
        """
        chains = self.build_premises(examples["premise"].tolist(), chunk_size=chunk_size, progress=progress)
        L = self.settings.levels
        level_facts = {p: [[f["text"] for f in rec["facts"]] for rec in ch["levels"]] for p, ch in chains.items()}
        encoder = self.retriever.encoder
        texts = list(dict.fromkeys([*examples["hypothesis"].astype(str),
                                    *(f for fs in level_facts.values() for lv in fs for f in lv)]))
        vecs = dict(zip(texts, encoder.encode(texts))) if texts else {}
        jobs, subsets, where = [], [], {}
        for i, (p, h) in enumerate(zip(examples["premise"].astype(str), examples["hypothesis"].astype(str))):
            sub = hypothesis_subsets(level_facts[p], vecs.get(h), vecs, share=self.settings.hyp_share)
            subsets.append(sub)
            for t in range(1, len(built_levels(chains[p]["levels"])) + 1):
                where[i, t] = len(jobs)
                jobs.append((h, [f for lv in sub[:t] for f in lv]))  # always from the original h
        fused = self.fuser.fuse_many(jobs, progress=progress and self.tier == "paper")
        rows, failed = [], []
        for i, ex in enumerate(examples.itertuples(index=False)):
            p, h = str(ex.premise), str(ex.hypothesis)
            recs = chains[p]["levels"]
            base = {"pair_id": ex.pair_id, "label": ex.label, "orig_premise": p, "orig_hypothesis": h,
                    "variant": self.settings.variant}
            rows.append({**base, "level": 0, "premise": p, "hypothesis": h, "level_facts": [], "premise_facts": [],
                         "hyp_facts": [], "sources": [], "fact_provenance": [], "fusion_ok": True})
            for t in range(1, L + 1):
                if (i, t) not in where:  # the premise chain failed at or before level t
                    failure = next((f"level {r['level']}: {r['failure']}" for r in recs if r.get("failure")),
                                   f"level {t}: not built")
                    failed.append({**base, "level": t, "failure": failure})
                    continue
                rec = recs[t - 1]
                fu = fused[where[i, t]]
                if not fu.ok:
                    failed.append({**base, "level": t, "failure": f"hypothesis fusion (B.2) failed: {fu.error}"})
                    continue
                pf = [(r["level"], f) for r in recs[:t] for f in r["facts"]]
                in_h = set(fu.facts)
                rows.append({**base, "level": t, "premise": rec["premise"], "hypothesis": fu.text,
                             "level_facts": [f["text"] for f in rec["facts"]],
                             "premise_facts": [f["text"] for _, f in pf],
                             "hyp_facts": list(fu.facts),
                             "sources": list(dict.fromkeys(f["source"] for _, f in pf)),
                             # per fused fact: the level that selected it, its page and snippet, and whether h(t) has it
                             "fact_provenance": [{"level": lv, "fact": f["text"], "source": f["source"],
                                                  "title": f["title"], "snippet": f["snippet"],
                                                  "in_hypothesis": f["text"] in in_h} for lv, f in pf],
                             "fusion_ok": True})
        items = pd.DataFrame(rows)
        items["n_premise_facts"] = items["premise_facts"].str.len()
        items["n_hyp_facts"] = items["hyp_facts"].str.len()
        items["premise_words"] = items["premise"].map(word_count)
        items["hyp_words"] = items["hypothesis"].map(word_count)
        failed = pd.DataFrame(failed, columns=["pair_id", "label", "orig_premise", "orig_hypothesis", "variant",
                                               "level", "failure"])
        return FactNLIData(items, trace_frame(chains), chains, self.settings, self.components, failed)


def built_levels(levels: list) -> list:
    """The levels of a premise chain up to (not including) its first failed one."""
    for k, rec in enumerate(levels):
        if rec.get("failure"):
            return levels[:k]
    return levels


def trace_frame(chains: dict) -> pd.DataFrame:
    """One row per (premise, level, candidate): the snippet and source it came from and the filter's decision."""
    rows = []
    for p, ch in chains.items():
        for rec in ch["levels"]:
            for f in rec["candidates"]:
                decision, blocking = rec["decisions"].get(f["text"], ("duplicate", ""))
                rows.append({"premise": p, "level": rec["level"], "fact": f["text"], "source": f["source"],
                             "title": f["title"], "snippet": f["snippet"], "snippet_score": f["score"],
                             "decision": decision, "blocking": blocking, "truth_size": rec["truth_size"],
                             "n_snippets": len(rec["snippets"])})
    cols = ["premise", "level", "fact", "source", "title", "snippet", "snippet_score", "decision", "blocking",
            "truth_size", "n_snippets"]
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------------------------------------------
# Factories
# --------------------------------------------------------------------------------------------------------------

def augmenter(judge_model, pages, llm_client=None, settings: FactNLISettings | None = None, encoder=None,
              cache: CallCache | None = None, wordnet=None) -> Augmenter:
    """The framework from its parts: `pages` (a `WordNetPages` or a `wikipedia.WikipediaPages`) to retrieve from,
    `judge_model` behind the filter, and B.1 extraction and B.2 fusion through `llm_client` (with B.1 on the
    premise as T(0)), or the offline rules, template and atoms when it is None. Either page source goes with
    either: WordNet pages with an LLM is the offline tier with a local endpoint.

    Its `tier` names its generator: 'offline' for WordNet pages with the rules and template (the one the gold set
    judges), 'paper' for anything else."""
    from ..models import SentenceEncoder

    settings = settings or FactNLISettings()
    encoder = encoder or SentenceEncoder(progress=False, cache=cache)
    retriever = SnippetRetriever(pages, encoder, tau=settings.tau, max_snippets=settings.max_snippets)
    judge = NLIJudge(judge_model, settings.tau_e, settings.tau_c)
    if llm_client is None:
        if wordnet is None:
            from ..data.wordnet import load_wordnet

            wordnet = load_wordnet()
        extractor, fuser = rule_extractor(cache=cache), template_fuser(cache=cache, wordnet=wordnet)
        seeds = atom_premise_facts(cache=cache)
    else:
        extractor, fuser = llm_extractor(llm_client), llm_fuser(llm_client)
        seeds = b1_premise_facts(extractor)
    offline = llm_client is None and isinstance(pages, WordNetPages)
    return Augmenter(retriever, extractor, judge, fuser, seeds, settings, cache,
                     tier="offline" if offline else "paper")


def offline_augmenter(judge_model, settings: FactNLISettings | None = None, encoder=None, wordnet=None,
                      cache: CallCache | None = None) -> Augmenter:
    """Offline: WordNet pages, rule-based B.1, the given NLI model as judge, template B.2, atoms as T(0)."""
    from ..models import SentenceEncoder

    if wordnet is None:
        from ..data.wordnet import load_wordnet

        wordnet = load_wordnet()
    encoder = encoder or SentenceEncoder(progress=False, cache=cache)
    return augmenter(judge_model, WordNetPages(wordnet, encoder=encoder), None, settings, encoder, cache, wordnet)


def paper_augmenter(llm_client, judge_model, settings: FactNLISettings | None = None, encoder=None,
                    api_url: str = WIKIPEDIA_API, cache: CallCache | None = None,
                    user_agent: str | None = None) -> Augmenter:
    """Paper profile: Wikipedia pages (`api_url`, requests sent with `user_agent`), B.1 and B.2 through the
    LLM endpoint, a cross-encoder judge."""
    pages = WikipediaPages(api_url, cache=cache, replay_only=getattr(llm_client, "replay_only", False),
                           user_agent=user_agent)
    return augmenter(judge_model, pages, llm_client, settings, encoder, cache)


# --------------------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------------------

SNLI_TEST = "SNLI test"  # the paper's augmented SNLI split (Table 1)
#: The paper's MNLI splits (Table 1) -> `data.loaders.load_mnli` split names (online-only MultiNLI archive).
MNLI_SPLITS = {"MNLI validation_matched": "dev_matched", "MNLI validation_mismatched": "dev_mismatched"}
MNLI_POOLED = "MNLI (matched+mismatched)"  # Table 2's MNLI column: both validation sets together


def premise_sample(pairs: pd.DataFrame, n_premises: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Every pair of a seeded sample of `n_premises` distinct premises (all pairs when None).

    >>> df = pd.DataFrame({"premise": ["a", "a", "b", "c"], "pair_id": [1, 2, 3, 4]})
    >>> premise_sample(df, 1, seed=0)["pair_id"].tolist(), len(premise_sample(df))
    ([4], 4)
    """
    if n_premises is None:
        return pairs.reset_index(drop=True)
    premises = pd.Series(pairs["premise"].unique())
    chosen = set(premises.sample(n=min(n_premises, len(premises)), random_state=seed))
    return pairs[pairs["premise"].isin(chosen)].reset_index(drop=True)


def snli_sample(n_premises: int | None = None, seed: int = 0) -> pd.DataFrame:
    """SNLI test (= e-SNLI test, 9,824 pairs); with `n_premises`, every pair of a seeded sample of premises."""
    from ..data.loaders import load_esnli

    return premise_sample(load_esnli("test")[["premise", "hypothesis", "label", "pair_id"]], n_premises, seed)


def mnli_validation(split: str, path=None) -> pd.DataFrame:
    """All pairs with a gold label of one MNLI validation set (`split`: a key of MNLI_SPLITS; 9,815 matched,
    9,832 mismatched) from the online-only MultiNLI archive (`path` overrides where it is read from)."""
    from ..data.loaders import load_mnli

    if split not in MNLI_SPLITS:
        raise ValueError(f"unknown MNLI split {split!r}; one of {list(MNLI_SPLITS)}")
    return load_mnli(MNLI_SPLITS[split], path=path)[["premise", "hypothesis", "label", "pair_id"]]


def mnli_sample(n_premises: int | None = None, seed: int = 0) -> pd.DataFrame:
    """MNLI dev pairs available offline (TaxiNLI's MNLI-dev rows; the full validation sets are online-only)."""
    from ..taxinli.loaders import load_mnli_from_taxinli

    df = load_mnli_from_taxinli()
    return premise_sample(df[df["in_mnli_dev"]][["premise", "hypothesis", "label", "pair_id"]], n_premises, seed)


# --------------------------------------------------------------------------------------------------------------
# Appendix D controls: unrelated facts and rewrite-only (both at the L=1 length)
# --------------------------------------------------------------------------------------------------------------

def unrelated_facts(data: FactNLIData, augmenter: Augmenter, seed: int = 0, candidates: int = 8) -> pd.DataFrame:
    """Table 7's unrelated-facts variant at L=1: each premise gets the L=1 facts of another premise.

    The donor is, among `candidates` random other premises with at least as many L=1 facts, the one least
    similar (MiniLM cosine) to the premise; donor facts that the premise also fuses itself are skipped; as
    many facts as the item's own F(1) (and F^(1) for the hypothesis) are fused with the same fuser, so length
    and style match FactNLI L=1. A pair whose fusion failed is left out, with its reason in attrs["failed"].
    """
    l1 = data.level(1)
    own = {p: [f["text"] for f in ch["levels"][0]["facts"]] for p, ch in data.chains.items() if ch["levels"]}
    every = {p: {f["text"] for rec in ch["levels"] for f in rec["facts"]} for p, ch in data.chains.items()}
    premises = sorted(own)
    vecs = dict(zip(premises, augmenter.retriever.encoder.encode(premises))) if premises else {}
    rng = random.Random(seed)
    donor = {}
    for p in premises:
        pool = [q for q in premises if q != p and len(own[q]) >= len(own[p])] or [q for q in premises if q != p]
        sample = rng.sample(pool, min(candidates, len(pool))) if pool else []
        donor[p] = min(sample, key=lambda q: float(vecs[q] @ vecs[p])) if sample else None
    p_jobs, h_jobs, meta = [], [], []
    for row in l1.itertuples(index=False):
        d = donor.get(row.orig_premise)
        facts = [f for f in own.get(d, []) if f not in every.get(row.orig_premise, set())] if d else []
        pf = facts[: len(row.level_facts)]
        hf = pf[: len(row.hyp_facts)]
        p_jobs.append((row.orig_premise, pf))
        h_jobs.append((row.orig_hypothesis, hf))
        meta.append((d, pf, hf))
    fused = augmenter.fuser.fuse_many(p_jobs + h_jobs)
    n = len(p_jobs)
    out = l1[["pair_id", "label", "orig_premise", "orig_hypothesis"]].copy()
    out["variant"], out["level"] = "unrelated-facts", 1
    out["premise"] = [f.text for f in fused[:n]]
    out["hypothesis"] = [f.text for f in fused[n:]]
    out["donor_premise"] = [m[0] for m in meta]
    out["premise_facts"] = [m[1] for m in meta]
    out["hyp_facts"] = [m[2] for m in meta]
    out["failure"] = [f"fusion (B.2) failed: {a.error or b.error}" if not (a.ok and b.ok) else ""
                      for a, b in zip(fused[:n], fused[n:])]
    return _drop_failed(out)


def _drop_failed(out: pd.DataFrame) -> pd.DataFrame:
    """Rows whose generation succeeded (with word counts); the failed ones go to attrs["failed"] (a list of row
    dicts: a DataFrame there would break `pd.concat`, which compares the inputs' attrs), never scored."""
    bad = out["failure"] != ""
    kept = out[~bad].drop(columns="failure").reset_index(drop=True)
    kept["premise_words"], kept["hyp_words"] = kept["premise"].map(word_count), kept["hypothesis"].map(word_count)
    kept.attrs["failed"] = out[bad].to_dict("records")
    return kept


#: COMPANION-AUTHORED: the paper describes the rewrite-only control (Appendix D) but prints no prompt.
REWRITE_PROMPT = PromptTemplate(
    name="factnli.rewrite", paper="factnli", section="Appendix D (prompt companion-authored)", system=None,
    template=("[Task Description]\nRewrite the TEXT as a longer paraphrase of about {TARGET_WORDS} words that "
              "preserves its meaning exactly. Do not add any new information, entity, fact or inference; only "
              "rephrase and elaborate what the TEXT already states.\n[Inputs]\n{TEXT}\n\n[Output JSON]\n"
              "{\n\"rewrite\": \"<paraphrase>\"\n}"),
    parser=lambda text: _rewrite_value(text),
    notes="Companion-authored wording for the Appendix D rewrite-only control (no prompt printed).",
)
REWRITE_RULES_VERSION = f"factnli-rewrite-{ATOM_RULES_VERSION}"  # rewrites are atoms: versioned with the decomposer


def _rewrite_value(text: str) -> str:
    from ..llm.prompts import json_object

    value = json_object(text).get("rewrite")
    if not isinstance(value, str) or not value.strip():
        raise ValueError("no non-empty 'rewrite' found")
    return value.strip()


def atoms_rewrite_answer(decompose: Callable[[str], list[str]] | None = None):
    """Offline rewrite: the text verbatim, then its own atoms (entailed restatements) until the target length."""
    import re

    def answer(messages) -> str:
        content = messages[-1]["content"]
        target = int(re.search(r"about (\d+) words", content).group(1))
        text = re.search(r"\[Inputs\]\n(.*?)\n\n\[Output JSON\]", content, re.S).group(1)
        fn = decompose
        if fn is None:
            from ..decomposer import decompose as fn
        out = text.rstrip()
        out = out if out.endswith((".", "!", "?")) else out + "."
        for atom in fn(text):
            if word_count(out) >= target:
                break
            out += " " + atom
        return json.dumps({"rewrite": out}, ensure_ascii=False)

    return answer


def rewrite_only(data: FactNLIData, client=None, cache: CallCache | None = None) -> pd.DataFrame:
    """Table 7's rewrite-only variant: p and h expanded to their L=1 lengths without new facts.

    `client` None -> the offline rewriter (the text followed by its own atoms from the atoms decomposer,
    i.e. restatements it entails), cached as an OfflineLLM; otherwise an LLM with REWRITE_PROMPT. A pair whose
    rewrite failed (call error, unparsable answer) is left out, with its reason in attrs["failed"].
    """
    client = client or OfflineLLM(atoms_rewrite_answer(), name=REWRITE_RULES_VERSION, cache=cache)
    l1 = data.level(1)
    prompts = [REWRITE_PROMPT.render(TEXT=t, TARGET_WORDS=str(n)) for t, n in
               [*zip(l1["orig_premise"], l1["premise_words"]), *zip(l1["orig_hypothesis"], l1["hyp_words"])]]
    parsed = client.parse_many(REWRITE_PROMPT, client.chat_many(prompts, progress=False))
    n = len(l1)
    out = l1[["pair_id", "label", "orig_premise", "orig_hypothesis"]].copy()
    out["variant"], out["level"] = "rewrite", 1
    out["premise"], out["hypothesis"] = [p.value for p in parsed[:n]], [p.value for p in parsed[n:]]
    out["target_premise_words"], out["target_hyp_words"] = l1["premise_words"].values, l1["hyp_words"].values
    out["failure"] = [f"rewrite failed: {a.error or b.error}" if not (a.ok and b.ok) else ""
                      for a, b in zip(parsed[:n], parsed[n:])]
    return _drop_failed(out)
