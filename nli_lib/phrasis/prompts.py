"""The companion-authored PhrasIS relation prompt (label definitions quoted from the paper's Appendix A.1)
and the paper's Table 1 example pairs. Registered in `nli_lib.llm.PROMPTS` as phrasis.relation.
"""
from __future__ import annotations

from ..llm.prompts import PromptTemplate, parse_phrase_relation, register

#: PhrasIS Table 1 example pairs (label codes as in the companion's data).
PHRASIS_EXAMPLES: tuple[dict, ...] = (
    {"phrase1": "clings", "phrase2": "hold on", "label": "EQUI"},
    {"phrase1": "2 car bombs", "phrase2": "Car bombing", "label": "FORW"},
    {"phrase1": "22 dead", "phrase2": "89 dead", "label": "BACK"},
    {"phrase1": "Doing back flip", "phrase2": "Jumping headfirst", "label": "OPPO"},
    {"phrase1": "February 25", "phrase2": "April 21", "label": "SIMI"},
    {"phrase1": "Brief Gaza truce", "phrase2": "Temporary truce", "label": "SIMI"},
    {"phrase1": "smiling", "phrase2": "are posing", "label": "REL"},
    {"phrase1": "says", "phrase2": "Syria peace", "label": "UNR"},
)

# PhrasIS: companion-authored; definitions quoted from the PhrasIS paper, Appendix A.1 (and footnote 4).
_PHRASIS = (
    "Decide which inference relation holds between PHRASE 1 and PHRASE 2. Answer with exactly one label:\n"
    "EQUI (equivalence): both phrases express the same meaning.\n"
    "FORW (forward entailment): the meaning of one phrase is subsumed by the other, often involving missing or "
    "additional constructs; here PHRASE 1 entails PHRASE 2.\n"
    "BACK (backward entailment): the same relation in the other direction; PHRASE 2 entails PHRASE 1.\n"
    "SIMI (similarity): the phrases belong to the same semantic class but are not equivalent, entailed, or opposed.\n"
    "REL (relatedness): some kind of weak semantic relation that is not strong enough to be annotated as similar.\n"
    "OPPO (opposition): the phrases are in an inherently incompatible binary relationship (e.g., antonyms).\n"
    "UNR (unrelated): there is not any semantic relation involved.\n"
    "Entailment follows set inclusion, also for quantification, number and coordination: someone is more general "
    "than everyone, so (someone, everyone) is BACK; women entails woman, but not the reverse.\n\n"
    "{shots}PHRASE 1: {phrase1}\nPHRASE 2: {phrase2}\nLabel:"
)


register(
    PromptTemplate(
        name="phrasis.relation", paper="phrasis", section="companion-authored (labels: PhrasIS Appendix A.1)",
        system="You are an expert annotator of inference relations between short phrases.",
        template=_PHRASIS, parser=parse_phrase_relation, exemplars=PHRASIS_EXAMPLES,
        shot_format=lambda r: f"PHRASE 1: {r['phrase1']}\nPHRASE 2: {r['phrase2']}\nLabel: {r['label']}",
        notes="COMPANION-AUTHORED: the PhrasIS paper evaluates fine-tuned classifiers and prints no prompt. "
              "Label definitions quoted from its Appendix A.1; exemplars are its Table 1 pairs.",
    ),
)
