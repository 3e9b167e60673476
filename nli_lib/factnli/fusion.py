"""§3.4 premise and hypothesis fusion through Prompt B.2, and the hypothesis-side fact selection.

One interface for both tiers: a `Fuser` sends Prompt B.2 (``PROMPTS["factnli.B2"]``: ANCHOR_TEXT, and
FACT_LIST_JSON = ``{"facts": [{"text": ...}]}``) through a cached chat client and parses
``{"fusion_result": ...}``. The premise is fused level by level (anchor p(t-1), facts F(t)); the
hypothesis always from the original h with the aggregate F* of chosen subsets of each level's facts.

Offline, `compose` stands in for the LLM (wrapped in `OfflineLLM`, so cached and parsed like one): it
begins with the anchor verbatim and adds each fact once, verbatim except for the case of its first letter,
after one of B.2's neutral connectors ("Additionally,", "Meanwhile,"). It adds no content words.

>>> facts = ["Carnaby Street is pedestrianised.", "A street is a road."]
>>> fused = compose("A woman looks into a window .", facts); fused
'A woman looks into a window . Additionally, Carnaby Street is pedestrianised. Meanwhile, a street is a road.'
>>> check_fusion(fused, "A woman looks into a window .", facts)
{'anchor_verbatim': True, 'fact_counts': [1, 1], 'each_fact_once': True}
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..llm import PROMPTS, OfflineLLM

FUSE_RULES_VERSION = "factnli-fuse-template-v1"  # names the OfflineLLM cache namespace: bump when rules change
CONNECTIVES = ("Additionally,", "Meanwhile,")  # B.2 rule 4's connectors that need no time/location slot

#: First words that are lower-cased after a connective (function words); any other word keeps its case
#: unless `common_words` says it is an ordinary lower-case noun ("Water is ..." -> "water is ...").
_FUNCTION_WORDS = {"a", "an", "the", "some", "many", "most", "each", "every", "no", "all", "any", "one", "two",
                   "three", "several", "few", "both", "there", "in", "on", "at", "for", "with", "without", "during",
                   "after", "before", "as", "by", "from", "to", "of", "this", "these", "those", "its", "their",
                   "such", "other", "another", "more", "less", "much", "when", "while", "if", "although"}


def _lower_first(fact: str, common_words=None) -> str:
    first = re.match(r"[A-Za-z]+", fact)
    if not first:
        return fact
    word = first.group(0)
    low = word.lower()
    if word.isupper() and len(word) > 1:  # acronyms stay
        return fact
    if low in _FUNCTION_WORDS or (common_words is not None and low in common_words):
        return fact[:1].lower() + fact[1:]
    return fact


def _sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def compose(anchor: str, facts: Sequence[str], common_words=None) -> str:
    """The offline B.2 stand-in: anchor verbatim, then each fact once after a neutral connector."""
    anchor = str(anchor).rstrip()
    text = anchor if anchor.endswith((".", "!", "?")) else anchor + "."
    for k, fact in enumerate(facts):
        text += f" {CONNECTIVES[k % len(CONNECTIVES)]} {_lower_first(_sentence(fact), common_words)}"
    return text


def check_fusion(text: str, anchor: str, facts: Sequence[str]) -> dict:
    """Does `text` begin with the anchor verbatim, and contain each fact exactly once (first letter's case free)?"""
    counts = []
    for fact in facts:
        body = _sentence(fact)
        pattern = (
            "(?<![A-Za-z])[" + re.escape(body[:1].upper()) + re.escape(body[:1].lower()) + "]" + re.escape(body[1:])
        )
        counts.append(len(re.findall(pattern, text)))
    return {"anchor_verbatim": str(text).startswith(str(anchor).rstrip()), "fact_counts": counts,
            "each_fact_once": all(c == 1 for c in counts)}


def inputs_from_b2(messages) -> tuple[str, list[str]]:
    """(ANCHOR_TEXT, facts) of a rendered B.2 prompt."""
    content = messages[-1]["content"] if isinstance(messages, list) else str(messages)
    m = re.search(r"\[Inputs\]\n(.*?)\n(\{\"facts\".*\})\n\n\[Rules\]", content, re.S)
    if not m:
        raise ValueError("not a FactNLI B.2 prompt: no [Inputs] anchor + fact JSON block")
    facts = [f["text"] if isinstance(f, dict) else str(f) for f in json.loads(m.group(2)).get("facts", [])]
    return m.group(1), facts


def template_answer(common_words=None):
    """The offline B.2 answer function (for OfflineLLM)."""

    def answer(messages) -> str:
        anchor, facts = inputs_from_b2(messages)
        return json.dumps({"fusion_result": compose(anchor, facts, common_words)}, ensure_ascii=False)

    return answer


@dataclass(frozen=True)
class FusionResult:
    """One fused text and how it was obtained."""

    text: str | None  # p(t) or h(t); None when the call failed or its answer did not parse (see `error`)
    anchor: str  # the anchor it was fused onto
    facts: tuple  # the facts it had to integrate
    ok: bool  # the answer parsed
    error: str | None = None  # why there is no text (failed call, refusal, unparsable answer)
    anchor_verbatim: bool = True  # the text begins with the anchor verbatim


@dataclass(frozen=True)
class Fuser:
    """Prompt B.2 through a cached chat client (an LLM endpoint, or the offline template composer)."""

    client: object  # LLMClient or OfflineLLM
    name: str  # generator name printed beside results
    tier: str  # 'paper' | 'offline'

    def fuse_many(self, jobs: Sequence[tuple[str, Sequence[str]]], progress: bool = False) -> list[FusionResult]:
        """Fuse (anchor, facts) jobs; no facts -> the anchor unchanged (no call). A failed call or an unparsable
        answer gives text None with the reason (counted by the client), never a text made up in its place."""
        todo = [i for i, (_, facts) in enumerate(jobs) if facts]
        prompts = [PROMPTS["factnli.B2"].render(ANCHOR_TEXT=jobs[i][0], FACT_LIST_JSON=list(jobs[i][1])) for i in todo]
        results = self.client.chat_many(prompts, progress=progress) if prompts else []
        out = [FusionResult(anchor, anchor, tuple(facts), True) for anchor, facts in jobs]
        for i, parsed in zip(todo, self.client.parse_many(PROMPTS["factnli.B2"], results)):
            anchor, facts = jobs[i]
            if parsed.ok:
                out[i] = FusionResult(parsed.value, anchor, tuple(facts), True,
                                      anchor_verbatim=parsed.value.startswith(anchor.rstrip()))
            else:
                out[i] = FusionResult(None, anchor, tuple(facts), False, error=parsed.error, anchor_verbatim=False)
        return out


def common_words_from(wordnet) -> frozenset[str]:
    """Single-word noun lemmas WordNet only lists in lower case (so 'Water' may become 'water', 'London' not)."""
    lower, capital = set(), set()
    for sid in getattr(wordnet, "_synsets", {}):
        for m in wordnet.lemmas(sid):
            if " " in m or "_" in m:
                continue
            (lower if m.islower() else capital).add(m.lower())
    return frozenset(lower - capital)


def template_fuser(cache=None, wordnet=None) -> Fuser:
    """The offline fuser: `compose` behind the B.2 interface, cached as an OfflineLLM."""
    common = common_words_from(wordnet) if wordnet is not None else None
    return Fuser(OfflineLLM(template_answer(common), name=FUSE_RULES_VERSION, cache=cache),
                 name=FUSE_RULES_VERSION, tier="offline")


def llm_fuser(client) -> Fuser:
    return Fuser(client, name=getattr(client, "model", "llm"), tier="paper")


# --------------------------------------------------------------------------------------------------------------
# Hypothesis side: which of each level's facts go into h
# --------------------------------------------------------------------------------------------------------------

def hypothesis_subsets(level_facts: Sequence[Sequence[str]], hypothesis_vec: np.ndarray | None,
                       fact_vecs: dict | None, share: float = 0.5) -> list[list[str]]:
    """F^(i) ⊆ F(i) for each level: the ceil(share·|F(i)|) facts closest (cosine) to h, in their level order.

    The paper says only that a subset of each level's facts is chosen ("facts drop partly"); choosing the
    facts closest to the hypothesis keeps h(t) about h's entities. Without vectors, the first facts are kept.

    >>> hypothesis_subsets([["a", "b", "c"], [], ["d"]], None, None, share=0.5)
    [['a', 'b'], [], ['d']]
    """
    out = []
    for facts in level_facts:
        k = math.ceil(share * len(facts)) if facts else 0
        if hypothesis_vec is None or fact_vecs is None:
            chosen = list(facts[:k])
        else:
            scores = [float(np.asarray(fact_vecs[f]) @ hypothesis_vec) for f in facts]
            keep = set(sorted(range(len(facts)), key=lambda i: (-scores[i], i))[:k])
            chosen = [f for i, f in enumerate(facts) if i in keep]
        out.append(chosen)
    return out
