"""Atomic hypothesis decomposition (Srikanth & Rudinger, "NLI under the Microscope").

Submodules, in the paper's order:

* `decompose`   rule-based Neo-Davidsonian decomposer (the offline stand-in for Prompt A.1; reusable); its parts
                (lexicon, morphology, tagging, chunking, realisation, well-formedness check) live in `grammar`
* `gold`        the stand-in's precision against the team's hand-judged gold atoms
* `generate`    §3.1 atom generation through Prompt A.1 (LLM or rules), coverage of the paper's atoms,
                §3.2 validation (H ⊨ a, P ⊭ a)
* `consistency` §4 SNLI: the §4.1 rules, label induction, Tables 2 and 6 (the Prompt B.1 LLM classifier is
                `nli_lib.models.prompted.PromptNLIClassifier`)
* `defeasible`  §5 δ-SNLI: gold/silver atom labels, critical atoms, Table 3, Table 5 statistics
* `silver`      candidate silver-label formulations and the checks that decide whether one carries signal
* `annotate`    ipywidgets tool to label atoms on the -2..+2 scale (saves the gold CSV format)
* `inferential` §6 equivalence graph, maximal cliques, buckets, inferential consistency (Table 4)
* `quds`        Appendix D QUDs: Prompt D.1, and a companion-authored rule-based generator
* `plots`       Figures 2, 5, 6, 7

>>> from nli_lib.atoms import is_consistent, induce_label
>>> is_consistent("entailment", ["entailment", "neutral"]), induce_label(["entailment", "neutral"])
(False, 'neutral')
"""
from ..models.prompted import PromptNLIClassifier  # noqa: F401
from . import paper  # noqa: F401  (its declarations, read by nli_lib.papers)
from .consistency import (  # noqa: F401
    atom_judgements,
    consistency_frame,
    depends_on_completeness,
    induce_label,
    is_consistent,
    run_consistency,
    snli_shots,
    snli_test_sample,
    table2,
    table6,
)
from .decompose import Atom, RuleDecomposer, decompose, decompose_records  # noqa: F401
from .defeasible import (  # noqa: F401
    DSNLIAtoms,
    encoder_predictor,
    example_summary,
    llm_predictor,
    mark_critical,
    predict,
    prepare_dsnli,
    read_gold_labels,
    silver_labels_llm,
    silver_labels_nli,
    table3,
    write_labels,
)
from .generate import (  # noqa: F401
    A1_EXEMPLARS,
    PAPER_DECOMPOSITIONS,
    AtomGenerator,
    atom_generator,
    coverage,
    generate_atoms,
    llm_generator,
    rule_generator,
    validate_atoms,
)
from .inferential import (  # noqa: F401
    atom_cliques,
    bucket_accuracy,
    buckets,
    equivalence_graph,
    ic_bootstrap,
    inferential_consistency,
    table4,
    top_critical_atoms,
)
