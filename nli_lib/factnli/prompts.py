"""FactNLI's prompts (Appendix B.1 fact extraction, B.2 fusion; verbatim) and its Appendix G case study.

Registered in `nli_lib.llm.PROMPTS` as factnli.B1 and factnli.B2.
"""
from __future__ import annotations

from ..llm.prompts import PromptTemplate, parse_facts, parse_fusion, register

#: FactNLI Appendix G (Table 10), level 1 of the SNLI case study (label entailment).
FACTNLI_CASE_STUDY: dict = {
    "premise": "A woman wearing a yellow tank top and white pants looking into a window on a city street.",
    "hypothesis": "A woman wearing a tank top and pants looks through some glass.",
    "label": "entailment",
    "L1_facts": [
        "Carnaby Street is a shopping street in Soho, City of Westminster.",
        "Carnaby Street is pedestrianised.",
        "Street fashion is associated with youth culture.",
        "Street fashion is seen in major urban centers.",
    ],
    "L1_premise": "A woman wearing a yellow tank top and white pants is looking into a window on a city street, where "
    "street fashion, often associated with youth culture, is prominently displayed in major urban "
    "centers like Carnaby Street, a pedestrianised shopping street in Soho, City of Westminster.",
    "L1_hypothesis": "A woman wearing a tank top and pants looks through some glass, embodying the street fashion that "
    "is often seen in major urban centers and is closely associated with youth culture.",
    "source": "factnli Appendix G, Table 10",
}

# FactNLI Appendix B: line breaks as printed; margin line numbers removed.
_FACTNLI_B1 = """[Task Description]
You are a meticulous information extractor. Your sole job is to read the
given SNIPPETS and return only literal, atomic facts present in those
snippets. You must not infer, generalize, add outside knowledge.
[Inputs]
{SNIPPETS}

[Rules]
1) Source-only: use only snippet content; preserve tense, modality,
quantifiers, and negation exactly as written.
2) Minimality: each fact must be irreducible (cannot be further split).
3) No cross extraction: each fact must be fully supported by a single
snippet. Do not combine evidence across multiple snippets.
4) No ambiguous references: avoid vague or deictic pronouns (e.g., it,
they, he, she, this, that, former, latter, here, there); replace with
the explicit noun phrase from the snippet.
5) If nothing is extractable, return {"facts": []} exactly.

[Output JSON]
{
"facts": [
{
"text": "<atomic fact1>,"
},
{
"text": "<atomic fact2>,"
}
...
]
}"""

_FACTNLI_B2 = """[Task Description]
You are a precise composer. Begin with the given ANCHOR text verbatim,
then add ONLY the supplied atomic facts from FACT_LIST_JSON. Do not
introduce any new information beyond those facts.
[Inputs]
{ANCHOR_TEXT}
{FACT_LIST_JSON}

[Rules]
1) Anchor-centric: write a short paragraph that revolves around
ANCHOR_TEXT.
2) Facts-only: integrate all and only the provided facts; each fact
appears once.
3) Fidelity: preserve polarity, modality, time expressions, and named
entities as given.
4) Minimal glue: use neutral connectors ("Additionally,", "At <time>,",
"In <location>,", "Meanwhile,") without adding new information.
[Output JSON]
{
"fusion_result": "<fused_paragraph>"
}"""


register(
    PromptTemplate(
        name="factnli.B1", paper="factnli", section="Appendix B.1: Fact Extraction", system=None,
        template=_FACTNLI_B1, parser=parse_facts,
        notes="Verbatim from the paper (margin line numbers removed). A list passed as SNIPPETS is numbered "
              "one per line (companion choice).",
    ),
    PromptTemplate(
        name="factnli.B2", paper="factnli", section="Appendix B.2: Premise and Hypothesis Fusion", system=None,
        template=_FACTNLI_B2, parser=parse_fusion, exemplars=(FACTNLI_CASE_STUDY,),
        notes="Verbatim from the paper (margin line numbers removed; the wrapped literal \"In <location>,\" "
              "rejoined). Used for both premise and hypothesis (ANCHOR_TEXT = p or h). A list passed as "
              "FACT_LIST_JSON is sent as {\"facts\": [{\"text\": ...}]} (companion choice).",
    ),
)
