"""TaxiNLI (Joshi et al., 2020, "TaxiNLI: Taking a ride up the NLU hill"): taxonomy, statistics, error and
factor analysis, Bayesian estimates and layer-wise representations. Notebooks 50–54 call these modules:

    taxonomy         the 15 categories and 4 high-level groups as data; Figure 1, Tables 1 and 4
    dataset          Table 2 (`table2`), Figures 3 and 4, the annotators' inference vs the gold label
    systems          shipped NB / ESIM / BERT predictions and our models on the MNLI-dev rows; Table 3, Figure 5
    standin          the MNLI-domain stand-in (MiniLM on the TaxiNLI MNLI-train rows + e-SNLI dev)
    mnli             the full MNLI dev sets (Table 3 as the paper) and fine-tuning on MNLI train
    evaluation       our systems of notebooks 51-54 (on the profile's line-up) and what each stands for;
                     `evaluate` scores them
    claims           the paper's readings of Figures 5 and 8, confronted with computed ranks
    factors          LDA and logistic regression of correctness (Figures 6 and 9)
    bayes            the Appendix B network's P(correct = 1 | category = 1) and Beta posteriors (Figure 8)
    representations  pooled per-layer states, t-SNE maps and separability scores (Figure 7)

Every analysis works on a per-example frame (`dataset.example_rows`, `systems.system_rows`) and returns a
DataFrame, so the examples behind any number are one filter away.
"""
from . import mnli, paper, representations, standin  # noqa: F401
from .bayes import (  # noqa: F401
    BN_COLUMNS,
    CONDITIONAL_COLUMNS,
    BetaPosterior,
    bayesian_category_accuracy,
    beta_posterior,
    bn_beside_conditional,
    bn_category_accuracy,
    bn_cpt,
    plot_bayes,
    prior_shift,
    prob_less,
)
from .claims import (  # noqa: F401
    PAPER_CLAIMS,
    Claim,
    category_gains,
    check_claims,
    gain_table,
)
from .dataset import (  # noqa: F401
    INFERENCE_SUBSET,
    annotation_agreement,
    annotation_confusion,
    categories_per_example,
    category_correlation,
    category_label_counts,
    cohen_kappa,
    example_records,
    example_rows,
    genre_share,
    genre_share_scores,
    genre_shares,
    inference_accuracy_score,
    join_names,
    label_split,
    neutral_nesting,
    plot_category_counts,
    plot_correlation,
    table2,
    taxonomic_split,
    taxonomic_split_scores,
    top_correlations,
)
from .evaluation import (  # noqa: F401
    Evaluation,
    Systems,
    evaluate,
    our_systems,
    stand_in_table,
)
from .factors import (  # noqa: F401
    LENGTH_UNITS,
    STAR_KEY,
    agreement_summary,
    compare_with_paper,
    correctness_records,
    design,
    factor_analysis,
    length_unit_comparison,
    paper_significance,
    plot_coefficients,
    significance_scores,
    star_table,
    stars,
    stars_with_label,
)
from .systems import (  # noqa: F401
    FULL_DEV,
    MATCHED_GENRES,
    OVERLAP,
    SHIPPED,
    SHIPPED_MODELS,
    accuracy_by_category,
    common_rows,
    counterpart,
    declared_system,
    evaluation_sample,
    improvement_over,
    model_label,
    overall_accuracy,
    pair_records,
    plot_accuracy_by_category,
    prediction_records,
    profile_classifiers,
    score_models,
    shipped_rows,
    stand_ins,
    stratified_sample,
    system_rows,
    table3,
    table3_scores,
)
from .taxonomy import (  # noqa: F401
    CATEGORIES,
    COLUMNS,
    GROUPS,
    NAMES,
    Category,
    categories_in,
    category,
    group_indicators,
    indicators,
    plot_taxonomy,
    short,
    table1,
    table4,
    taxonomy_frame,
)
