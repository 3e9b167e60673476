"""FTC's priming examples (Tables 13 and 14, verbatim rows) and the prompts built around them.

Registered in `nli_lib.llm.PROMPTS` as ftc.extract.{C,E,N} and ftc.transform.{C,E,N}. The paper prints no
prompt wording: the layout around the rows and the one-line system message are companion-authored.
"""
from __future__ import annotations

from ..llm.prompts import (
    PromptTemplate,
    parse_ftc_counterfactual,
    parse_ftc_counterfactual_pair,
    parse_ftc_spans,
    register,
)

# FTC paper, Table 13 (extraction) and Table 14 (transformation). The paper primed GPT-Neo with 20 examples
# per label but prints 5 per label; only those are here. Text extraction interleaved the columns, so row
# boundaries were reconstructed from the table layout; every string is the paper's (typos kept: "he has a
# map" for "mop", "If your pausing", "they gets ready"; hyphenated line breaks "class-room",
# "con-struction" rejoined). Table 14 C/E row 2 and row 3 swap which span is A, as printed.
FTC_EXTRACT_EXAMPLES: dict[str, tuple[dict, ...]] = {
    "C": (
        {
            "explanation": "Jail cells aren’t pastel-colored or a classroom.",
            "A": "jail cells",
            "B": "pastel-colored or a classroom",
        },
        {
            "explanation": "The two men cannot both be at a construction site and also never have been at a "
            "construction site.",
            "A": "at a construction site",
            "B": "never have been at a construction site.",
        },
        {"explanation": "One cannot be happy and angry at the same time.", "A": "happy", "B": "angry"},
        {"explanation": "a dog is not a cat.", "A": "dog", "B": "cat"},
        {"explanation": "Star is not balloon", "A": "star", "B": "balloon"},
    ),
    "E": (
        {
            "explanation": "The guy on the phone is sitting at a desk.",
            "A": "guy on the phone",
            "B": "sitting at a desk",
        },
        {"explanation": "People is a generalization of many people.", "A": "people", "B": "many people"},
        {
            "explanation": "Jockeys are people, so jockeys riding horses are people riding horses.",
            "A": "jockeys",
            "B": "people",
        },
        {
            "explanation": "If people are sitting on blankets and the blankets are in the park, then the people are "
            "sitting at the park as well, because they cannot be in a separate location from the "
            "blankets they are sitting upon.",
            "A": "people sitting on blankets",
            "B": "people sitting on blankets in the park",
        },
        {
            "explanation": "If your pausing for a photo then they are having their photo taken",
            "A": "pausing for a photo",
            "B": "having photo taken",
        },
    ),
    "N": (
        {
            "explanation": "Looking on does not mean waiting for their turn and doesn’t mean they are at a "
            "competition.",
            "A": "looking",
            "B": "waiting for their turn and they are at a competition",
        },
        {
            "explanation": "Just because a track athlete is carrying a large pole it does not mean they gets ready for "
            "their turn at the pole vault.",
            "A": "A track athlete is carrying a large pole",
            "B": "A track athlete gets ready for their turn at the pole vault.",
        },
        {
            "explanation": "There is no evidence that the women talking to the man outside the building are sad",
            "A": "The women talking to the man outside the building",
            "B": "the women are sad",
        },
        {
            "explanation": "Just because he has a mop, does not mean he has a broom.",
            "A": "he has a map",
            "B": "he has a broom",
        },
        {
            "explanation": "No way to know that is alone because he lost his friends in a war.",
            "A": "he is alone",
            "B": "he lost his friends in a war",
        },
    ),
}

FTC_TRANSFORM_EXAMPLES: dict[str, tuple[dict, ...]] = {
    "CE": (  # "Contradiction and Entailment uses the same set of prompts" (Table 14 caption)
        {"hyp_original": "They are waiting for parole in their jail cells.",
         "hyp_cf": "They are waiting for parole in their pastel-colored classroom", "A": "jail cells",
         "B": "pastel-colored classroom"},
        {"hyp_original": "The two men have never been to a construction site.",
         "hyp_cf": "The two men are at a construction site.", "A": "at a construction site",
         "B": "never been to a construction site"},
        {"hyp_original": "an angry man grills vegetables on a barbecue.",
         "hyp_cf": "A happy man grills vegetables on a barbecue.", "A": "angry", "B": "happy"},
        {"hyp_original": "There is a cat running", "hyp_cf": "There is a dog running", "A": "cat", "B": "dog"},
        {"hyp_original": "The young man is holding the balloon inside the large stone building.",
         "hyp_cf": "The young man is holding the star inside the large stone building.", "A": "balloon", "B": "star"},
    ),
    "N": (  # hyp_cf holds the two counterfactuals x_cf[A] and x_cf[B] as "A: ...; B: ..."
        {"hyp_original": "The skateboarders are waiting for their turn at a competition.",
         "hyp_cf": "A: The skateboarders are looking.; B: The skateboarders are waiting for their turn.",
         "A": "looking", "B": "waiting for their turn"},
        {"hyp_original": "A track athlete gets ready for their turn at the pole vault.",
         "hyp_cf": "A: A track athlete carrying a large pole.; B: A track athlete gets ready for their turn at the "
                   "pole vault.", "A": "carrying a large pole", "B": "gets ready for their turn at the pole vault"},
        {"hyp_original": "Three sad women standing outside a building talking to a man.",
         "hyp_cf": "A: Three talking to the man outside the building; B: Three sad women",
         "A": "the women talking to the man outside the building", "B": "the women are sad"},
        {"hyp_original": "There is an old man sitting alone because he lost his friends in a war.",
         "hyp_cf": "A: There is an old man sitting alone; B: There is an old man who lost his friends in a war.",
         "A": "he is alone", "B": "he lost his friends in a war"},
    ),
}

# FTC: layout companion-authored (the paper prints only the example rows).
_FTC_SYSTEM = "Complete the last example in exactly the same format as the examples. Output only the completion."
_FTC_EXTRACT = "{shots}Explanation: {explanation}\nA:"
_FTC_TRANSFORM = "{shots}Hypothesis: {hypothesis}\nA: {A}\nB: {B}\nCounterfactual:"


def _ftc_extract(label: str) -> PromptTemplate:
    return PromptTemplate(
        name=f"ftc.extract.{label}", paper="ftc", section="Appendix 7.9, Table 13", system=_FTC_SYSTEM,
        template=_FTC_EXTRACT, parser=parse_ftc_spans, exemplars=FTC_EXTRACT_EXAMPLES[label],
        shot_format=lambda r: f"Explanation: {r['explanation']}\nA: {r['A']}\nB: {r['B']}",
        default_shots=len(FTC_EXTRACT_EXAMPLES[label]),
        notes="Example rows verbatim from Table 13 (5 of the 20 used; reconstructed from interleaved columns); "
              "layout and system line companion-authored.",
    )


def _ftc_transform(label: str) -> PromptTemplate:
    rows = FTC_TRANSFORM_EXAMPLES["N" if label == "N" else "CE"]
    return PromptTemplate(
        name=f"ftc.transform.{label}",
        paper="ftc",
        section="Appendix 7.9, Table 14",
        system=_FTC_SYSTEM,
        template=_FTC_TRANSFORM,
        exemplars=rows,
        default_shots=len(rows),
        parser=parse_ftc_counterfactual_pair if label == "N" else parse_ftc_counterfactual,
        shot_format=lambda r: (
            f"Hypothesis: {r['hyp_original']}\nA: {r['A']}\nB: {r['B']}\nCounterfactual: {r['hyp_cf']}"
        ),
        notes="Example rows verbatim from Table 14 (reconstructed from interleaved columns); layout and system "
        "line companion-authored." + (" C and E share one example set, as in the paper." if label != "N" else ""),
    )


register(*[_ftc_extract(label) for label in ("C", "E", "N")], *[_ftc_transform(label) for label in ("C", "E", "N")])
