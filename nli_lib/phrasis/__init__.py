"""PhrasIS causal coherence (Apaolaza et al.): baselines, reversal, SoftCoh / HardCoh, error analysis.

Submodules: `data` (six scenarios, seeded 80/20 validation split), `coherence` (Rev, reversed pairs,
SoftCoh/HardCoh), `features` (lexical + WordNet pair analysis, offline relation rules, §5.2 phenomena),
`models` (feature SVM, track-aware prompted and NLI-both-ways classifiers, the paper's hub models and its
Optuna space, head dropout included), `evaluate` (training per scenario or track, weighted F, coherence
rows), `analysis` (error analysis, the paper's printed tables and example pairs), `figures`, `report`
(the tables notebooks 20-22 show). Notebooks 20-22 call these; everything is re-exported here.

    >>> from nli_lib import phrasis as phr
    >>> phr.reverse_label("FORW"), phr.soft_coh(["FORW", "EQUI"], ["BACK", "SIMI"])
    ('BACK', 0.5)
"""
from . import paper  # noqa: F401  (its declarations, read by nli_lib.papers)
from .analysis import (  # noqa: F401
                       NOT_RANKED,
                       PAPER_EXAMPLES,
                       PHENOMENA,
                       add_phenomena,
                       beside_paper_table,
                       dedupe_tracks,
                       direction_table,
                       example_pairs,
                       find_examples,
                       incoherent_patterns,
                       match_key,
                       paper_a_outside_i_h,
                       paper_best,
                       paper_comparisons,
                       paper_long,
                       paper_wide,
                       phenomenon_examples,
                       phenomenon_table,
)
from .coherence import (  # noqa: F401
                       REVERSAL,
                       REVERSED_LABELS,
                       coherence_table,
                       hard_coh,
                       hard_coherent,
                       pair_table,
                       reverse_label,
                       reverse_labels,
                       reversed_pairs,
                       score_pairs,
                       soft_coh,
                       soft_coherent,
                       summarize,
)
from .data import (  # noqa: F401
                       POSITIVE_LABELS,
                       SCENARIO_KEYS,
                       SCENARIOS,
                       PhrasisSplits,
                       Scenario,
                       load_splits,
                       scenario,
                       stratified_take,
                       validation_mask,
)
from .evaluate import (  # noqa: F401
                       ERROR_SCENARIO,
                       MINILM,
                       MINILM_EPOCHS,
                       PROMPT_SHOTS,
                       FamilySpec,
                       TrainedModels,
                       add_zero_shot,
                       best_model,
                       coherence_rows,
                       coherence_summary,
                       f1_summary,
                       gate_fine_tuned,
                       hub_families,
                       hub_family,  # noqa: F401
                       minilm_spec,
                       model_sizes,
                       offline_families,
                       paper_families,
                       parameter_millions,
                       predict_rows,
                       profile_families,
                       train_family,
                       train_models,
                       train_profile,
                       weighted_f1,
                       wide,
                       withheld_scores,
                       zero_shot_models,
)
from .features import PairAnalysis, analyze, dense_features, phenomena, rule_relation, toy_wordnet  # noqa: F401
from .figures import contingency_figure, plot_coherence, plot_contingency  # noqa: F401
from .models import (  # noqa: F401
                       PAPER_ADAM_EPS,
                       PAPER_MODELS,
                       PAPER_SEARCH_SPACE,
                       FeatureSVMClassifier,
                       NLIRelationClassifier,
                       PromptedRelationClassifier,
                       nli_pair_to_relation,
                       offline_relation_llm,
                       paper_search,
                       phrases_from_prompt,
                       relation_template,
                       with_head_dropout,
)
from .report import (  # noqa: F401
                       COHERENCE_TABLES,
                       model_overview,
                       model_size_scores,
                       paper_example_predictions,
                       parse_rates,
                       phenomenon_by_model,
                       phenomenon_example_table,
                       phenomenon_report,
                       prior_svm_accuracy,
                       prompted_answers,
                       rates_by_model,
                       top_confusions,
)
