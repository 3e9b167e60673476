"""TaxiNLI (Joshi et al., 2020, "TaxiNLI: Taking a ride up the NLU hill"): taxonomy, statistics, error and
factor analysis, Bayesian estimates and layer-wise representations. Notebooks 50–54 call these modules:

    taxonomy         the 15 categories and 4 high-level groups as data; Figure 1, Tables 1 and 4
    dataset          Table 2, Figures 3 and 4, agreement of the annotators' inference with the gold label
    systems          shipped NB / ESIM / BERT predictions and our models on the MNLI-dev rows; Table 3, Figure 5
    factors          LDA and logistic regression of correctness (Figures 6 and 9)
    bayes            Beta posteriors of P(correct = 1 | category = 1) (Figure 8)
    representations  pooled per-layer states, t-SNE maps and separability scores (Figure 7)

Every analysis works on a per-example frame (`dataset.example_rows`, `systems.system_rows`) and returns a
DataFrame, so the examples behind any number are one filter away.
"""
from .bayes import BetaPosterior, bayesian_category_accuracy, beta_posterior, plot_bayes, prob_less  # noqa: F401
from .dataset import (annotation_agreement, annotation_confusion, categories_per_example,  # noqa: F401
                      category_correlation, category_label_counts, cohen_kappa, example_rows, genre_share,
                      plot_category_counts, plot_correlation, table2, top_correlations)
from .factors import compare_with_paper, design, factor_analysis, paper_significance, plot_coefficients, stars  # noqa: F401
from .systems import (MATCHED_GENRES, SHIPPED, accuracy_by_category, evaluation_sample, improvement_over,  # noqa: F401
                      paper_system, plot_accuracy_by_category, profile_classifiers, score_models, shipped_rows,
                      system_rows, table3)
from .taxonomy import (CATEGORIES, COLUMNS, GROUPS, NAMES, Category, categories_in, category,  # noqa: F401
                       group_indicators, indicators, plot_taxonomy, short, table1, table4, taxonomy_frame)
from . import representations  # noqa: F401
