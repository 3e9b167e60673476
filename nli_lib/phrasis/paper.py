"""What the shared layers know about PhrasIS (Apaolaza et al., notebooks 20-22): its systems, prompt module, profile
section and outputs catalog (the declarations `nli_lib.papers` loads without this package's code, so this module
imports only the light core).

OUTPUTS: name, paper reference and caption of every output, declared once (see nli_lib.catalog).
"""
from typing import Mapping

from ..catalog.spec import OutputSpec
from ..papers import Section, Setting, entry

TABLE2 = {  # Table 2: printed name -> hub id (fine-tuned on PhrasIS in the paper tier)
    "ModernBERT B": "answerdotai/ModernBERT-base", "ModernBERT L": "answerdotai/ModernBERT-large",
    "ALBERT v2 B": "albert/albert-base-v2", "ALBERT v2 L": "albert/albert-large-v2",
    "RoBERTa B": "FacebookAI/roberta-base", "RoBERTa L": "FacebookAI/roberta-large",
    "DeBERTa v3 B": "microsoft/deberta-v3-base", "DeBERTa v3 L": "microsoft/deberta-v3-large",
    "OPT 125": "facebook/opt-125m", "OPT 350": "facebook/opt-350m",
    "Pythia 160": "EleutherAI/pythia-160m", "Pythia 410": "EleutherAI/pythia-410m",
    "GPT-2 S": "openai-community/gpt2", "GPT-2 M": "openai-community/gpt2-medium",
    "BART B": "facebook/bart-base", "BART L": "facebook/bart-large",
    "Flan-T5 S": "google/flan-t5-small", "Flan-T5 B": "google/flan-t5-base",
}
SYSTEMS = tuple(TABLE2)  # the systems the paper prints numbers for, as printed (what a profile's `as:` may name)
PROMPTS = "nli_lib.phrasis.prompts"  # registers the phrasis.* prompt templates
# Figures whose numbers the paper does not print (in its text, captions or extracted labels): ref -> what the figure
# shows and where its numbers are printed instead, if anywhere. No paper value can be filed for what is only drawn
# (never read off a plot); the scorecard lists these (`nli_lib.paper_values.unprinted`). "prints no number": the
# figure has no paper value; "prints only ...": the values filed under it are those, the rest is only drawn.
UNPRINTED = {
    "phrasis-fig-2": "prints no number: raw-count and normalised contingency matrices of DeBERTa v3 base on Test "
                     "Positives (All)",
    "phrasis-fig-3": "prints no number: the same matrices for DeBERTa v3 large",
}


def _old_layout(section: Mapping, prefix: str) -> list[str]:
    """The section's models written as a mapping (the layout before `as:`): say how to write them now."""
    if isinstance(section.get("models"), Mapping):
        return [f"{prefix}models: a list of models now, each declaring its Table 2 row with `as:`. Fix: write e.g. "
                f"models: [{{id: microsoft/deberta-v3-base, as: DeBERTa v3 B}}]"]
    return []


PROFILE_SECTION = Section("Models and search budget of the PhrasIS paper (notebooks 20-22) in the paper tier.", {
    "models": Setting("models to fine-tune; `as:` a Table 2 name makes it that row (default: all 18, each declared)",
                      [entry(i, n) for n, i in TABLE2.items()], models="list",
                      shown=f"all {len(TABLE2)} of Table 2, each declared (nli_lib/resources/profiles/paper.yaml "
                            f"lists them)"),
    "search_trials": Setting("Optuna trials per model and training unit (the paper: up to 150)", 0, int,
                             bounds={"ge": 0}),
    "search_storage": Setting("Optuna storage (journal file or database URL) of a finished `nli-companion sweep`: "
                              "notebooks 20-22 read each unit's best setting there instead of searching", None,
                              str | None),
    "search_study": Setting("study name prefix of that sweep (`nli-companion sweep --study`)", "phrasis", str),
    "epochs": Setting("fine-tuning epochs of each model when no search runs", 3, int, bounds={"ge": 1}),
}, check=_old_layout)

# the paper's coherence tables: number -> (split, metric); nli_lib.phrasis.report re-exports it
COHERENCE_TABLES = {4: ("seen", "SoftCoh"), 5: ("seen", "HardCoh"), 6: ("unseen", "SoftCoh"), 7: ("unseen", "HardCoh")}
_SPLIT_ROWS = {"seen": "validation", "unseen": "test"}


def _coherence_tables() -> list[OutputSpec]:
    specs = []
    for number, (split, metric) in COHERENCE_TABLES.items():
        ref = f"phrasis-table-{number}"
        specs += [
            OutputSpec(f"table-{number}", ref, f"{metric} on the {split} split ({_SPLIT_ROWS[split]} EQUI/FORW/BACK "
                       "pairs and their reversals), one model per scenario; n_pairs per scenario"),
            OutputSpec(f"table-{number}-beside-paper", ref,
                       f"our {metric} ({split}) beside the paper's best / median / worst per scenario; models "
                       "coherent by construction are shown but never ranked as our best"),
            OutputSpec(f"table-{number}-paper", ref, f"the paper's Table {number} as printed"),
        ]
    return specs


OUTPUTS: dict[str, list[OutputSpec]] = {
    "20_phrasis_baselines": [
        OutputSpec("scenario-sizes", "companion-table-20",
                   "PhrasIS pairs per scenario: train, 80/20 split, test, and reversible (EQUI/FORW/BACK) pairs"),
        OutputSpec("paper-examples-in-data", "phrasis-table-1",
                   "the paper's example pairs found in PhrasIS (as printed, else after normalising case, "
                   "punctuation, articles and spaces), with their gold labels"),
        OutputSpec("per-scenario-evidence", "companion-table-29",
                   "model-track cells of the paper's Tables 4-7 whose A score lies outside [I, H]: impossible "
                   "with one model per track, so the paper trained one model per scenario"),
        OutputSpec("model-selection", "companion-table-21",
                   "candidate settings scored on the 80/20 validation split, and the final re-training on all "
                   "of train (one model per scenario)"),
        OutputSpec("table-3", "phrasis-table-3",
                   "weighted F-score on PhrasIS test, per track (Positives / All) and source (I / H / A)"),
        OutputSpec("test-predictions", "phrasis-table-3",
                   "every test pair with each model's prediction on each scenario, errors first",
                   kind="records", filters=("model", "track", "scenario", "source", "label", "pred", "correct"),
                   text=("phrase1", "phrase2")),
        OutputSpec("table-3-paper", "phrasis-table-3", "the paper's Table 3 as printed"),
        OutputSpec("table-3-beside-paper", "phrasis-table-3",
                   "our models' weighted F beside the paper's best / median / worst per scenario"),
        OutputSpec("svm-accuracy-vs-prior", "phrasis-table-3",
                   "feature-SVM test accuracy beside the best prior SVM accuracy the paper cites (§4)"),
        OutputSpec("table-2", "phrasis-table-2", "parameters of the paper's models as loaded here, beside Table 2"),
        OutputSpec("fig-2-contingency", "phrasis-fig-2",
                   "raw and normalised contingency matrices of {model} on Test Positives (All)", kind="figure"),
        OutputSpec("fig-3-contingency", "phrasis-fig-3",
                   "raw and normalised contingency matrices of {model} on Test Positives (All)", kind="figure"),
    ],
    "21_phrasis_coherence": [
        OutputSpec("coherence-summary", "companion-table-28",
                   "SoftCoh, HardCoh and accuracy on the original and reversed pairs, per model, split and scenario"),
        OutputSpec("coherence-pairs", "phrasis-table-7",
                   "every EQUI/FORW/BACK pair of the seen (validation) and unseen (test) splits with the model's "
                   "prediction on the original and the reversed pair, and the SC / HC indicators (incoherent "
                   "pairs first)", kind="records",
                   filters=("model", "split", "track", "scenario", "source", "label", "pred", "pred_rev", "soft",
                            "hard"), text=("phrase1", "phrase2")),
        *_coherence_tables(),
        OutputSpec("coherence-comparison", "companion-fig-20",
                   "SoftCoh (whole bar) and HardCoh (dark part) on seen (validation) and unseen (test) pairs, per "
                   "model and scenario, the paper's best printed values (Tables 4-7) hatched in the last row; † marks "
                   "models coherent by construction", kind="figure"),
        OutputSpec("weighted-f1-with-zero-shot", "phrasis-table-3",
                   "weighted F on test: fine-tuned families beside the zero-shot prompted and NLI-both-ways models"),
        OutputSpec("prompted-parse-rate", "companion-table-22",
                   "how many answers of the prompted model parsed to one of the track's labels (test, "
                   "Positives-A and All-A)"),
        OutputSpec("prompted-answers", "companion-table-22",
                   "the prompted model's raw answer, parse result and label for every test pair (Positives-A and "
                   "All-A prompts)", kind="records",
                   filters=("scenario", "source", "label", "label_used", "ok", "correct"),
                   text=("phrase1", "phrase2", "text")),
    ],
    "22_phrasis_error_analysis": [
        OutputSpec("tagged-unseen-pairs", "companion-table-23",
                   "unseen {scenario} EQUI/FORW/BACK pairs with both predictions, SC/HC and the §5.2 phenomenon "
                   "tags (incoherent pairs first)", kind="records",
                   filters=("model", "label", "pred", "pred_rev", "soft", "hard", "preposition", "numeral",
                            "plural_singular", "near_synonym", "added_words", "quantifier"),
                   text=("phrase1", "phrase2")),
        OutputSpec("incoherence-by-phenomenon", "companion-table-23",
                   "soft/hard-incoherent unseen pairs of {model} ({scenario}) by §5.2 phenomenon, with the pairs "
                   "right in only one direction and the share of incoherent pairs that involve a SIMI prediction"),
        OutputSpec("incoherent-examples", "companion-table-24",
                   "example soft-incoherent unseen pairs of {model} by phenomenon"),
        OutputSpec("paper-examples-predictions", "companion-table-24",
                   "every model's predictions on the §5.2 example pairs of the test set, both directions"),
        OutputSpec("incoherent-patterns", "companion-table-25",
                   "most frequent (gold, f(x), f(x_rev)) triples among soft-incoherent unseen pairs of {model}"),
        OutputSpec("coherence-by-direction", "companion-table-26",
                   "coherence and accuracy of {model} by the original pair's gold label (is FORW easier than "
                   "BACK?)"),
        OutputSpec("incoherence-by-phenomenon-all-models", "companion-table-27",
                   "incoherence counts and rates by phenomenon for every model (unseen, {scenario})"),
        OutputSpec("soft-incoherence-by-model", "companion-table-27",
                   "soft-incoherence rate by phenomenon for every model (unseen, {scenario})"),
    ],
}
