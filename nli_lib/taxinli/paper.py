"""What the shared layers know about TaxiNLI (Joshi et al., notebooks 50-54): its systems, profile section and
outputs catalog (the declarations `nli_lib.papers` loads without this package's code, so this module imports only
the light core). TaxiNLI has no prompts.

OUTPUTS: name, paper reference and caption of every output, declared once (see nli_lib.catalog).
"""
from typing import Literal

from ..catalog.spec import OutputSpec
from ..papers import Section, Setting

SYSTEMS = ("NB", "ESIM", "BERT", "RoBERTa")  # the systems the paper prints numbers for (what `as:` may name)
PROMPTS = None
# Figures whose numbers the paper does not print (in its text, captions or extracted labels): ref -> what the figure
# shows and where its numbers are printed instead, if anywhere. No paper value can be filed for what is only drawn
# (never read off a plot); the scorecard lists these (`nli_lib.paper_values.unprinted`). "prints no number": the
# figure has no paper value; "prints only ...": the values filed under it are those, the rest is only drawn.
UNPRINTED = {
    "taxinli-fig-2": "prints no number: category-wise Fleiss' κ and IOU bars; §3.1.1's text gives the averages "
                     "(taxinli-sec-3.1.1)",
    "taxinli-fig-3": "prints only the caption's gold-label split of taxonomic (9/7/3); the other categories' bars "
                     "are only drawn",
    "taxinli-fig-4": "prints no number: the correlation matrix of the categories",
    "taxinli-fig-5": "prints no number: accuracy given each category per system; §4.1's text gives the examples "
                     "evaluated, 7.7k (taxinli-sec-4.1)",
    "taxinli-fig-6": "prints only the caption's significance stars of the LR coefficients (BERT); the LDA and LR "
                     "coefficients are only drawn",
    "taxinli-fig-8": "prints no number: the Bayesian estimate of P(correct | category) per system",
    "taxinli-fig-9": "prints only the caption's significance stars of the LR coefficients (RoBERTa); the LDA and LR "
                     "coefficients are only drawn",
}
PROFILE_SECTION = Section(
    "Models of TaxiNLI (notebooks 51-54) in the paper tier, beyond the hub models in extra_models.", {
        "mnli_finetune": Setting(
            "encoders to fine-tune on MNLI train as the paper did (§4.1): paper system (BERT, RoBERTa) -> hub id or "
            "folder, e.g. {BERT: google-bert/bert-base-uncased, RoBERTa: FacebookAI/roberta-large}; each is set "
            "beside that system as 'same architecture' (our fine-tune, not the paper's model: never graded); needs "
            "the online-only MultiNLI archive; {}: none", {}, dict[Literal["BERT", "RoBERTa"], str], models="map"),
        "mnli_epochs": Setting("MNLI fine-tuning epochs (Devlin et al.'s GLUE setting)", 3, int, bounds={"ge": 1}),
        "mnli_lr": Setting("MNLI fine-tuning peak learning rate (AdamW)", 2e-5, float, bounds={"gt": 0}),
        "mnli_batch_size": Setting("MNLI fine-tuning pairs per step", 32, int, bounds={"ge": 1}),
    })

_T = "taxinli-"

OUTPUTS: dict[str, list[OutputSpec]] = {
    "50_taxinli_dataset": [
        OutputSpec("fig-1-taxonomy", _T + "fig-1", "the TaxiNLI taxonomy drawn from nli_lib.taxinli.taxonomy",
                   kind="figure"),
        OutputSpec("fig-1-taxonomy", _T + "fig-1",
                   "the taxonomy as a table: level, group, category, file column, definition"),
        OutputSpec("table-1-examples", _T + "table-1",
                   "the paper's Table 1 examples looked up in taxinli10k.tsv with their annotated categories"),
        OutputSpec("table-2-statistics", _T + "table-2",
                   "TaxiNLI statistics from the released files beside the paper's Table 2 (subject/object labels "
                   "of the paper swapped, see note)"),
        OutputSpec("table-2-neutral-question-nesting", _T + "table-2",
                   "how the Questionnaire 2 answers nest (evidence that the paper's Table 2 swaps 'same subject' "
                   "and 'same object')"),
        OutputSpec("table-2-categories-per-example", _T + "table-2",
                   "number of categories per pair, by gold label (the distribution behind 'avg. categories per "
                   "datapoint')"),
        OutputSpec("fig-3-category-counts", _T + "fig-3",
                   "number of examples annotated with each category, split by gold label", kind="figure"),
        OutputSpec("fig-3-category-counts", _T + "fig-3", "counts behind Figure 3"),
        OutputSpec("fig-3-taxonomic-split", _T + "fig-3",
                   "gold-label split of the taxonomic examples in all rows, MNLI-dev rows and MNLI-train rows "
                   "beside the Figure 3 caption"),
        OutputSpec("fig-4-category-correlation", _T + "fig-4", "correlation matrix between the taxonomic categories",
                   kind="figure"),
        OutputSpec("fig-4-category-correlation", _T + "fig-4", "correlation matrix behind Figure 4 (phi coefficients)"),
        OutputSpec("fig-4-genre-share", _T + "fig-4",
                   "share of co-annotated pairs from the telephone genre (paper: nearly 25% for boolean-quantifier)"),
        OutputSpec("annotator-inference-accuracy", _T + "fig-2",
                   "agreement of the annotators' own inference label with the MNLI gold label (paper: 86.7% "
                   "average inference accuracy); not Figure 2's inter-annotator kappa, which needs unreleased "
                   "per-annotator labels"),
        OutputSpec("table-4-other-categorizations", _T + "table-4",
                   "ANLI and GLUE diagnostic categories by level (transcribed from the paper)"),
        OutputSpec("examples", _T + "table-2",
                   "every TaxiNLI pair: gold and annotated label, genre, MNLI split, categories and groups, "
                   "neutral-question answers", kind="records",
                   filters=("label", "annotated_label", "annotator_agrees", "genre", "mnli_split", "groups",
                            "n_categories", "same_general_topic", "same_subject", "same_object"),
                   text=("premise", "hypothesis", "categories")),
    ],
    "51_taxinli_error_analysis": [
        OutputSpec("stand-ins", _T + "table-3",
                   "our offline systems' training data and held-out accuracy; main stand-in for BERT: {main}"),
        OutputSpec("table-3-accuracy", _T + "table-3",
                   "accuracy on the TaxiNLI ∩ MNLI-dev rows by matched / mismatched genre (Wilson 95% CI); paper "
                   "values are on the full MNLI dev sets; relation says how a row relates to the paper's column"),
        OutputSpec("table-3-full-mnli-dev", _T + "table-3",
                   "accuracy on the full MNLI dev matched / mismatched sets, as the paper's Table 3 (Wilson 95% CI)"),
        OutputSpec("fig-5-accuracy-by-category", _T + "fig-5",
                   "per category c: #(c=1, correct=1)/#(c=1) per system, Wilson 95% CI", kind="figure"),
        OutputSpec("fig-5-accuracy-by-category", _T + "fig-5",
                   "per-category accuracy behind Figure 5 with n and Wilson 95% CI"),
        OutputSpec("fig-5-accuracy-by-category-common-rows", _T + "fig-5",
                   "per-category accuracy of every system on the rows our models were scored on"),
        OutputSpec("fig-5-improvement-over-nb", _T + "fig-5",
                   "per-category accuracy minus NB's (shipped NB predictions) on the same examples, and its rank "
                   "among the 15 categories (1 = largest gain)", index=True),
        OutputSpec("fig-5-paper-claims", _T + "fig-5",
                   "the paper's §4.1 readings of Figure 5 beside the ranks of the claimed categories by gain over NB "
                   "(shipped predictions, paired 95% CI)"),
        OutputSpec("predictions", _T + "fig-5",
                   "every TaxiNLI ∩ MNLI-dev pair with each system's prediction and correctness (shipped "
                   "NB/ESIM/BERT; ours)", kind="records",
                   filters=("label", "split", "genre", "groups", "n_categories", "n_paper_systems_right",
                            "correct *"),
                   text=("premise", "hypothesis", "categories")),
    ],
    "52_taxinli_factor_analysis": [
        OutputSpec("fig-6-factor-coefficients", _T + "fig-6",
                   "LDA and logistic-regression coefficients of correctness on the 15 categories and z-scored "
                   "lengths (characters), per system (statsmodels Wald p-values, stars * <0.05 ** <0.01 *** <0.001)"),
        OutputSpec("fig-6-bert", _T + "fig-6",
                   "LDA and LR coefficients modelling the correctness of BERT's predictions (shipped predictions, "
                   "all TaxiNLI ∩ MNLI-dev rows); our LR stars beside the paper's (grey)", kind="figure"),
        OutputSpec("fig-6-significance-vs-paper", _T + "fig-6",
                   "our LR significance stars beside the paper's list of significant coefficients (Fig. 6 BERT, "
                   "Fig. 9 RoBERTa); relation says whether ours comes from the paper's predictions, the same "
                   "architecture or a stand-in"),
        OutputSpec("fig-6-length-unit", _T + "fig-6",
                   "agreement of our LR significance with the paper's list when lengths are measured in characters "
                   "vs whitespace words (per system with a paper counterpart)"),
        OutputSpec("fig-6-all-systems", _T + "fig-6",
                   "LDA and LR coefficients of correctness for every system on one x-axis (shipped NB/ESIM/BERT on "
                   "all rows; ours on the rows they were scored on); stars: LR Wald p-values", kind="figure"),
        OutputSpec("fig-9-roberta", _T + "fig-9",
                   "LDA and LR coefficients modelling the correctness of RoBERTa-large's predictions", kind="figure"),
        OutputSpec("fig-6-factor-coefficients-with-label", _T + "fig-6",
                   "LR/LDA coefficients with gold-label dummies added as controls"),
        OutputSpec("correctness-fits", _T + "fig-6",
                   "per system and example: categories, lengths, correctness and the logistic regression's fitted "
                   "P(correct)", kind="records",
                   filters=("system", "label", "split", "groups", "n_categories", "correct"),
                   text=("premise", "hypothesis", "categories")),
    ],
    "53_taxinli_bayesian": [
        OutputSpec("fig-8-bayesian-network", _T + "fig-8",
                   "Appendix B Bayesian network (categories -> correct, tabular CPD, Beta(1,1) priors): "
                   "P(correct=1 | category=1) per system with 95% credible interval and the share of the answer "
                   "from unseen parent configurations"),
        OutputSpec("fig-8-bayesian-network", _T + "fig-8",
                   "Figure 8: the Bayesian network's P(correct=1 | category=1) per system, 95% credible intervals",
                   kind="figure"),
        OutputSpec("fig-8-conditional-posterior", _T + "fig-8",
                   "Beta(1,1)-prior posterior of the conditional frequency P(correct=1 | category=1) per system: "
                   "mean, 95% credible interval, P(below accuracy without the category)"),
        OutputSpec("fig-8-conditional-posterior", _T + "fig-8",
                   "posterior mean and 95% credible interval of the conditional frequency P(correct=1 | "
                   "category=1) per system", kind="figure"),
        OutputSpec("fig-8-prob-below-rest", _T + "fig-8",
                   "posterior P(accuracy with category < accuracy without it) per system", index=True),
        OutputSpec("fig-8-paper-claims", _T + "fig-8",
                   "the paper's Appendix B readings beside the ranks of the claimed categories (shipped "
                   "predictions; gains over NB with paired 95% CI)"),
        OutputSpec("bn-cells", _T + "fig-8",
                   "Appendix B network: per system and seen parent configuration, n, correct, posterior mean of "
                   "P(correct), weight under independent roots, share of examples", kind="records",
                   filters=("system", "n_categories"), text=("categories",)),
    ],
    "54_taxinli_representations": [
        OutputSpec("fig-7-separability", _T + "fig-7",
                   "per model, layer and target: linear-probe ROC AUC (5-fold CV on 64 principal components; 0.5 "
                   "= chance; 95% Hanley-McNeil interval) and silhouette of members vs rest in the t-SNE plane"),
        OutputSpec("fig-7-tsne-grid-{model}", _T + "fig-7",
                   "t-SNE of max-pool+[CLS] states of {source} at its first, middle and last layer (of "
                   "{first}-{last}): a row coloured by the gold NLI label, then one per category colouring (its six "
                   "most frequent values coloured, the rarer as 'other')", kind="figure"),
        OutputSpec("fig-7-best-layers-{model}", _T + "fig-7",
                   "{source}: each high-level group coloured at the layer where its linear-probe ROC AUC is highest",
                   kind="figure"),
        OutputSpec("fig-7-best-layer-per-category", _T + "fig-7",
                   "per model and target: best layer by linear-probe AUC with its 95% interval low end, whether it "
                   "is above chance, the layers within its interval, earliest layer within 95% of the best gain, "
                   "first/last-layer AUC"),
        OutputSpec("fig-7-best-layer-per-category-silhouette", _T + "fig-7",
                   "per model and target: best layer by silhouette in the t-SNE plane and the earliest layer within "
                   "95% of it (the visual reading of Figure 7)"),
        OutputSpec("fig-7-probe-auc-by-layer", _T + "fig-7",
                   "linear-probe ROC AUC per layer for the NLI label (dashed) and the four high-level groups",
                   kind="figure"),
        OutputSpec("fig-7-clustering-vs-accuracy", _T + "fig-7",
                   "Spearman correlation across categories between last-layer probe AUC and accuracy of the same "
                   "model on the same sample"),
        OutputSpec("tsne-points", _T + "fig-7",
                   "t-SNE coordinates per model, layer and example with the pair, gold label, categories and the "
                   "main stand-in's prediction", kind="records",
                   filters=("model", "layer", "label", "linguistic", "connectives", "deductions", "knowledge",
                            "correct *"),
                   text=("premise", "hypothesis", "categories")),
    ],
}
