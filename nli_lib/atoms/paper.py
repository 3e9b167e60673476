"""What the shared layers know about the atoms paper (Srikanth & Rudinger, notebooks 10-13): its systems, prompt
module, profile section and outputs catalog (the declarations `nli_lib.papers` loads without this package's code,
so this module imports only the light core).

OUTPUTS: name, paper reference and caption of every output, declared once (see nli_lib.catalog).

Caption fields the notebooks fill: `demo` (the method-demonstration warning of notebook 12, '' when the atom
labels pass the checks), `source` (the atom label source), `generator` (the atom generator), `train` (what the
δ-NLI encoders were fine-tuned on), `checks` (the silver-label pass marks), `examples` (how many examples).
"""
from ..catalog.spec import OutputSpec
from ..papers import Section, Setting, entry

# The systems the paper prints numbers for, spelt as printed (resources/paper_values/atoms.csv): what a profile's
# `as:` may name. It prints one system two ways (gpt-4o-2024-08-06 in Table 2, gpt-4o-08-06 in Tables 3-6);
# declare every spelling your model is.
SYSTEMS = ("gpt-4o-mini-2024-07-18", "gpt-4o-2024-08-06", "gpt-4o-08-06", "gpt-35-turbo-0125", "gpt-3.5-turbo",
           "llama-3-70b-it", "llama-3-8b-it", "llama-3-8b-instruct", "gemma-2-9b-it", "roberta-large",
           "deberta-v3-large")
PROMPTS = "nli_lib.atoms.prompts"  # registers the atoms.* prompt templates
# Figures whose numbers the paper does not print (in its text, captions or extracted labels): ref -> what the figure
# shows and where its numbers are printed instead, if anywhere. No paper value can be filed for what is only drawn
# (never read off a plot); the scorecard lists these (`nli_lib.paper_values.unprinted`). "prints no number": the
# figure has no paper value; "prints only ...": the values filed under it are those, the rest is only drawn.
UNPRINTED = {
    "atoms-fig-2": "prints no number: a rug plot of each example's atom labels (its caption counts the 1,761 "
                   "examples, filed under §6)",
    "atoms-fig-5": "prints no number: bars of the fine-grained atom labels; §5.1's text gives the non-neutral share, "
                   "80 % (atoms-sec-5.1)",
    "atoms-fig-6": "prints no number: histograms of atoms and of critical atoms per example; §5.2's text says only "
                   "that the majority of examples have one critical atom",
}
DNLI_ENCODERS = {"roberta-large": "roberta-large",  # Table 3 (hub id -> row), fine-tuned on δ-SNLI
                 "microsoft/deberta-v3-large": "deberta-v3-large"}
PROFILE_SECTION = Section("Models of the atoms paper (notebooks 10-13) in the paper tier.", {
    "dnli_encoders": Setting("encoders fine-tuned on δ-SNLI train for Table 3 (2 epochs, lr 2e-5, batch 32)",
                             [entry(i, n) for i, n in DNLI_ENCODERS.items()], models="list"),
})

_R = "records"

OUTPUTS: dict[str, list[OutputSpec]] = {
    "10_atoms_decomposition": [
        OutputSpec("paper-atom-coverage", "atoms-table-1",
                   "paper atoms (Tables 1, 7, 8, Fig. 3, App. B.1) covered by each generator (mutual entailment "
                   "under the NLI model)"),
        OutputSpec("paper-atom-coverage", "atoms-table-1",
                   "each paper atom: covered by a generated atom (mutual entailment)? closest generated atom",
                   kind=_R, filters=("generator", "covered", "source", "role"),
                   text=("sentence", "paper_atom", "best_match")),
        OutputSpec("snli-atoms", "atoms-table-5", "atoms generated for the SNLI-TEST-SAMPLE hypotheses", kind=_R,
                   filters=("kind", "status", "generator"), text=("hypothesis", "atom", "reason")),
        OutputSpec("table-5-counts", "atoms-table-5",
                   "dataset statistics (Table 5): ours beside the paper's; 'valid' = pruned by the NLI model only "
                   "(no human validation)"),
        OutputSpec("atom-status", "atoms-table-5",
                   "generated atoms by well-formedness status (only 'ok' atoms are used)"),
        OutputSpec("atom-precision-gold", "atoms-table-5",
                   "stand-in precision: ok atoms judged correct by the team's gold set (Wilson 95% CI), per "
                   "source; stale = gold items the current rules no longer produce"),
        OutputSpec("dsnli-atom-validation", "atoms-table-5",
                   "δ-SNLI atoms and the §3.2 pruning outcome (entailment probabilities from the NLI model)",
                   kind=_R, filters=("outcome",), text=("premise", "hypothesis", "atom")),
    ],
    "11_atoms_snli_consistency": [
        OutputSpec("table-2", "atoms-table-2",
                   "accuracy and logical consistency (%) on SNLI-TEST-SAMPLE; atoms: {generator}; paper rows are "
                   "the paper's LLMs, printed values"),
        OutputSpec("table-6", "atoms-table-6",
                   "examples whose verdict depends on the completeness of the atoms (predicted C, or predicted N "
                   "with all admitted atoms entailed)"),
        OutputSpec("consistency-by-label", "atoms-table-2",
                   "Table 2 columns 5-7 as bars, the paper's printed rows hatched beside ours", kind="figure"),
        OutputSpec("snli-consistency", "atoms-table-2",
                   "per model and SNLI-TEST-SAMPLE example: full/induced labels, §4.1 consistency, atom judgements",
                   kind=_R, filters=("model", "label", "pred", "outcome", "correct", "induced",
                                     "completeness_dependent"), text=("premise", "hypothesis", "atoms")),
        OutputSpec("snli-atom-judgements", "atoms-table-2",
                   "per model and (example, atom): H ⊨ aᵢ judgement and, for admitted atoms, the (P, aᵢ) label",
                   kind=_R, filters=("model", "label", "h_pred", "valid", "p_pred"),
                   text=("premise", "hypothesis", "atom")),
        OutputSpec("paper-items-check", "atoms-table-1",
                   "models on the paper's printed SNLI items (Table 1 rows 3-4, §2.1): full pairs and atoms"),
    ],
    "12_atoms_defeasible": [
        OutputSpec("silver-label-diagnostics", "atoms-fig-2",
                   "checks of the atom labels without gold: direction correlation, examples with a critical atom, "
                   "placebo-update AUC, pass marks {checks}; labels: {source}"),
        OutputSpec("silver-formulations", "atoms-fig-2",
                   "candidate silver-label formulations against the same checks (pass marks {checks})"),
        OutputSpec("silver-vs-paper-labels", "atoms-table-1",
                   "silver atom labels vs the paper's printed labels (Table 1 rows 1-2, Table 7)"),
        OutputSpec("table-3", "atoms-table-3",
                   "{demo}δ-SNLI-TEST accuracies (%); atom labels: {source}; δ-NLI encoders fine-tuned on: "
                   "{train}; labels_from_same_network: the model was fine-tuned from the network behind the "
                   "labels"),
        OutputSpec("dsnli-examples", "atoms-table-3",
                   "per model and δ-SNLI example: full prediction, atoms with labels, critical atoms; labels: "
                   "{source}", kind=_R,
                   filters=("model", "update_type", "pred", "correct", "critical_solved", "n_critical"),
                   text=("premise", "hypothesis", "update", "atoms", "critical_atoms")),
        OutputSpec("dsnli-subproblems", "atoms-table-3",
                   "per model and (P, aᵢ, U) sub-problem: atom label, critical flag, prediction; labels: {source}",
                   kind=_R, filters=("model", "update_type", "label", "critical", "pred", "correct", "scored"),
                   text=("premise", "hypothesis", "update", "atom")),
        OutputSpec("figure-2-rug", "atoms-fig-2", "{demo}atom label distribution per example; labels: {source}",
                   kind="figure"),
        OutputSpec("figure-5-labels", "atoms-fig-5", "{demo}fine-grained atom labels; {source}", kind="figure"),
        OutputSpec("figure-6-atoms-per-example", "atoms-fig-6",
                   "{demo}atoms and critical atoms per example; {source}", kind="figure"),
        OutputSpec("figure-7-critical-share", "atoms-fig-7", "{demo}share of valid atoms that are critical; {source}",
                   kind="figure"),
        OutputSpec("table-5-labels", "atoms-table-5",
                   "{demo}δ-SNLI statistics that depend on the atom labels ({source}); Fig. 5/7 and App. A.1 rows "
                   "included"),
        OutputSpec("table-3-paper-labels", "atoms-table-3",
                   "Table 3 columns on the {examples} δ-SNLI examples whose atom labels the paper prints; labels: "
                   "{source}"),
    ],
    "13_atoms_inferential": [
        OutputSpec("table-4", "atoms-table-4",
                   "{demo}inferential consistency (%) over critical-atom buckets with ≥ 2 examples, bootstrap 95% "
                   "CI; labels: {source}"),
        OutputSpec("critical-atom-buckets", "atoms-table-4",
                   "critical-atom buckets: examples, weights and each model's correctness; labels: {source}",
                   kind=_R, filters=("bucket_size", "update_type", "model", "correct"),
                   text=("critical_atoms", "premise", "hypothesis", "update")),
        OutputSpec("table-4-ic", "atoms-table-4",
                   "{demo}Table 4 with intervals, the paper's printed I_C beside; labels: {source}", kind="figure"),
        OutputSpec("top-critical-atoms", "atoms-table-4",
                   "{demo}most frequent critical atoms (buckets by examples); labels: {source}"),
        OutputSpec("quds", "atoms-table-9",
                   "{demo}QUDs: the paper's Table 9 / Fig. 3 pairs beside the generator's, then our critical atoms' "
                   "QUDs (critical atoms from labels: {source})"),
        OutputSpec("qud-summary", "atoms-table-9",
                   "distinct QUDs among critical atoms (paper: 223 unique QUDs for 349 critical atoms)"),
        OutputSpec("critical-atom-quds", "atoms-table-9", "QUD of each unique critical atom", kind=_R,
                   filters=("pattern", "generator"), text=("atom", "qud")),
    ],
}
