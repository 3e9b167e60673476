"""TaxiNLI (Joshi et al., 2020, "TaxiNLI: Taking a ride up the NLU hill"): taxonomy, statistics, error and
factor analysis, Bayesian estimates and layer-wise representations. Notebooks 50–54 call these modules:

    taxonomy         the 15 categories and 4 high-level groups as data; Figure 1, Tables 1 and 4
    dataset          Table 2 (`table2`), Figures 3 and 4, the annotators' inference vs the gold label
    systems          shipped NB / ESIM / BERT predictions and our models on the MNLI-dev rows; Table 3, Figure 5
    factors          LDA and logistic regression of correctness (Figures 6 and 9)
    bayes            the Appendix B network's P(correct = 1 | category = 1) and Beta posteriors (Figure 8)
    representations  pooled per-layer states, t-SNE maps and separability scores (Figure 7)
    scores           scorecard entries (our numbers beside the paper's)

Every analysis works on a per-example frame (`dataset.example_rows`, `systems.system_rows`) and returns a
DataFrame, so the examples behind any number are one filter away.
"""
from . import representations  # noqa: F401
from .bayes import (  # noqa: F401
                    BN_COLUMNS,
                    CONDITIONAL_COLUMNS,
                    BetaPosterior,
                    bayesian_category_accuracy,
                    beta_posterior,
                    bn_category_accuracy,
                    bn_cpt,
                    plot_bayes,
                    prob_less,
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
                    join_names,
                    label_split,
                    neutral_nesting,
                    plot_category_counts,
                    plot_correlation,
                    table2,
                    top_correlations,
)
from .factors import (  # noqa: F401
                    LENGTH_UNITS,
                    compare_with_paper,
                    correctness_records,
                    design,
                    factor_analysis,
                    length_unit_comparison,
                    paper_significance,
                    plot_coefficients,
                    significance_scores,
                    stars,
)
from .systems import (  # noqa: F401
                    MATCHED_GENRES,
                    SHIPPED,
                    accuracy_by_category,
                    counterpart,
                    declared_system,
                    evaluation_sample,
                    improvement_over,
                    model_label,
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
