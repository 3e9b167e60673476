"""Faithfulness-through-Counterfactuals (Sia et al. 2022) on e-SNLI: notebooks 3x.

Pipeline (Fig. 2): an explanation z of a labelled pair (u, x, y) expresses a relation R(A, B); extract
A and B from z (regex templates of Tables 15–17, or few-shot priming), transform the hypothesis x into a
counterfactual x_cf (substitution), derive the counterfactual label y_cf (Table 2), and score the task
model's distribution on (u, x_cf) against y_cf: FTC-δ, FTC-K, FTC-W (§2.3).

    >>> from nli_lib.ftc import extract_regex, regex_transform, ftc_scores
    >>> e = extract_regex("protective gear is a piece of safety equipment", "entailment")
    >>> e.A, e.B
    ('protective gear', 'piece of safety equipment')
    >>> regex_transform("A man in safety equipment is working on a piece of metal .", e.A, "safety equipment",
    ...                 "entailment")[0].x_cf
    'A man in protective gear is working on a piece of metal .'

Modules: `logic` (Tables 1–2), `text` (stem-tolerant span substitution), `templates` (regex extraction),
`validity` (well-formedness checks every counterfactual passes before it is ok), `gold` (the hand-judged gold
set and the precision of the ok flag), `prompts` (Tables 13/14 priming rows), `fewshot` (prompts through the
cached LLM client; offline rule stand-ins), `pipeline` (the four extract × transform combinations),
`metrics` (FTC-δ/K/W, METEOR; Wilcoxon ρ is `nli_lib.evaluation.wilcoxon_rho`), `report` (the notebooks'
tables, records and scorecard frames), `analysis` (tables
of §2.4, §3.2, §3.3, worked examples, figures), `sensitivity` (§3.4, Tables 6/12, input-embedding
noise), `simulate` (LAS and LRA with an offline TF-IDF simulator of the task model).

What differs from the paper (stated in the notebooks too): text premises instead of e-SNLI-VE images;
no human-written counterfactuals or human labels on them (CAD revisions and counterfactuals from the
pair's other explanations stand in); no explanation generator (pathological explanations are borrowed
from pairs that share only one input); LAS/LRA simulators are TF-IDF models trained on e-SNLI test pairs
outside the evaluated sample; offline, the FSP steps are rule-based stand-ins, not GPT-Neo (set beside no
paper row; `rewriters`).
"""
from ..evaluation import wilcoxon_rho  # noqa: F401  (§3.3's ρ)
from . import paper  # noqa: F401  (its declarations, read by nli_lib.papers)
from .analysis import (
                       COUNTERFACTUAL_SAMPLE,
                       METRIC_SAMPLE,
                       PAPER_REWRITES,
                       QUICK_PIPELINES,
                       SENSITIVITY_SAMPLE,
                       attach_pair_scores,
                       balanced_sample,
                       cad_pairs,
                       cad_reference,
                       explanation_reference,
                       ftc_summary,
                       hit_rates,
                       metric_validation,
                       plot_agreement_boxes,
                       plot_ftc_distributions,
                       printed_examples,
                       printed_rewrites,
                       quality_long,
                       quality_rows,
                       quality_table,
                       rho_table,
                       score_rows,
                       with_paper,
                       worked_examples,
)
from .fewshot import FewShotRewriter, align_transform, exemplar_rows, rule_extract, shot_sets
from .gold import GOLD_PATH, gold_comparison, load_gold, precision_summary, precision_table
from .logic import SLOTS, CounterfactualTarget, counterfactual_targets, derived_label, relation
from .metrics import (
                       ALPHA,
                       OEWNForMeteor,
                       cost_matrix,
                       ftc_delta,
                       ftc_kl,
                       ftc_scores,
                       ftc_wasserstein,
                       kl_divergence,
                       meteor,
                       meteor_wordnet,
                       wasserstein,
)
from .pipeline import PIPELINES, all_pipelines, counterfactual_rows, pipeline_version, regex_transform
from .report import (
                       agreement_records,
                       checks_fired,
                       coverage_line,
                       coverage_table,
                       gold_precision_note,
                       gold_report,
                       judged_lines,
                       label_derivation_table,
                       las_lra_records,
                       meteor_score_frame,
                       meteor_tables,
                       precision_lines,
                       priming_pool_validity,
                       rewrite_summary,
                       rho_beside_paper,
                       sensitivity_records,
                       status_table,
                       table5_score_frame,
                       table6_beside_paper,
                       table6_score_frame,
                       table12_beside_paper,
                       table12_score_frame,
)
from .rewriters import (
                       TABLE4_REWRITER,
                       fsp_quantity,
                       is_table4_rewriter,
                       make_rewriter,
                       meteor_beside_paper,
                       paper_rewriter,
                       shots_note,
                       shots_used,
)
from .sensitivity import (
                       CONDITIONS,
                       explanation_similarity,
                       noise_label_flips,
                       noise_summary,
                       pathological_explanations,
                       perturbs_embeddings,
                       sensitivity_by_pipeline,
                       sensitivity_by_slot,
                       sensitivity_rho,
                       sensitivity_rows,
                       sensitivity_table,
                       simulated_rows,
)
from .simulate import Simulator, fit_simulator, las_lra_rows, las_lra_summary, las_rows, las_score, lra_score
from .templates import TEMPLATES, Extraction, extract_regex, template_table
from .validity import CHECKS, Validity, check_counterfactual

__all__ = [
    "CHECKS",
    "GOLD_PATH",
    "Validity",
    "check_counterfactual",
    "gold_comparison",
    "load_gold",
    "pipeline_version",
    "precision_summary",
    "precision_table",
    "ALPHA",
    "CONDITIONS",
    "COUNTERFACTUAL_SAMPLE",
    "METRIC_SAMPLE",
    "PAPER_REWRITES",
    "PIPELINES",
    "QUICK_PIPELINES",
    "SENSITIVITY_SAMPLE",
    "SLOTS",
    "TEMPLATES",
    "CounterfactualTarget",
    "Extraction",
    "FewShotRewriter",
    "OEWNForMeteor",
    "Simulator",
    "align_transform",
    "all_pipelines",
    "attach_pair_scores",
    "balanced_sample",
    "cad_pairs",
    "cad_reference",
    "cost_matrix",
    "counterfactual_rows",
    "counterfactual_targets",
    "derived_label",
    "exemplar_rows",
    "explanation_reference",
    "explanation_similarity",
    "extract_regex",
    "fit_simulator",
    "ftc_delta",
    "ftc_kl",
    "ftc_scores",
    "ftc_summary",
    "ftc_wasserstein",
    "hit_rates",
    "kl_divergence",
    "las_lra_rows",
    "las_lra_summary",
    "las_rows",
    "las_score",
    "lra_score",
    "meteor",
    "meteor_wordnet",
    "metric_validation",
    "noise_label_flips",
    "noise_summary",
    "pathological_explanations",
    "perturbs_embeddings",
    "TABLE4_REWRITER",
    "fsp_quantity",
    "is_table4_rewriter",
    "make_rewriter",
    "meteor_beside_paper",
    "paper_rewriter",
    "shots_note",
    "shots_used",
    "plot_ftc_distributions",
    "printed_examples",
    "printed_rewrites",
    "quality_long",
    "quality_rows",
    "quality_table",
    "regex_transform",
    "relation",
    "rho_table",
    "rule_extract",
    "score_rows",
    "sensitivity_by_pipeline",
    "sensitivity_by_slot",
    "sensitivity_rho",
    "sensitivity_rows",
    "sensitivity_table",
    "shot_sets",
    "simulated_rows",
    "template_table",
    "wasserstein",
    "wilcoxon_rho",
    "with_paper",
    "worked_examples",
    "plot_agreement_boxes",
    "agreement_records",
    "checks_fired",
    "coverage_line",
    "coverage_table",
    "gold_precision_note",
    "judged_lines",
    "gold_report",
    "label_derivation_table",
    "las_lra_records",
    "meteor_score_frame",
    "meteor_tables",
    "precision_lines",
    "priming_pool_validity",
    "rewrite_summary",
    "rho_beside_paper",
    "sensitivity_records",
    "status_table",
    "table5_score_frame",
    "table6_beside_paper",
    "table6_score_frame",
    "table12_beside_paper",
    "table12_score_frame",
]
