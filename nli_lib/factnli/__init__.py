"""FactNLI (fact-based augmentation of NLI benchmarks): retrieve–filter–fuse to levels L=1..3, and §4's evaluation.

Modules, in the order of the paper's method (§3) and experiments (§4):

    retrieval   §3.2 premise-conditioned snippet pool: WordNetPages (offline) + SnippetRetriever (MiniLM
                cosine >= tau)
    wikipedia   §3.2 online pages: MediaWiki search on the terms each level added, new pages only, retries
    extraction  §3.2 atomic facts through Prompt B.1 (LLM, or the rule-based `atomize` offline)
    senses      offline word-sense choice for WordNet pages (MiniLM similarity of gloss and sentence)
    filtering   §3.3 / App. C truth-set filter (vacuous atoms left out), neutral graph, maximum clique
                (Bron-Kerbosch + pivot), entailment subgraph, NO-FILTER
    fusion      §3.4 Prompt B.2 fusion (LLM, or the template `compose` offline); hypothesis fact subsets
    pipeline    the level loop over a dataset (batched, cached, resumable), App. D controls
    evaluation  Table 2/3/7 accuracies, Fig. 3 growth, Fig. 4 confusions, §4.5 automatic diagnostics,
                scorecard rows (which paper row each number sits beside) and per-example records
    context     the token window each model scores with, measured on the data (no silent truncation)
    gold        the offline generator's precision against the hand-judged gold set
    figures     the filter graph of one level and accuracy by level, readable
    session     notebook glue: sample sizes (SNLI test; MNLI validation when fetched), tier components,
                declared generator, models to evaluate
    report      the tables notebooks 40-41 show (Table 1, the Appendix G case, the gold check, Fig. 3 data)

>>> from nli_lib.factnli import filter_facts, TableJudge
>>> filter_facts(["A man sleeps."], ["A man is awake.", "It is night."],
...              TableJudge({("A man sleeps.", "A man is awake."): "contradiction"})).clique
['It is night.']

CLI: ``python -m nli_lib.factnli build [--quick] [--n-premises N]`` builds SNLI test levels (all 9,824 pairs
by default) with progress bars, resuming from the cache; ``NLI_FACTNLI_PREMISES=all`` then makes notebooks 40/41
use all of it (offline they use a seeded 40-premise sample by default, see `session`).
"""
from . import paper  # noqa: F401  (its declarations, read by nli_lib.papers)
from .context import context_report, needed_length, sized_view
from .evaluation import (
                         FACTNLI_GENERATORS,
                         QWEN_GENERATOR,
                         ablation_table,
                         accuracy_by_level,
                         accuracy_long,
                         accuracy_scores,
                         audit_tables,
                         changed_by_filter,
                         confusions,
                         controls_table,
                         diagnostic_records,
                         diagnostics,
                         diagnostics_table,
                         figure3,
                         figure4,
                         flipped_pairs,
                         growth_by_level,
                         growth_scores,
                         levels_stand_for,
                         paper_table,
                         pool_datasets,
                         predict_datasets,
                         predict_variants,
                         prediction_mix,
                         prediction_records,
                         table2,
                         table3,
                         table7,
                         table8,
                         table9,
                         table_scores,
)
from .extraction import Fact, FactExtractor, atomize, llm_extractor, rule_extractor
from .figures import accuracy_figure, draw_filter, filter_key
from .filtering import (
                         FilterResult,
                         NLIJudge,
                         TableJudge,
                         filter_facts,
                         is_vacuous,
                         max_clique,
                         no_filter,
                         truth_seed,
                         truth_set_filter,
)
from .fusion import Fuser, FusionResult, check_fusion, compose, hypothesis_subsets, llm_fuser, template_fuser
from .gold import OFFLINE_GENERATOR, current_facts, gold_precision, load_gold, match_gold, precision_table
from .pipeline import (
                         MNLI_POOLED,
                         MNLI_SPLITS,
                         PAPER_JUDGE,
                         REWRITE_PROMPT,
                         SNLI_TEST,
                         Augmenter,
                         FactNLIData,
                         FactNLISettings,
                         mnli_sample,
                         mnli_validation,
                         offline_augmenter,
                         paper_augmenter,
                         premise_sample,
                         rewrite_only,
                         snli_sample,
                         trace_frame,
                         unrelated_facts,
)
from .retrieval import FailedPool, Page, RetrievalError, Snippet, SnippetRetriever, WordNetPages, definition_sentences
from .wikipedia import WikipediaPages

__all__ = [
    "FACTNLI_GENERATORS", "QWEN_GENERATOR", "ablation_table", "accuracy_by_level", "accuracy_long",
    "accuracy_scores", "audit_tables", "changed_by_filter", "confusions", "controls_table", "diagnostic_records",
    "diagnostics", "diagnostics_table", "figure3", "figure4", "flipped_pairs", "growth_by_level", "growth_scores",
    "levels_stand_for", "paper_table", "pool_datasets", "predict_datasets", "predict_variants", "prediction_mix",
    "prediction_records", "table2", "table3", "table7", "table8", "table9", "table_scores",
    "Fact", "FactExtractor", "atomize", "llm_extractor", "rule_extractor",
    "context_report", "needed_length", "sized_view", "accuracy_figure", "draw_filter", "filter_key",
    "FilterResult", "NLIJudge", "TableJudge", "filter_facts", "is_vacuous", "max_clique", "no_filter",
    "truth_seed", "truth_set_filter",
    "OFFLINE_GENERATOR", "current_facts", "gold_precision", "load_gold", "match_gold", "precision_table",
    "Fuser", "FusionResult", "check_fusion", "compose", "hypothesis_subsets", "llm_fuser", "template_fuser",
    "MNLI_POOLED", "MNLI_SPLITS", "PAPER_JUDGE", "REWRITE_PROMPT", "SNLI_TEST", "Augmenter", "FactNLIData",
    "FactNLISettings", "mnli_sample", "mnli_validation", "offline_augmenter", "paper_augmenter", "premise_sample",
    "rewrite_only", "snli_sample", "trace_frame", "unrelated_facts",
    "FailedPool", "Page", "RetrievalError", "Snippet", "SnippetRetriever", "WikipediaPages", "WordNetPages",
    "definition_sentences",
]
