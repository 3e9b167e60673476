"""Outputs of the companion's own notebooks (00 data, 01 models, 90 scorecard, 91 explorer, 92 diagnose),
declared once (see nli_lib.catalog)."""
from .spec import OutputSpec

OUTPUTS: dict[str, list[OutputSpec]] = {
    "00_data_and_statistics": [
        OutputSpec("verified-files", "companion-table-0", "offline files fetched and sha256-verified"),
        OutputSpec("dataset-sizes", "companion-table-1", "rows and label distribution per dataset"),
        OutputSpec("atoms-table-5-data-rows", "atoms-table-5", "δ-SNLI test statistics (data rows)"),
        OutputSpec("factnli-table-1", "factnli-table-1", "dataset sizes (MNLI needs the online download)"),
        OutputSpec("esnli-sizes", "companion-table-6", "e-SNLI dev/test sizes beside the printed SNLI test size"),
        OutputSpec("phrasis-counts", "companion-table-2", "PhrasIS pairs per split/source/polarity"),
        OutputSpec("phrasis-total", "phrasis-table-1",  # outputs name a table or figure; the value: phrasis-sec-3
                   "all PhrasIS pairs beside the paper's 'over 10K' (§3)"),
        OutputSpec("taxinli-table-2", "taxinli-table-2", "TaxiNLI Table 2 from the released files beside the paper"),
    ],
    "01_models": [
        OutputSpec("nli-train-log", "companion-table-3",
                   "fine-tuning log of the offline NLI model (e-SNLI dev → held-out SNLI test pairs)"),
        OutputSpec("snli-test-accuracy", "companion-table-4",
                   "SNLI-test accuracy of the companion's NLI models (Wilson 95% CI)"),
        OutputSpec("snli-test-confusion", "companion-fig-1", "row-normalised confusion matrices on SNLI test",
                   kind="figure"),
        OutputSpec("dsnli-test-accuracy", "companion-table-5", "δ-SNLI test accuracy of the offline δ-NLI classifier"),
    ],
    "90_scorecard": [
        OutputSpec("scorecard", "companion-table-90",
                   "every paper value beside ours (status, like for like: match ≤1 %, close ≤10 %, differs; "
                   "stand-in: another model, never graded; or why not computed)"),
        OutputSpec("scorecard-summary", "companion-table-91",
                   "per paper, each printed value once: like for like (match / close / differs), stand-in only, "
                   "not computed"),
        OutputSpec("scorecard", "companion-fig-90",
                   "values per paper by status; each entry's relative difference from the paper's value, one row "
                   "per paper, like-for-like and ungraded entries in separate panels", kind="figure"),
        OutputSpec("not-computed-reasons", "companion-table-92", "paper values not computed, grouped by reason"),
    ],
    "91_explorer": [
        OutputSpec("record-sets", "companion-table-93",
                   "per-example record sets saved by the paper notebooks (what the explorer browses)"),
    ],
    "92_diagnose": [
        OutputSpec("diagnose-headlines", "companion-table-94",
                   "the papers' lenses on the profile's models: each headline with its 95% interval and n, side by "
                   "side"),
        OutputSpec("diagnose-paired", "companion-table-95",
                   "paired tests between the diagnosed models on the same items (McNemar exact, paired bootstrap)"),
    ],
}
