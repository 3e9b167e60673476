"""What the shared layers know about FactNLI (notebooks 40-41): its systems, prompt module, profile section and
outputs catalog (the declarations `nli_lib.papers` loads without this package's code, so this module imports only
the light core).

OUTPUTS: name, paper reference and caption of every output, declared once (see nli_lib.catalog).
"""
from ..catalog.spec import OutputSpec
from ..papers import Section, Setting, entry

JUDGE = "cross-encoder/nli-deberta-v3-base"  # the filter's "compact cross-encoder based on DeBERTa-v3-base"
JUDGE_SYSTEM = "DeBERTa-v3-base cross-encoder"  # our name for it (the paper prints none)
WIKIPEDIA_API = "https://en.wikipedia.org/w/api.php"  # the retrieval source (MediaWiki API)
# the systems the paper prints numbers for, as printed (what a profile's `as:` may name)
SYSTEMS = ("GPT-4o", "Llama-3-8B-Instruct", "Qwen2.5-14B-Instruct", "DeepSeek-V3", "DeepSeek-R1", "RoBERTa-large",
           "DeBERTa-v3-large", JUDGE_SYSTEM)
PROMPTS = "nli_lib.factnli.prompts"  # registers the factnli.* prompt templates
PROFILE_SECTION = Section("Judge model and retrieval source of FactNLI (notebooks 40-41) in the paper tier.", {
    "judge": Setting("the filter's NLI judge M (cross-encoder)", entry(JUDGE, JUDGE_SYSTEM), models="one"),
    "wikipedia_api": Setting("MediaWiki API the retriever queries", WIKIPEDIA_API, str),
    "user_agent": Setting(
        "User-Agent of the retriever's requests, with your contact (a URL or e-mail address), as Wikimedia's "
        "policy asks, e.g. 'nli-companion/0.1 (https://example.org/you)'; needed for any non-local API", None,
        str | None),
})

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
                   "accuracy by level with Wilson 95% intervals (models shifted sideways; n pairs per level)",
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
