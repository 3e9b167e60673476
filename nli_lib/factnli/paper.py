"""What the shared layers know about FactNLI (notebooks 40-41): its systems, prompt module, profile section and
outputs catalog (the declarations `nli_lib.papers` loads without this package's code, so this module imports only
the light core).

OUTPUTS: name, paper reference and caption of every output, declared once (see nli_lib.catalog).
"""
from typing import Callable, Literal

from ..catalog.spec import OutputSpec
from ..papers import Section, Setting, entry

JUDGE = "cross-encoder/nli-deberta-v3-base"  # the filter's "compact cross-encoder based on DeBERTa-v3-base"
JUDGE_SYSTEM = "DeBERTa-v3-base cross-encoder"  # our name for it (the paper prints none)
WIKIPEDIA_API = "https://en.wikipedia.org/w/api.php"  # the retrieval source (MediaWiki API)
# the systems the paper prints numbers for, as printed (what a profile's `as:` may name)
SYSTEMS = ("GPT-4o", "Llama-3-8B-Instruct", "Qwen2.5-14B-Instruct", "DeepSeek-V3", "DeepSeek-R1", "RoBERTa-large",
           "DeBERTa-v3-large", JUDGE_SYSTEM)
PROMPTS = "nli_lib.factnli.prompts"  # registers the factnli.* prompt templates
# Figures whose numbers the paper does not print (in its text, captions or extracted labels): ref -> what the figure
# shows and where its numbers are printed instead, if anywhere. No paper value can be filed for what is only drawn
# (never read off a plot); the scorecard lists these (`nli_lib.paper_values.unprinted`). "prints no number": the
# figure has no paper value; "prints only ...": the values filed under it are those, the rest is only drawn.
UNPRINTED = {
    "factnli-fig-3": "prints no number: (a) word counts per level as lines, whose ranges §4.3's text gives "
                     "(factnli-sec-4.3); (b) fused facts per record as bars whose 'numbers above bars' are not in "
                     "the paper's text",
    "factnli-fig-4": "prints no number: confusion matrices per model and level (Appendix E)",
}
RETRIEVAL = ("wordnet", "wikipedia")  # the page sources: Open English WordNet (offline), Wikipedia (the paper's)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")  # API hosts that need no User-Agent contact (local stand-ins)
PROBE_TIMEOUT_S = 5.0  # how long the check before a run waits for the MediaWiki API to answer
PROFILE_SECTION = Section("FactNLI (notebooks 40-41): the filter's judge (paper tier) and the retrieval source "
                          "(both tiers).", {
    "judge": Setting("the filter's NLI judge M (cross-encoder)", entry(JUDGE, JUDGE_SYSTEM), models="one"),
    "retrieval": Setting(
        "where pages come from: wordnet (Open English WordNet glosses, offline) or wikipedia (the paper's source, "
        "online: wikipedia_api with user_agent); null: wordnet in the offline tier, wikipedia in the paper tier. "
        "Independent of llm: (WordNet pages with an LLM's B.1 extraction and B.2 fusion work). Wikipedia is checked "
        "before any notebook runs: a User-Agent with contact, and the API answering", None,
        Literal[RETRIEVAL] | None),  # type: ignore[valid-type]
    "wikipedia_api": Setting("MediaWiki API the retriever queries", WIKIPEDIA_API, str),
    "user_agent": Setting(
        "User-Agent of the retriever's requests, with your contact (a URL or e-mail address), as Wikimedia's "
        "policy asks, e.g. 'nli-companion/0.1 (https://example.org/you)'; needed for any non-local API", None,
        str | None),
})



def retrieval_source(profile) -> str:
    """The page source of FactNLI's retrieval for a validated profile: `paper_models.factnli.retrieval` when set,
    else the tier's own (offline: wordnet; paper: wikipedia), whether or not `llm:` is set.

    >>> from nli_lib.profile import load_profile
    >>> [retrieval_source(load_profile(text=t)) for t in ["tier: offline", "tier: paper",
    ...  "tier: offline\\npaper_models: {factnli: {retrieval: wikipedia}}",
    ...  "tier: paper\\npaper_models: {factnli: {retrieval: wordnet}}"]]
    ['wordnet', 'wikipedia', 'wikipedia', 'wordnet']
    """
    chosen = profile.paper_models.factnli.retrieval
    return chosen or ("wikipedia" if profile.tier == "paper" else "wordnet")


def has_contact(user_agent: str) -> bool:
    """Whether a User-Agent carries contact information (a URL or an e-mail address), as Wikimedia asks.

    >>> has_contact("nli-companion/0.1 (https://example.org/me)"), has_contact("nli-companion/0.1 (me@x.org)")
    (True, True)
    >>> has_contact("nli-companion/0.1"), has_contact("")
    (False, False)
    """
    text = str(user_agent or "")
    return "://" in text or ("@" in text and "." in text.split("@")[-1])


def probe(api_url: str, user_agent: str | None, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the MediaWiki API at `api_url` cannot be used from here (unreachable, an HTTP error, no API answer), or
    None when it answers a siteinfo query within `timeout_s`."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    url = api_url + "?" + urllib.parse.urlencode({"action": "query", "meta": "siteinfo", "format": "json"})
    req = urllib.request.Request(url, headers={"User-Agent": user_agent or "nli-companion/0.1 (FactNLI check)"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - the profile's API URL
            data = json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        return f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
    except ValueError as exc:
        return f"not a MediaWiki API answer ({exc})"
    return None if isinstance(data, dict) and "query" in data else "not a MediaWiki API answer"


def preflight(profile, reach: Callable[[str, str | None], str | None] = probe) -> list[str]:
    """Problems of FactNLI's online retrieval, found before any notebook runs (`papers.preflight`): with Wikipedia
    as the page source (`retrieval_source`), a User-Agent with contact for any non-local API, and the API
    answering within PROBE_TIMEOUT_S (`reach`). [] for WordNet, and for a replay (`llm.replay_only`: pages come
    from the call cache)."""
    from urllib.parse import urlparse

    if retrieval_source(profile) != "wikipedia" or (profile.llm is not None and profile.llm.replay_only):
        return []
    section, key = profile.paper_models.factnli, "paper_models.factnli"
    why = f"{key}.retrieval is wikipedia" if section.retrieval else \
        f"FactNLI retrieves from Wikipedia (the paper tier's default; {key}.retrieval not set)"
    fix = (f"or set {key}.retrieval: wordnet (offline WordNet pages; an llm: endpoint still extracts and fuses "
           f"facts), or llm.replay_only: true to answer from the call cache")
    host = urlparse(section.wikipedia_api).hostname or ""
    if host not in LOCAL_HOSTS and not has_contact(section.user_agent or ""):
        return [f"{key}.user_agent: {why}, and Wikimedia's User-Agent policy asks for contact information (a URL or "
                f"an e-mail address), got {section.user_agent!r}. Fix: set it, e.g. 'nli-companion/0.1 "
                f"(https://example.org/you; you@example.org)', {fix}"]
    problem = reach(section.wikipedia_api, section.user_agent)
    if problem:
        return [f"{key}.wikipedia_api: {why}, but the MediaWiki API at {section.wikipedia_api} did not answer "
                f"({problem}). Fix: check the network (or the URL), {fix}"]
    return []


PREFLIGHT = preflight  # what `papers.preflight` runs before notebooks 40-41

_PROXY = ("automatic proxies (NLI judge), not human judgements: shown beside the paper's human audit, never "
          "scored against it")

OUTPUTS: dict[str, list[OutputSpec]] = {
    "40_factnli_augment": [
        OutputSpec("table-1", "factnli-table-1",
                   "dataset sizes: the paper's vs. the data at hand and this run's sample (MNLI validation sets: "
                   "online-only, NaN until fetched)"),
        OutputSpec("case-study-trace", "factnli-table-10",
                   "Appendix G premise: every candidate fact per level with its snippet, page and filter decision",
                   kind="records", filters=("level", "decision", "title"), text=("fact", "snippet", "blocking")),
        OutputSpec("filter-graph-case-study", "factnli-fig-2",
                   "Fig. 2b analogue: truth set, every level-1 candidate with the relation that rejected it, the "
                   "neutral graph among the retained and its maximum clique; full texts in the key",
                   kind="figure"),
        OutputSpec("table-10-case-study", "factnli-table-10",
                   "Appendix G case study: our levels beside the paper's level 1 (different corpus and generator)"),
        OutputSpec("filter-decisions", "factnli-fig-2",
                   "truth-set and graph filter decisions per level (full framework, SNLI test)"),
        OutputSpec("filter-trace", "factnli-fig-2",
                   "every candidate fact of every premise level: snippet, page, retrieval score, filter decision",
                   kind="records", filters=("variant", "level", "decision"),
                   text=("premise", "fact", "snippet", "blocking")),
        OutputSpec("gold-precision", "factnli-table-4",
                   "offline fact generator: precision against the hand-judged gold set (true and right sense for "
                   "the scene), overall and by level, Wilson 95% CI; stale = no longer produced"),
        OutputSpec("fig-3-data", "factnli-fig-3",
                   "mean words (premise, hypothesis) and fused facts per record by level, per dataset and variant"),
        OutputSpec("fig-3", "factnli-fig-3", "length growth and fact fusion by level", kind="figure"),
        OutputSpec("fig-3-beside-paper", "factnli-fig-3",
                   "§4.3 lengths: ours beside the paper's ranges (SNLI: low end; MNLI L=0: high end)"),
        OutputSpec("augmented-items", "factnli-fig-3",
                   "every augmented pair (SNLI: full and NO-FILTER; MNLI: full; L=0..3) with its fused facts and "
                   "sources", kind="records", filters=("dataset", "variant", "level", "label"),
                   text=("premise", "hypothesis", "premise_facts", "hyp_facts", "fact_provenance", "orig_premise",
                         "orig_hypothesis")),
    ],
    "41_factnli_evaluation": [
        OutputSpec("context-lengths", "factnli-table-2",
                   "token lengths of the scored pairs (model's tokenizer, no truncation) and the window each model "
                   "scores with; truncated = pairs longer than the window"),
        OutputSpec("predictions", "factnli-table-2",
                   "every model's prediction on every pair, dataset, level and variant (full, NO-FILTER, rewrite, "
                   "unrelated facts); flipped = right at L=0, wrong here", kind="records",
                   filters=("model", "dataset", "variant", "level", "label", "pred", "correct", "flipped"),
                   text=("premise", "hypothesis")),
        OutputSpec("table-2", "factnli-table-2",
                   "accuracy (%) at levels L=0..3 on SNLI test (and MNLI validation when fetched); paper rows: "
                   "GPT-4o-generated FactNLI"),
        OutputSpec("table-2-accuracy-by-level", "factnli-table-2",
                   "accuracy by level with Wilson 95% intervals (models shifted sideways; n pairs per level), over the "
                   "paper's Table 2 on SNLI test (its models' range and average)",
                   kind="figure"),
        OutputSpec("fig-4", "factnli-fig-4", "confusion matrices per model and level (SNLI test)", kind="figure"),
        OutputSpec("table-3", "factnli-table-3", "accuracy (%) at L=0 and L=1..3, full framework vs. NO-FILTER"),
        OutputSpec("table-7", "factnli-table-7",
                   "accuracy (%): original, FactNLI L=1, rewrite-only and unrelated-facts variants"),
        OutputSpec("controls", "factnli-table-7",
                   "the Appendix D controls at L=1: rewrite-only and unrelated-facts pairs (donor premise, fused "
                   "facts)", kind="records", filters=("variant", "label"),
                   text=("premise", "hypothesis", "orig_premise", "orig_hypothesis", "donor_premise")),
        OutputSpec("prediction-mix", "factnli-table-7",
                   "share of each predicted label per model, variant and level (%), with the gold mix"),
        OutputSpec("table-4-automatic", "factnli-table-4",
                   f"automatic diagnostics by level (ours) beside the paper's human audit; {_PROXY}"),
        OutputSpec("table-5-automatic", "factnli-table-5",
                   f"full vs. NO-FILTER at L=3: automatic diagnostics (ours) beside the human audit; {_PROXY}"),
        OutputSpec("diagnostics", "factnli-table-4",
                   "§4.5 automatic diagnostics per audited item: judge label, conflict, redundant and supported "
                   "facts", kind="records", filters=("variant", "level", "label", "label_pred", "label_preserved",
                                                     "conflict"),
                   text=("premise", "hypothesis", "premise_facts", "hyp_facts")),
        OutputSpec("table-8", "factnli-table-8",
                   "Appendix F: accuracy (%) on SNLI levels generated by {generator}, declared the paper's "
                   "Qwen2.5-14B-Instruct, beside Table 8"),
        OutputSpec("table-9-automatic", "factnli-table-9",
                   f"Appendix F: automatic diagnostics of the Qwen2.5-14B-Instruct-generated levels beside Table 9's "
                   f"human audit; {_PROXY}"),
    ],
}
