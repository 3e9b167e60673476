"""The atoms paper's prompts (Appendices A-D, verbatim) and the worked examples it prints.

Registered in `nli_lib.llm.PROMPTS` as atoms.A1, atoms.B1, atoms.C1, atoms.C2, atoms.D1; the exemplar rows
(`ATOM_DECOMPOSITIONS`, `NLI_EXAMPLES`, `DEFEASIBLE_EXAMPLES`, `DEFEASIBLE_ATOM_EXAMPLES`, `QUD_EXAMPLES`)
double as evaluation items.

>>> from nli_lib.llm import PROMPTS
>>> PROMPTS["atoms.D1"].render(critical_atom="The dog is brown.")[-1]["content"].splitlines()[-2:]
['Sentence: The dog is brown.', 'Question:']
"""
from __future__ import annotations

from ..llm.prompts import (
    PromptTemplate,
    parse_atoms,
    parse_defeasible,
    parse_defeasible3,
    parse_nli_label,
    parse_question,
    register,
)

# Atoms paper. It hand-constructed Neo-Davidsonian decomposition exemplars for Prompt A.1, 12 SNLI dev
# exemplars for B.1, 10 δ-SNLI exemplars for C.1/C.2 and 15 atom->QUD exemplars for D.1, but prints none
# of those prompt exemplars. What it does print, copied here: Table 1 (two δ-SNLI and two SNLI items with
# atoms and atom labels; bold = critical atom), Table 7, Table 8, the Appendix B.1 example, Section 2
# examples, the two Section 6 contexts, Table 9 (atom -> QUD) and Figure 3.

_T1_DNLI = [
    {
        "premise": "A man in a white t-shirt and jeans is holding a mallet and chisel next to his abstract sculpture "
                   "which stands on several bricks.",
        "hypothesis": "A man is trying to finish his sculpture for a church",
        "update": "The man has taken his first strike against the granite.",
        "label": "weakener",
        "atoms": [
            {"atom": "The thing the person is trying to do is finish.", "scale": -1, "critical": True},
            {"atom": "The thing the person is trying to finish is a sculpture.", "scale": 1, "critical": False},
            {"atom": "The sculpture is for a church.", "scale": 0, "critical": False},
        ],
        "source": "atoms Table 1 row 1",
    },
    {
        "premise": "There is a green trash truck in road with a person sweeping sidewalk.",
        "hypothesis": "The garbage man sweeps up where the can spilled.",
        "update": "The person is wearing a city uniform.",
        "label": "strengthener",
        "atoms": [
            {"atom": "The person is a garbage man.", "scale": 2, "critical": True},
            {"atom": "The thing being swept is up.", "scale": "invalid", "critical": False},
            {"atom": "There is a can.", "scale": 0, "critical": False},
            {"atom": "The can has spilled.", "scale": 1, "critical": False},
            {"atom": "The person is sweeping up a spill.", "scale": 2, "critical": True},
        ],
        "source": "atoms Table 1 row 2",
    },
]

_T1_SNLI = [
    {
        "premise": "Two young men climb a tree overlooking a rural setting, with one of them out far on a limb and "
                   "clutching a white helmet.",
        "hypothesis": "Two brothers are climbing a tree to get down their Frisbee.",
        "label": "neutral",
        "atoms": [
            ("There are two people.", "entailment"),
            ("There are two people who are brothers.", "neutral"),
            ("There are people climbing.", "entailment"),
            ("There are people climbing a tree.", "entailment"),
            ("There is a purpose for people climbing a tree.", "neutral"),
            ("The purpose for people climbing a tree is to get something.", "neutral"),
            ("The thing people are trying to get is a Frisbee.", "neutral"),
            ("The thing people are trying to get is down.", "invalid"),
        ],
        "source": "atoms Table 1 row 3",
    },
    {
        "premise": "A father and his daughter are riding a lawn mower down a street while dressed in American colors.",
        "hypothesis": "two men cut grass by hand",
        "label": "contradiction",
        "atoms": [
            ("There are two people.", "entailment"),
            ("There are two people who are men.", "contradiction"),
            ("There are people cutting.", "entailment"),
            ("There are people cutting grass.", "entailment"),
            ("There is a method of cutting grass.", "entailment"),
            ("The method of cutting grass is by hand", "contradiction"),
        ],
        "source": "atoms Table 1 row 4",
    },
]

_T7 = {
    "premise": "A female within the foreground is heading towards a large white colored pillar that is apart of a "
               "large building with people are loitering or waiting on the steps of said building.",
    "hypothesis": "The woman has an important meeting today in the building.",
    "update": "The woman is wearing a janitor’s uniform",
    "label": "weakener",
    "atoms": ["The person has something", "The thing the person has is a meeting.", "The meeting is important",
              "The meeting is today", "The meeting is in a building"],
}

#: Hypothesis -> atoms (A.1 exemplars / evaluation items). "atoms" are the valid ones; the paper's
#: invalid generations are kept apart. Generated by llama-3-8b-instruct and validated by the authors.
ATOM_DECOMPOSITIONS: tuple[dict, ...] = tuple(
    [
        {
            "sentence": r["hypothesis"],
            "atoms": [a["atom"] for a in r["atoms"] if a["scale"] != "invalid"],
            "invalid_atoms": [a["atom"] for a in r["atoms"] if a["scale"] == "invalid"],
            "source": r["source"],
        }
        for r in _T1_DNLI
    ]
    + [
        {
            "sentence": r["hypothesis"],
            "atoms": [a for a, lab in r["atoms"] if lab != "invalid"],
            "invalid_atoms": [a for a, lab in r["atoms"] if lab == "invalid"],
            "source": r["source"],
        }
        for r in _T1_SNLI
    ]
    + [
        {
            "sentence": "The man and woman are going to a movie in the city.",
            "atoms": [
                "There are two people.",
                "There are two people who are a man and a woman.",
                "There are people going.",
                "There are people going to a movie.",
                "There is a destination for the people going.",
                "The destination is a movie.",
                "There is a city.",
                "The people are going to the city.",
            ],
            "invalid_atoms": [],
            "missing_atoms": ["The movie is in the city."],
            "source": "atoms Table 8",
        },
        {
            "sentence": "The man is riding on the sidewalk.",
            "atoms": [
                "There is a person.",
                "There is a person who is a man.",
                "There is a person riding.",
                "There is a person riding on something.",
                "The thing the person is riding on is a sidewalk.",
            ],
            "invalid_atoms": [],
            "source": "atoms Appendix B.1",
        },
        {"sentence": _T7["hypothesis"], "atoms": list(_T7["atoms"]), "invalid_atoms": [], "source": "atoms Table 7"},
    ]
)

#: SNLI items (B.1): full P-H pairs and the (premise, atom) sub-problems of Table 1 with gold labels.
NLI_EXAMPLES: tuple[dict, ...] = tuple(
    [{"premise": "A little girl in a lush green field", "hypothesis": "A little girl rides her ox in a desert",
      "label": "contradiction", "kind": "full", "source": "atoms Section 2.1"}]
    + [{"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "kind": "full",
        "source": r["source"]} for r in _T1_SNLI]
    + [{"premise": r["premise"], "hypothesis": a, "label": lab, "kind": "atom", "source": r["source"]}
       for r in _T1_SNLI for a, lab in r["atoms"] if lab != "invalid"]
)

#: δ-NLI items (C.1). Table 7 is left out: the paper notes its gold label propagates a stereotype.
DEFEASIBLE_EXAMPLES: tuple[dict, ...] = tuple(
    [{"premise": "A group of people sitting around a rectangular table", "hypothesis": "they have a work meeting",
      "update": "the people are toddlers", "label": "weakener", "source": "atoms Section 2.2"}]
    + [{k: r[k] for k in ("premise", "hypothesis", "update", "label", "source")} for r in _T1_DNLI]
)

_SCALE_TO_3 = {-2: "weakener", -1: "weakener", 0: "no effect", 1: "strengthener", 2: "strengthener"}

#: Atom-level δ-NLI items (C.2): hypothesis = one atom; "scale" is the paper's -2..+2 annotation.
DEFEASIBLE_ATOM_EXAMPLES: tuple[dict, ...] = tuple(
    [{"premise": r["premise"], "hypothesis": a["atom"], "update": r["update"], "label": _SCALE_TO_3[a["scale"]],
      "scale": a["scale"], "critical": a["critical"], "source": r["source"]}
     for r in _T1_DNLI for a in r["atoms"] if a["scale"] != "invalid"]
    + [{"premise": _T7["premise"], "hypothesis": a, "update": _T7["update"], "label": "no effect", "scale": 0,
        "critical": False, "source": "atoms Table 7"} for a in _T7["atoms"]]
    + [  # Section 6: the same critical atom strengthened in two contexts (magnitude not given)
        {"premise": "Four people standing on a hiking trail in a forest with big tree logs on the ground",
         "hypothesis": "The people are tall", "update": "Their long legs step across several logs at once.",
         "label": "strengthener", "scale": None, "critical": True, "source": "atoms Section 6, Context 1"},
        {"premise": "Two men in orange uniforms stand before a train and do some work",
         "hypothesis": "The people are tall", "update": "They can easily touch the top of the train.",
         "label": "strengthener", "scale": None, "critical": True, "source": "atoms Section 6, Context 2"},
    ]
)

#: Critical atom -> QUD. Table 9 rows are gpt-4o outputs (92% validated correct in the paper). Figure 3's
#: extracted layout labels its middle column "Example Update", but its cells read as atoms; they are
#: used here as atom -> QUD pairs (reconstruction).
QUD_EXAMPLES: tuple[dict, ...] = (
    {"atom": "The kids are waiting.", "qud": "What are the people doing?", "source": "atoms Table 9"},
    {"atom": "The dog is brown.", "qud": "What color is the dog?", "source": "atoms Table 9"},
    {
        "atom": "The thing the grandpa is wearing is a shirt.",
        "qud": "What is the person wearing?",
        "source": "atoms Table 9",
    },
    {
        "atom": "The two women are sisters.",
        "qud": "What is the relationship between the two people?",
        "source": "atoms Table 9",
    },
    {"atom": "The bike is brand new.", "qud": "What is the condition of the object?", "source": "atoms Table 9"},
    {"atom": "The girls are posing.", "qud": "What are the people doing?", "source": "atoms Table 9"},
    {
        "atom": "The vest that the person wears is orange.",
        "qud": "What color is the vest that the man is wearing?",
        "source": "atoms Figure 3",
    },
    {"atom": "The person stands.", "qud": "What is the man doing on the dock?", "source": "atoms Figure 3"},
    {"atom": "The person is on a dock.", "qud": "Where is the man?", "source": "atoms Figure 3"},
)

# ---------------------------------------------------------------------------------------------------
# Prompt texts
# ---------------------------------------------------------------------------------------------------

_A1 = (
    "You are an expert linguist. You are given a sentence. Generate a list of atomic facts that are strictly "
    "logically entailed from the given sentence. Keep each fact independent and self-contained. Each fact should make "
    "sense when read on its own. Only write facts that are directly described or supported by the sentence. End your "
    "response with [END].\n\n{shots}SENTENCE: {sentence}\n\nFACTS:"
)

_B1_QUESTION = "Is the hypothesis entailed by, contradicted by, or neutral with respect to the premise?"
_B1 = (
    "You will be given a premise and a hypothesis about that premise. You need to decide whether the hypothesis is "
    "entailed by the premise by choosing one of the following answers: ‘e’: The hypothesis follows logically from the "
    "information contained in the premise. ‘c’: The hypothesis is logically false from the information contained in "
    "the premise. ‘n’: It is not possible to determine whether the hypothesis is true or false without further "
    "information. Read the premise and hypothesis and select the correct answer from the three answer labels (e, n, "
    "c). Also provide a single line of explanation in a new line. End your response with [END] and output nothing "
    "after.\n\n{shots}Premise: {premise}\nHypothesis: {hypothesis}\n\n" + _B1_QUESTION
)

_C_HEAD = (
    "You are a reasoning system. You are given a description of a situation and a hypothesis about that situation "
    "that may or may not be true. Given some more evidence about the situation, output ‘more’ if the hypothesis seems "
    "more likely to be true after learning the evidence, "
)
_C_TAIL = (
    " Also provide a single line of explanation in a new line. End your response with [END] and output nothing after."
    "\n\n{shots}Situation: {context}\n\nHypothesis: {hypothesis}\n\nEvidence: {evidence}\n\n"
    "Does the evidence make the hypothesis about the situation more or less likely to be true?"
)
_C1 = _C_HEAD + (
    "or output ‘less’ if the hypothesis seems less likely to be true after learning the evidence." + _C_TAIL
)
_C2 = _C_HEAD + (
    "output ‘less’ if the hypothesis seems less likely to be true after learning the evidence, or output ‘none’ if "
    "the likelihood of the hypothesis remains unchanged after learning the evidence." + _C_TAIL
)

_D1 = (
    "You are an expert linguist. Given a short sentence, generate a question that is answered by the sentence. Read "
    "the whole sentence carefully before generating the question.\n{shots}Sentence: {critical_atom}\nQuestion:"
)

_LETTER = {"entailment": "e", "neutral": "n", "contradiction": "c"}
_MORE_LESS = {"strengthener": "more", "weakener": "less", "no effect": "none"}

_VERBATIM = "Verbatim from the paper (bold markers dropped)."
_ATOMS_SHOTS = ("The paper's own prompt exemplars are not printed; `exemplars` holds the worked examples it does "
                "print (pass shots=k, or shots=[...] with your own rows).")


def _c_shot(r: dict) -> str:
    return (f"Situation: {r['premise']}\n\nHypothesis: {r['hypothesis']}\n\nEvidence: {r['update']}\n\n"
            "Does the evidence make the hypothesis about the situation more or less likely to be true?\n"
            f"{_MORE_LESS[r['label']]}\n" + (f"{r['explanation']}\n" if r.get("explanation") else "") + "[END]")


register(
    PromptTemplate(
        name="atoms.A1",
        paper="atoms",
        section="Appendix A, Prompt A.1: Atom Generation",
        system=None,
        template=_A1,
        parser=parse_atoms,
        exemplars=ATOM_DECOMPOSITIONS,
        shot_format=lambda r: (
            f"SENTENCE: {r['sentence']}\n\nFACTS:\n" + "\n".join(f"- {a}" for a in r["atoms"]) + "\n[END]"
        ),
        notes=_VERBATIM + " " + _ATOMS_SHOTS,
    ),
    PromptTemplate(
        name="atoms.B1",
        paper="atoms",
        section="Appendix B, Prompt B.1: Traditional NLI",
        system=None,
        template=_B1,
        parser=parse_nli_label,
        exemplars=NLI_EXAMPLES,
        shot_format=lambda r: (
            f"Premise: {r['premise']}\nHypothesis: {r['hypothesis']}\n\n{_B1_QUESTION}\n"
            f"{_LETTER[r['label']]}\n" + (f"{r['explanation']}\n" if r.get("explanation") else "") + "[END]"
        ),
        notes=_VERBATIM + " The paper used 12 SNLI dev exemplars (not printed). " + _ATOMS_SHOTS,
    ),
    PromptTemplate(
        name="atoms.C1",
        paper="atoms",
        section="Appendix C, Prompt C.1: Defeasible Inference",
        system=None,
        template=_C1,
        parser=parse_defeasible,
        exemplars=DEFEASIBLE_EXAMPLES,
        shot_format=lambda r: _c_shot(r),
        notes=_VERBATIM + " The paper used 10 δ-SNLI exemplars (not printed). " + _ATOMS_SHOTS,
    ),
    PromptTemplate(
        name="atoms.C2",
        paper="atoms",
        section="Appendix C, Prompt C.2: Defeasible Inference Atoms",
        system=None,
        template=_C2,
        parser=parse_defeasible3,
        exemplars=DEFEASIBLE_ATOM_EXAMPLES,
        shot_format=lambda r: _c_shot(r),
        notes=_VERBATIM + " Prompt C.2 asks for more/less/none; the -2..+2 scale is the paper's human annotation "
        "(see parse_scale5 and the 'scale' of DEFEASIBLE_ATOM_EXAMPLES). " + _ATOMS_SHOTS,
    ),
    PromptTemplate(
        name="atoms.D1",
        paper="atoms",
        section="Appendix D, Prompt D.1: QUD Generation",
        system=None,
        template=_D1,
        parser=parse_question,
        exemplars=QUD_EXAMPLES,
        shot_format=lambda r: f"Sentence: {r['atom']}\nQuestion: {r['qud']}",
        notes=_VERBATIM + " The placeholder printed as 'critical atom' is {critical_atom}. The paper used 15 "
        "exemplars (not printed) with gpt-4o at temperature 0.01. " + _ATOMS_SHOTS,
    ),
)
