"""What the shared layers know about FTC (Sia et al., notebooks 30-32): its systems, prompt module and outputs
catalog (the declarations `nli_lib.papers` loads without this package's code, so this module imports only the light
core). FTC has no `paper_models` section: its rewriter is the profile's `rewriter:` section.

OUTPUTS: name, paper reference and caption of every output, declared once (see nli_lib.catalog).

Captions hold `{fields}` that `nb.save(..., field=value)` fills: `n_pairs` (pairs in the sample), `shots`
(`rewriters.shots_note`: priming examples per FSP prompt), `fsp` (the FSP steps' name), `model` (the task
model), `tier`, `alpha`, `noise` (LRA noise scale), `wordnet` (METEOR's WordNet), `declared` (the paper
rewriter the profile declares), `label` (an NLI label).
"""
from ..catalog.spec import OutputSpec

REWRITERS = ("GPT-Neo2.7B", "GPT-Neo1.3B", "GPT2-xl")  # the few-shot rewriters (Table 4: Neo2.7B; Table 11)
SYSTEMS = REWRITERS  # the systems the paper prints numbers for, as printed (what a profile's `as:` may name)
PROMPTS = "nli_lib.ftc.prompts"  # registers the ftc.* prompt templates
PROFILE_SECTION = None  # its rewriter is the profile's `rewriter:` section

_CF_TEXT = ("premise", "hypothesis", "explanation", "x_cf")
_METEOR = ("METEOR of counterfactuals {what}; e-SNLI test, {n_pairs} pairs; FSP = {fsp}; {shots}; WordNet: {wordnet}")


def _meteor(name: str, what: str) -> OutputSpec:
    return OutputSpec(name, "ftc-table-4", _METEOR.replace("{what}", what))


OUTPUTS: dict[str, list[OutputSpec]] = {
    "30_ftc_counterfactuals": [
        OutputSpec("table-2-label-derivation", "ftc-table-2",
                   "Counterfactual label derivation (Tables 1–2), as implemented in nli_lib.ftc.logic"),
        OutputSpec("regex-hit-rate-rows", "ftc-table-15",
                   "Regex extraction + transform per e-SNLI dev explanation (explanation_1 of {n_pairs} pairs; "
                   "the hit-rate tables count all three explanations)", kind="records",
                   filters=("label", "template", "extracted", "failure_kind"),
                   text=("hypothesis", "explanation", "x_cf[E]", "x_cf[C]", "x_cf[N[A]]", "x_cf[N[B]]", "failure")),
        OutputSpec("regex-coverage-per-label", "ftc-table-15",
                   "Regex extraction and transform coverage per label, e-SNLI dev ({n_pairs} pairs × 3 explanations)"),
        *[OutputSpec(f"regex-hit-rates-{short}", ref,
                     f"Per-template hit rates ({label}): selected = chosen template, matched = template matches at all")
          for short, label, ref in (("E", "entailment", "ftc-table-15"), ("C", "contradiction", "ftc-table-16"),
                                    ("N", "neutral", "ftc-table-17"))],
        OutputSpec("regex-failures-sample", "ftc-table-15",
                   "Sample of regex failures (no template / span not in hypothesis), e-SNLI dev"),
        OutputSpec("table-13-extraction-examples", "ftc-table-13",
                   "Table 13 rows: gold spans vs regex and FSP extraction"),
        OutputSpec("table-14-transformation-examples", "ftc-table-14",
                   "Table 14 rows: gold counterfactuals vs regex and FSP transformation (METEOR vs the gold row)"),
        OutputSpec("paper-rewrites", "ftc-table-3", "The paper's printed counterfactuals vs each pipeline's",
                   kind="records", filters=("pipeline", "source", "slot", "ok", "exact"),
                   text=("hypothesis", "explanation", "x_cf", "paper_x_cf")),
        OutputSpec("paper-rewrites-meteor", "ftc-table-3",
                   "METEOR of each pipeline's counterfactual against the paper's printed rewrite (9 slots; "
                   "failures = 0)"),
        OutputSpec("counterfactual-coverage", "ftc-table-4",
                   "Share of counterfactual slots produced per pipeline (e-SNLI test, {n_pairs} pairs, "
                   "explanation_1; {shots})"),
        OutputSpec("fsp-shots", "ftc-table-4",
                   "Priming examples per FSP prompt (paper: 20), per pipeline and step; `cut`: prompts that left "
                   "examples out to fit the model's context (prompt + max_tokens)"),
        OutputSpec("counterfactual-status", "ftc-table-4",
                   "Counterfactual slots per pipeline by status (e-SNLI test, {n_pairs} pairs, explanation_1)"),
        OutputSpec("malformed-checks", "ftc-table-4",
                   "How often each well-formedness check fires on malformed counterfactuals (a row may fire "
                   "several)"),
        OutputSpec("gold-precision", "ftc-table-4",
                   "Precision of the ok flag against the team's hand-judged gold set (offline generators; Wilson "
                   "95% CI)"),
        OutputSpec("gold-comparison", "ftc-table-4",
                   "Gold counterfactuals: judged text, current text, current status and the judgement",
                   kind="records", filters=("pipeline", "label", "slot", "ok", "judged_correct", "stale"),
                   text=("premise", "hypothesis", "explanation", "counterfactual", "current", "judge_note")),
        OutputSpec("priming-pool-validity", "ftc-table-14",
                   "Regex-produced counterfactuals in the priming pool per label, and how many pass the checks "
                   "(only those prime)"),
        OutputSpec("counterfactuals-meteor", "ftc-table-4",
                   "Counterfactuals of every pipeline from explanation_1 (e-SNLI test, {n_pairs} pairs), the "
                   "references built from explanations 2 and 3, and METEOR per reference", kind="records",
                   filters=("pipeline", "label", "slot", "ok", "template"),
                   text=(*_CF_TEXT, "explanation_2", "x_cf from explanation_2", "explanation_3",
                         "x_cf from explanation_3", "reason")),
        _meteor("table-4-meteor-vs-other-explanations",
                "vs the same pipeline's counterfactuals from explanation_2/3 (failures = 0)"),
        _meteor("table-4-meteor-vs-other-explanations-produced", "as above, produced counterfactuals only"),
        _meteor("table-4-meteor-vs-fsp-fsp", "vs the fsp-fsp counterfactual (failures = 0)"),
        _meteor("table-4-meteor-vs-hypothesis", "vs the original hypothesis (failures = 0)"),
        OutputSpec("table-4-beside-paper", "ftc-table-11",
                   "METEOR per pipeline and slot: ours (vs other explanations' counterfactuals) beside the "
                   "paper's (vs human rewrites) for the rewriter the profile declares ({declared}); {shots}"),
    ],
    "31_ftc_metric": [
        OutputSpec("ftc-scores-by-pipeline", "ftc-table-12",
                   "FTC on the pairs' own explanations (explanation_1), e-SNLI test ({n_pairs} pairs), α={alpha}"),
        OutputSpec("table-3-worked-examples", "ftc-table-3",
                   "Counterfactual rewrites and model predictions (fsp-fsp; task model {model}; text premise u)"),
        OutputSpec("las-lra-own-explanations", "ftc-table-5",
                   "LAS / LRA of explanation_1 on the sample ({n_pairs} pairs); noise scale {noise}"),
        OutputSpec("table-5-rho-cad-all-pipelines", "ftc-table-5",
                   "Wilcoxon rank-sum ρ=U/(n1 n0), model agrees vs disagrees on CAD human counterfactuals; FTC "
                   "from each pipeline"),
        OutputSpec("table-5-rho-explanation2-all-pipelines", "ftc-table-5",
                   "Wilcoxon ρ, model agrees vs disagrees with the derived label on the counterfactual from "
                   "explanation_2 (not scored: the reference is built by the same rewriter and task model as the "
                   "scores it validates)"),
        OutputSpec("table-5-beside-paper", "ftc-table-5",
                   "ρ (fsp-fsp) for both references beside the paper's Table 5 (filtered) and Table 10 "
                   "(unfiltered)"),
        OutputSpec("fig-ftc-by-agreement", "ftc-table-5",
                   "FTC-K by agreement group (model prediction on the reference counterfactual = reference label)",
                   kind="figure"),
        OutputSpec("ftc-scored-counterfactuals", "ftc-table-5",
                   "FTC per counterfactual (every pipeline, explanation_1), with the agreement groups of Table 5; "
                   "e-SNLI test, {n_pairs} CAD-revised pairs", kind="records",
                   filters=("pipeline", "label", "slot", "ok", "pred_cf", "agree CAD", "agree explanation_2"),
                   text=(*_CF_TEXT, "CAD x_cf", "explanation_2 x_cf", "reason")),
        OutputSpec("las-lra-per-pair", "ftc-table-5",
                   "Simulator labels (x+e, x, e), LAS_i = Δ_i, leakage and LRA_i per pair", kind="records",
                   filters=("label", "task_pred", "leak", "delta"), text=("premise", "hypothesis", "explanation_1")),
    ],
    "32_ftc_sensitivity": [
        OutputSpec("table-6-sensitivity", "ftc-table-6",
                   "Sensitivity: FTC (fsp-fsp) and text similarity per condition; e-SNLI test, {n_pairs} pairs; "
                   "α={alpha}"),
        OutputSpec("table-6-beside-paper", "ftc-table-6",
                   "Ours (borrowed pathological explanations, text premises) beside the paper's Table 6 (generator "
                   "with withheld inputs)"),
        OutputSpec("table-12-sensitivity-by-pipeline", "ftc-table-12",
                   "FTC-W/δ/K per condition and extract-transform pipeline (tier {tier}, task model {model})"),
        OutputSpec("table-12-beside-paper", "ftc-table-12",
                   "Table 12 values: ours beside the paper's (GPT-Neo2.7B as FSP, CLIP task model)"),
        OutputSpec("sensitivity-by-label", "ftc-table-6",
                   "FTC-δ/K/W (fsp-fsp) per condition and counterfactual slot, with coverage"),
        OutputSpec("sensitivity-rho", "ftc-table-6",
                   "Wilcoxon ρ, faithful (x,u,y) vs each pathological condition, per metric and slot (fsp-fsp)"),
        OutputSpec("fig-ftc-k-by-condition", "ftc-table-6",
                   "Distribution of FTC-K per counterfactual slot and explanation condition (fsp-fsp)",
                   kind="figure"),
        OutputSpec("fig-ftc-w-by-condition", "ftc-table-6",
                   "Distribution of FTC-W per counterfactual slot and explanation condition (fsp-fsp)",
                   kind="figure"),
        OutputSpec("noise-flips-vs-ftc", "ftc-table-6",
                   "Label flip rate under input-embedding noise and FTC-K of robust vs flipped pairs"),
        OutputSpec("noise-flips", "ftc-table-6",
                   "Task-model prediction per pair with and without Gaussian noise on its input embeddings",
                   kind="records", filters=("label", "scale", "pred_clean", "pred_noisy", "flipped"),
                   text=("premise", "hypothesis")),
        OutputSpec("sensitivity-counterfactuals", "ftc-table-12",
                   "Counterfactuals and FTC per pair, explanation condition, pipeline and slot (e-SNLI test, "
                   "{n_pairs} pairs)", kind="records",
                   filters=("condition", "pipeline", "label", "slot", "ok", "pred_cf"),
                   text=("premise", "hypothesis", "explanation", "donor_hypothesis", "x_cf", "reason")),
        OutputSpec("sensitivity-las-lra", "ftc-table-6",
                   "Per pair and condition: simulator labels, LAS_i, LRA_i, METEOR/cosine of the explanation",
                   kind="records", filters=("condition", "label", "task_pred", "leak", "delta"),
                   text=("hypothesis", "explanation")),
    ],
}
