"""The template engine, tolerant parsers and the registry of the papers' LLM prompts.

Each paper's prompt texts and exemplars live beside its package (`nli_lib.atoms.prompts`,
`nli_lib.factnli.prompts`, `nli_lib.ftc.prompts`, `nli_lib.phrasis.prompts`) and `register` their templates;
``PROMPTS`` imports a paper's module the first time one of its keys is asked for.

Registry keys (``PROMPTS[key]``; fields to pass to ``render`` in brackets):

=====================  ==========================================================================
atoms.A1               atomic decomposition of a sentence, Prompt A.1 [sentence] -> list[str]
atoms.B1               SNLI 3-way NLI, Prompt B.1 [premise, hypothesis] -> "entailment"|...
atoms.C1               defeasible NLI, Prompt C.1 [context, hypothesis, evidence] -> "strengthener"|"weakener"
atoms.C2               atom-level defeasible NLI, Prompt C.2 [same] -> "strengthener"|"weakener"|"no effect"
atoms.D1               QUD generation from a critical atom, Prompt D.1 [critical_atom] -> question str
factnli.B1             FactNLI fact extraction, App. B.1 [SNIPPETS] -> list[str]
factnli.B2             FactNLI premise/hypothesis fusion, App. B.2 [ANCHOR_TEXT, FACT_LIST_JSON] -> str
ftc.extract.{C,E,N}    FTC span extraction, Table 13 exemplars [explanation] -> {"A": str, "B": str}
ftc.transform.{C,E}    FTC counterfactual rewrite, Table 14 C/E exemplars [hypothesis, A, B] -> str
ftc.transform.N        FTC neutral rewrite, Table 14 N exemplars [hypothesis, A, B] -> {"A": str, "B": str}
phrasis.relation       COMPANION-AUTHORED phrase relation prompt [phrase1, phrase2] -> "EQUI"|"FORW"|...
=====================  ==========================================================================

Wording. The atoms (A.1-D.1) and FactNLI (B.1, B.2) templates are the papers' prompt text verbatim,
except for: bold markers of the PDF (``**sentence**``) dropped; FactNLI's margin line numbers removed
and one string literal that the PDF wrapped (``"In <location>,"``) rejoined; D.1's placeholder, printed
as the words "critical atom", written ``{critical_atom}``. ``tests/test_llm.py`` checks each verbatim
template against the paper text. The FTC paper prints no prompt wording, only its priming examples
(Tables 13/14); the layout around them ("Explanation: ... / A: ... / B: ...") and FTC's one-line
system message are companion-authored, the example rows are the paper's. The PhrasIS prompt is
companion-authored, with label definitions quoted from the PhrasIS paper's Appendix A.1.

Exemplars. ``render(shots=k)`` inserts the first k of a template's ``exemplars`` (or ``shots=[...]``
your own rows, e.g. 12 SNLI dev items for B.1 as the paper used) before the query. Only FTC defaults
to its exemplars (the paper's priming prefix); the atoms paper does not print its prompt exemplars, so
its templates default to zero-shot and carry the worked examples the paper shows elsewhere (Tables 1,
7, 8, 9, Fig. 3, App. B.1) as structured rows that double as evaluation items.

>>> t = PROMPTS["atoms.A1"]
>>> messages = t.render(sentence="The juggler performs at a party.")
>>> messages[-1]["content"].splitlines()[-3:]
['SENTENCE: The juggler performs at a party.', '', 'FACTS:']
>>> t.parse("1. There is a juggler.\\n2. The juggler performs.\\n3. The performance is at a party.\\n[END]").value
['There is a juggler.', 'The juggler performs.', 'The performance is at a party.']
>>> PROMPTS["atoms.B1"].parse("Answer: (c)\\nA desert is not a field. [END]").value
'contradiction'
>>> PROMPTS["atoms.B1"].parse("I cannot tell.").error
'no NLI label (e/n/c or entailment/neutral/contradiction) found'

Refusals, empty answers and echoes of the prompt are rejected before any parser sees them (`junk_reason`),
so a refusal never becomes an atom or a label word found inside it:

>>> PROMPTS["atoms.A1"].parse("Sorry, I can't help with that.").error
'refusal: "Sorry, I can\\'t help with that."'
>>> PROMPTS["atoms.B1"].parse("As an AI language model, I cannot determine whether this follows.").ok
False
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..papers import declared, registry

# ---------------------------------------------------------------------------------------------------
# Template and parse result
# ---------------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")  # {name}; JSON braces like {"facts": []} untouched


@dataclass(frozen=True)
class Parsed:
    """Outcome of parsing a model answer: never raises; ``ok=False`` keeps the raw text and why."""

    ok: bool
    value: Any
    raw: str
    error: str | None = None


@dataclass(frozen=True)
class PromptTemplate:
    """A paper's prompt: ``render(**fields)`` -> chat messages, ``parse(text)`` -> `Parsed`."""

    name: str  # registry key, e.g. "atoms.A1"
    paper: str  # the registered paper it belongs to (nli_lib.papers): "atoms", "factnli", "ftc", "phrasis", ...
    section: str  # where the paper prints it, e.g. "Appendix A, Prompt A.1"
    system: str | None  # system message, or None (the prompt is one user message)
    template: str  # user message with {field} placeholders; {shots} marks where exemplars go
    parser: Callable[[str], Any] = field(repr=False)  # raw text -> value; raises ValueError if unparsable
    exemplars: tuple = field(default=(), repr=False, compare=False)  # rows the paper prints (dicts)
    shot_format: Callable[[dict], str] | None = field(default=None, repr=False, compare=False)  # row -> text
    default_shots: int = 0  # exemplars inserted when render() gets no shots argument
    notes: str = ""  # provenance: verbatim or companion-authored, reconstructions

    @property
    def fields(self) -> tuple[str, ...]:
        """Placeholder names render() needs (besides shots)."""
        names = dict.fromkeys(_PLACEHOLDER.findall(self.template))
        names.pop("shots", None)
        return tuple(names)

    def render(self, shots: int | Sequence[dict] | None = None, **fields) -> list[dict]:
        """Chat messages for one query. Lists are joined one item per line (facts as JSON for *_JSON)."""
        rows = self.exemplars[: self.default_shots] if shots is None else (
            self.exemplars[:shots] if isinstance(shots, int) else list(shots))
        if rows and self.shot_format is None:
            raise ValueError(f"{self.name} has no exemplar format; call render() without shots")
        block = "".join(self.shot_format(dict(r)) + "\n\n" for r in rows)

        def fill(match: re.Match) -> str:
            name = match.group(1)
            if name == "shots":
                return block
            for key in (name, name.lower()):
                if key in fields:
                    return _format_value(name, fields[key])
            raise KeyError(f"{self.name}.render() needs field {name!r} (fields: {', '.join(self.fields)})")

        user = _PLACEHOLDER.sub(fill, self.template)
        return ([{"role": "system", "content": self.system}] if self.system else []) + [
            {"role": "user", "content": user}
        ]

    def parse(self, text: str | None) -> Parsed:
        """Parse a model answer; refusals, junk, unparsable answers give ``Parsed(ok=False, raw=text, error=...)``."""
        raw = "" if text is None else str(text)
        junk = junk_reason(raw, self)
        if junk:
            return Parsed(False, None, raw, junk)
        try:
            return Parsed(True, self.parser(raw), raw, None)
        except Exception as exc:  # noqa: BLE001 - a parser must never take a batch down
            return Parsed(False, None, raw, str(exc) or type(exc).__name__)

    @functools.cached_property
    def fixed_sentences(self) -> tuple[str, ...]:
        """Sentences of the prompt's own wording (40+ characters, placeholders cut out), lower-cased. Computed
        once per template (the template is frozen): the echo check of every parsed answer reads them."""
        text = "\n".join(t for t in (self.system, self.template) if t)
        parts = re.split(r"(?<=[.?!:])\s+|\n|\{[A-Za-z_][A-Za-z0-9_]*\}", text)
        return tuple(dict.fromkeys(p for p in (" ".join(x.split()).lower() for x in parts) if len(p) >= 40))


def _format_value(name: str, value) -> str:
    if isinstance(value, str):
        return value
    if name.upper().endswith("_JSON"):  # FactNLI FACT_LIST_JSON: same shape as the B.1 output
        if isinstance(value, (list, tuple)):
            value = {"facts": [f if isinstance(f, dict) else {"text": f} for f in value]}
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):  # e.g. SNIPPETS: numbered, one per line
        return "\n".join(f"{i}. {v}" for i, v in enumerate(value, 1))
    return str(value)


# ---------------------------------------------------------------------------------------------------
# Junk: refusals, empty answers, echoes of the prompt (rejected before any parser)
# ---------------------------------------------------------------------------------------------------

_REFUSAL = re.compile(
    r"^[\W_]*(?:(?:i['’]?m|i am|we['’]?re|we are)\s+(?:so\s+|very\s+|really\s+|truly\s+)?sorry|sorry\b"
    r"|(?:i|we)\s+(?:sincerely\s+)?apologi[sz]e|my apologies|apologies\b"
    r"|as an? (?:ai|artificial intelligence|(?:large )?language model|llm|assistant)\b"
    r"|(?:i|we)(?:['’]m| am|['’]re| are)\s+(?:unable|not able|not allowed|not permitted)\s+to"
    r"|(?:i|we)\s+(?:can(?:not|['’]t|\s+not)|won['’]t|will not|must decline to"
    r"|do(?: not|n['’]t)\s+feel comfortable)"
    r"\s+(?:help|assist|provide|comply|answer|complete|do (?:that|this)|generate|determine|fulfil+|respond|continue"
    r"|create|produce|decompose|label|classify|extract|write|engage)"
    # "I can't say whether ...": the speaker declines to choose ("we cannot tell if ..." explains a neutral label)
    r"|i\s+(?:can(?:not|['’]t|\s+not)|could(?:n['’]t|\s+not))\s+(?:really\s+)?(?:say|tell|decide|know|judge"
    r"|be\s+(?:sure|certain))\s+(?:whether|if|which|for\s+(?:sure|certain))"
    r"|(?:i['’]?m|i am|we['’]?re|we are)\s+afraid\b(?!\s+of\b)"  # "I'm afraid I can't ...", not "I'm afraid of dogs"
    r"|(?:no[.!,]?\s+)?(?:i|we)\s+(?:refuse|decline)\b"
    r"|unfortunately,?\s+(?:i|we)\b"
    # the same in the languages a model falls back to most (Spanish, French, German, Italian, Portuguese)
    r"|lo\s+(?:siento|lamento)|(?:me\s+temo\s+que\s+)?no\s+puedo|disc[uú]lp[ae]|lamentablemente"
    r"|como\s+(?:un\s+)?(?:modelo\s+de\s+lenguaje|asistente|ia)\b"
    r"|(?:je\s+suis\s+)?d[ée]sol[ée]e?|je\s+ne\s+(?:peux|suis\s+pas)|es\s+tut\s+mir\s+leid|leider\b"
    r"|ich\s+kann\s+(?:das\s+|dies\s+|ihnen\s+)?(?:nicht|keine)|mi\s+dispiace|non\s+posso|sinto\s+muito"
    r"|n[ãa]o\s+posso)",
    re.I)


def is_refusal(text: str) -> bool:
    """Whether text opens like a refusal or an assistant disclaimer ("Sorry, I can't ...", "As an AI ...").

    >>> [is_refusal(t) for t in ["Sorry, I can't help with that.", "I'm sorry, but I cannot", "As an AI model, e",
    ...  "I cannot assist with this request.", "1. The man is sorry.", "I cannot swim.", "n"]]
    [True, True, True, True, False, False, False]
    >>> [is_refusal(t) for t in ["No. I refuse.", "Lo siento, no puedo ayudar con eso.", "I'm afraid I can't.",
    ...  "I can't say whether it is e or c.", "I'm afraid of dogs.", "The man refuses."]]
    [True, True, True, True, False, False]
    """
    return bool(_REFUSAL.match(text.strip()))


def junk_reason(text: str, template: "PromptTemplate | None" = None) -> str | None:
    """Why an answer is junk (empty, a refusal, an echo of the prompt's wording), or None when it is not.

    An echo: the answer's first line holds a sentence of the prompt's own wording, or the answer holds two.

    >>> junk_reason("   "), junk_reason("Sorry, I can't help with that.")
    ('empty answer', 'refusal: "Sorry, I can\\'t help with that."')
    >>> junk_reason("Does the evidence make the hypothesis about the situation more or less likely to be true?",
    ...             PROMPTS["atoms.C1"])
    'echo of the prompt: "does the evidence make the hypothesis about the situation more or less likely t…"'
    >>> junk_reason("e\\nThe hypothesis follows logically from the information contained in the premise.",
    ...             PROMPTS["atoms.B1"]) is None
    True
    """
    body = _before_end(text).strip() or text.strip()
    if not body:
        return "empty answer"
    first = _first_line(body)
    if is_refusal(first):
        return f"refusal: {_clip(first)}"
    if template is not None:
        flat = " ".join(body.split()).lower()
        head = " ".join(first.split()).lower()
        found = [s for s in template.fixed_sentences if s in flat]
        if any(s in head for s in found) or len(found) >= 2:
            return f"echo of the prompt: {_clip(found[0])}"
    return None


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return '"' + (text if len(text) <= n else text[: n - 1] + "…") + '"'


def _reject_refusal(item: str) -> str:
    """An extracted item (atom, question, fact) as it is; a refusal among them makes the answer unparsable."""
    if is_refusal(item):
        raise ValueError(f"refusal among the items: {_clip(item)}")
    return item


# ---------------------------------------------------------------------------------------------------
# Parsers: text -> value, raising ValueError when the answer does not parse
# ---------------------------------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*•·–]+|\(?\d+[.):]|\(?[a-z][.)]|\$?a_?\{?\d+\}?\$?\s*:|fact\s*\d*\s*:)\s*", re.I)
_ITEM_PREFIX = re.compile(r"^(?:sentence|(?:atomic\s+)?fact|atom)\s*\d*\s*:\s*", re.I)  # "SENTENCE: ..." inside an item
_HEADER = re.compile(r"^\s*(facts|atomic facts|atoms|here (are|is)\b.*|sure\b.*)\s*:?\s*$", re.I)


def _before_end(text: str) -> str:
    return text.split("[END]")[0]


def _strip_fences(text: str) -> str:
    return re.sub(r"```(?:json)?", "", text)


def parse_atoms(text: str) -> list[str]:
    """One atom per line, numbered or bulleted, up to [END] (a JSON list of strings also works); a "SENTENCE:" or
    "FACT 2:" label before an atom is dropped.

    >>> parse_atoms("1. SENTENCE: The juggler performs.\\n2. The performance is at a party.\\n[END]")
    ['The juggler performs.', 'The performance is at a party.']
    """
    body = _strip_fences(_before_end(text)).strip()
    if body.startswith("["):
        try:
            items = json.loads(body)
            if isinstance(items, list) and items and all(isinstance(i, str) for i in items):
                return [_reject_refusal(i.strip()) for i in items if i.strip()]
        except json.JSONDecodeError:
            pass
    atoms = []
    for line in body.splitlines():
        if _HEADER.match(line):
            continue
        atom = _ITEM_PREFIX.sub("", _BULLET.sub("", line, count=1).strip()).strip().strip('"').strip()
        if atom:
            atoms.append(_reject_refusal(atom))
    if not atoms:
        raise ValueError("no atoms found")
    return atoms


_NLI_WORDS = [("entailment", r"entail\w*|follows"), ("contradiction", r"contradict\w*"), ("neutral", r"neutral")]
_NLI_LETTER = {"e": "entailment", "n": "neutral", "c": "contradiction"}


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


_OWN_PAIR = re.compile(r"^[\s*#>_\d.)-]*(?:premise|hypothesis)\s*\d*\s*[:*]", re.I)
_NLI_WORD = r"(?:entail\w*|contradict\w*|neutral)"
_NLI_LIST_AFTER = re.compile(  # "entailment, neutral or contradiction": what follows a label word in a list
    rf"^\w*[\s'\"’”)*]*(?:,|/|\bor\b|\bnor\b|\band\b)\s*(?:an?\s+)?['\"‘“(*]*{_NLI_WORD}", re.I)
_LETTER_LIST = re.compile(r"^[)\]'\"’”*]*\s*(?:,|/|\bor\b)\s*[(\['\"‘“*]*[enc](?![a-z])", re.I)


def parse_nli_label(text: str) -> str:
    """'e'/'n'/'c' (Prompt B.1) or entailment/neutral/contradiction, tolerant of case, quotes, explanations.

    Not an answer: a label word that is negated ("I would not label this as entailment") or one of a list of
    options ("It might be entailment or contradiction"), and an answer that begins with a premise/hypothesis
    pair of the model's own (its label answers that pair, not the one asked).

    >>> parse_nli_label("Contradiction: a desert is not a field.")
    'contradiction'
    >>> for answer in ["I am not sure. It might be entailment or contradiction.", "e, n or c",
    ...                "Premise: A woman wears a dress.\\nThe hypothesis follows logically from the premise."]:
    ...     try:
    ...         parse_nli_label(answer)
    ...     except ValueError as exc:
    ...         print(exc)
    a list of options, not an answer: "entailment or contradiction."
    a list of options, not an answer: "e, n or c"
    the answer begins with a premise/hypothesis pair of its own: "Premise: A woman wears a dress."
    """
    body = _before_end(text)
    first = _first_line(body)
    if _OWN_PAIR.match(first):
        raise ValueError(f"the answer begins with a premise/hypothesis pair of its own: {_clip(first)}")
    head = re.sub(r"^(answer|label|prediction|output)\s*(is)?\s*[:\-]?\s*", "", first, flags=re.I)
    letter = re.match(r"^[\s'\"‘’“(\[*]*([enc])(?![a-z])", head, re.I)
    if letter:
        if _LETTER_LIST.match(head[letter.end():]):
            raise ValueError(f"a list of options, not an answer: {_clip(head[:40])}")
        return _NLI_LETTER[letter.group(1).lower()]
    quoted = re.search(r"(?:answer|label)\s*(?:is)?\s*[:\-]?\s*[\s'\"‘’“(\[*]*([enc])(?![a-z])", body, re.I)
    if quoted:
        return _NLI_LETTER[quoted.group(1).lower()]
    for source in (head, body):
        hits = [
            (m.start(), label) for label, pat in _NLI_WORDS for m in [re.search(rf"\b(?:{pat})", source, re.I)] if m
        ]
        if hits:
            start, label = min(hits)
            if _NEGATED.search(source[:start]):  # "is not entailed by": a negated label word names no label
                raise ValueError(f"negated label word: {_clip(source[max(0, start - 30):start + 20])}")
            if _NLI_LIST_AFTER.match(source[start:]):  # "entailment or contradiction": options, no choice
                raise ValueError(f"a list of options, not an answer: {_clip(source[start:start + 60])}")
            return label
    raise ValueError("no NLI label (e/n/c or entailment/neutral/contradiction) found")


# a negation up to three words before a label word: "is not entailed", "would not label this as entailment"
_NEGATED = re.compile(r"(?:\b(?:not|no|never|neither|nor|cannot)|n['’]t)\s+(?:\w+\s+){0,3}$", re.I)


_DEFEASIBLE_WORDS = [
    ("no effect", r"none|no effect|unchanged|neither|no change"),
    ("strengthener", r"more|strengthen\w*|stronger"),
    ("weakener", r"less|weaken\w*|weaker"),
]


_MORE_OR_LESS = re.compile(r"^(?:more|less)\s+(?:or|nor)\s+(?:more|less)\b", re.I)


def _defeasible(text: str, allowed: tuple[str, ...]) -> str:
    """The first label word of the first line (else of the answer); a negated one ("does not make the hypothesis
    more likely", "no more likely than before") or "more or less" is no answer."""
    body = _before_end(text)
    for source in (_first_line(body), body):
        hits = [(m.start(), label) for label, pat in _DEFEASIBLE_WORDS if label in allowed
                for m in [re.search(rf"(?<![a-z])(?:{pat})(?![a-z])", source, re.I)] if m]
        if hits:
            start, label = min(hits)
            if label != "no effect" and _NEGATED.search(source[:start]):
                raise ValueError(f"negated label word: {_clip(source[max(0, start - 30):start + 20])}")
            if _MORE_OR_LESS.match(source[start:]):
                raise ValueError(f"'more or less' names no direction: {_clip(source[max(0, start - 30):start + 30])}")
            return label
    raise ValueError(f"no defeasible label ({' / '.join(allowed)}) found")


def parse_defeasible(text: str) -> str:
    """Prompt C.1 answer: 'more' -> 'strengthener', 'less' -> 'weakener'."""
    return _defeasible(text, ("strengthener", "weakener"))


SCALE5 = {-2: "strongly weakens", -1: "weakens", 0: "no effect", 1: "strengthens", 2: "strongly strengthens"}


def parse_scale5(text: str) -> int | str:
    """The five-point atom scale (-2 strongly weakens .. 0 no effect .. +2 strongly strengthens) or 'invalid'.

    >>> [parse_scale5(t) for t in ["(+2)", "-1", "−2", "no effect", "Strongly weakens.", "(invalid)"]]
    [2, -1, -2, 0, -2, 'invalid']
    """
    body = _before_end(text).replace("−", "-").replace("–", "-")
    head = _first_line(body)
    if re.search(r"\binvalid\b", head, re.I):
        return "invalid"
    number = re.search(r"(?<![\w.])([+-]?)([0-2])(?![\w.])", head)
    if number:
        return int(number.group(1) + number.group(2))
    low = head.lower()
    for value in (-2, 2, 0, -1, 1):  # longest wording first
        if SCALE5[value].rstrip("s") in low or SCALE5[value] in low:
            return value
    for word, value in (("weaken", -1), ("strengthen", 1), ("none", 0)):
        if word in low:
            return value
    raise ValueError("no five-point scale value (-2..+2, scale wording, or 'invalid') found")


def parse_defeasible3(text: str) -> str:
    """Prompt C.2 answer: 'more'/'less'/'none' -> strengthener/weakener/no effect.

    Also accepts a five-point scale value (sign decides) and 'invalid' (returned as 'invalid').
    """
    head = _first_line(_before_end(text)).replace("−", "-")
    if re.search(r"\binvalid\b", head, re.I):
        return "invalid"
    if re.fullmatch(r"[(\s]*[+-]?[0-2][)\s.]*", head):
        v = parse_scale5(head)
        return "strengthener" if v > 0 else "weakener" if v < 0 else "no effect"
    return _defeasible(text, ("strengthener", "weakener", "no effect"))


def parse_questions(text: str) -> list[str]:
    """All questions (lines ending in '?'), prefixes like 'Question:' or numbering removed."""
    out = []
    for line in _before_end(text).splitlines():
        line = re.sub(r"^\s*(?:question|qud)\s*\d*\s*:\s*", "", _BULLET.sub("", line, count=1), flags=re.I).strip()
        line = line.strip("*\"' ")
        if line.endswith("?"):
            out.append(_reject_refusal(line))
    if not out:
        raise ValueError("no question (a line ending in '?') found")
    return out


def parse_question(text: str) -> str:
    """Prompt D.1 answer: the (first) generated question."""
    return parse_questions(text)[0]


def json_object(text: str) -> dict:
    """The JSON object in a model answer (code fences, text around it, trailing commas and "..." tolerated)."""
    body = _strip_fences(text)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object found")
    blob = body[start : end + 1]
    for candidate in (blob, re.sub(r",\s*([\]}])", r"\1", blob.replace("...", ""))):
        try:
            obj = json.loads(candidate)
            if isinstance(obj, dict):
                return obj
        except json.JSONDecodeError:
            continue
    raise ValueError("invalid JSON object")


def parse_facts(text: str) -> list[str]:
    """FactNLI B.1 output ``{"facts": [{"text": ...}, ...]}`` -> list of fact strings ([] is valid)."""
    facts = json_object(text).get("facts")
    if not isinstance(facts, list):
        raise ValueError("JSON has no 'facts' list")
    out = []
    for item in facts:
        fact = item.get("text") if isinstance(item, dict) else item
        if not isinstance(fact, str):
            raise ValueError(f"fact is not text: {item!r}")
        fact = fact.strip().rstrip(",").strip()  # the paper's schema shows "<atomic fact1>," (comma inside)
        if fact:
            out.append(_reject_refusal(fact))
    return out


def parse_fusion(text: str) -> str:
    """FactNLI B.2 output ``{"fusion_result": "..."}`` -> the fused paragraph."""
    try:
        result = json_object(text).get("fusion_result")
    except ValueError:
        m = re.search(r'"fusion_result"\s*:\s*"(.*)"', text, re.S)  # e.g. an unescaped quote inside
        result = m.group(1) if m else None
    if not isinstance(result, str) or not result.strip():
        raise ValueError("no non-empty 'fusion_result' found")
    return _reject_refusal(result.strip())


def _cut_continuation(text: str, next_marker: str) -> str:
    """Drop anything after the answer if the model went on to write another example."""
    text = text.split("###")[0]
    return re.split(rf"\n\s*\n|\n\s*{next_marker}\s*:", text, maxsplit=1)[0] if text.strip() else text


def parse_ftc_spans(text: str) -> dict[str, str]:
    """FTC extraction answer 'A: <span>\\nB: <span>' (the leading 'A:' may be missing) -> {"A", "B"}."""
    lines = [x.strip() for x in _cut_continuation(text.strip(), "Explanation").splitlines() if x.strip()]
    spans: dict[str, str] = {}
    for line in lines:
        m = re.match(r"^([AB])\s*:\s*(.*)$", line)
        if m and m.group(1) not in spans:
            spans[m.group(1)] = m.group(2).strip()
        elif not m and not spans:
            spans["A"] = line  # completion of the trailing 'A:'
    if not spans.get("A") or not spans.get("B"):
        raise ValueError("expected two spans 'A: ...' and 'B: ...'")
    return {"A": spans["A"], "B": spans["B"]}


def parse_ftc_counterfactual(text: str) -> str:
    """FTC C/E transformation answer -> the counterfactual hypothesis."""
    body = text.split("Counterfactual:", 1)[1] if "Counterfactual:" in text else text
    answer = _first_line(_cut_continuation(body.strip(), "Hypothesis"))
    if not answer:
        raise ValueError("empty counterfactual hypothesis")
    return answer


def parse_ftc_counterfactual_pair(text: str) -> dict[str, str]:
    """FTC neutral transformation answer 'A: <hyp>; B: <hyp>' -> {"A": x_cf[A], "B": x_cf[B]}."""
    body = text.split("Counterfactual:", 1)[1] if "Counterfactual:" in text else text
    body = _cut_continuation(body.strip(), "Hypothesis")
    m = re.search(r"^\s*(?:A\s*:)?\s*(?P<a>.+?)\s*(?:;|\n)\s*B\s*:\s*(?P<b>.+?)\s*$", body, re.S)
    if not m or not m.group("a").strip() or not m.group("b").strip():
        raise ValueError("expected 'A: <hypothesis>; B: <hypothesis>'")
    return {"A": m.group("a").strip(), "B": _first_line(m.group("b"))}


PHRASE_LABELS = ("EQUI", "FORW", "BACK", "SIMI", "REL", "OPPO", "UNR")
_PHRASE_PATTERNS = [  # (label, regex) matched as whole words: codes or the paper's full names
    ("UNR", r"UNR|UNRELATED|NOT\s+RELATED|NO\s+(?:SEMANTIC\s+)?RELATION"),
    ("EQUI", r"EQUI|EQUIVALEN(?:T|CE)"),
    ("FORW", r"FORW|FORWARD"),
    ("BACK", r"BACK|BACKWARD"),
    ("SIMI", r"SIMI|SIMILAR(?:ITY)?"),
    ("OPPO", r"OPPO|OPPOSITE|OPPOSITION"),
    ("REL", r"REL|RELATED(?:NESS)?"),
]


_PHRASE_ANY = "|".join(pat for _, pat in _PHRASE_PATTERNS)
_PHRASE_LIST_AFTER = re.compile(  # "EQUI or SIMI", "FORW/BACK": what follows a label in a list of options
    rf"^[A-Za-z]*[\s'\"’”)*]*(?:,|/|\bor\b|\bnor\b)\s*['\"‘“(*]*(?:{_PHRASE_ANY})(?![A-Za-z])", re.I)


def parse_phrase_relation(text: str) -> str:
    """PhrasIS relation: one of EQUI, FORW, BACK, SIMI, REL, OPPO, UNR (codes or full words, any case).

    A negated label ("not EQUI") or one of a list of options ("EQUI or SIMI") is no answer.

    >>> parse_phrase_relation("FORW: the first phrase is more specific.")
    'FORW'
    """
    for source in (_first_line(text), text):
        hits = [(m.start(), label) for label, pat in _PHRASE_PATTERNS
                for m in [re.search(rf"(?<![A-Za-z])(?:{pat})(?![A-Za-z])", source, re.I)] if m]
        if hits:
            start, label = min(hits)
            if _NEGATED.search(source[:start]):
                raise ValueError(f"negated label word: {_clip(source[max(0, start - 30):start + 20])}")
            if _PHRASE_LIST_AFTER.match(source[start:]):
                raise ValueError(f"a list of options, not an answer: {_clip(source[start:start + 40])}")
            return label
    raise ValueError(f"no phrase relation label ({', '.join(PHRASE_LABELS)}) found")


# ---------------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------------

def prompt_modules() -> dict[str, str]:
    """Paper -> the module that registers its templates (keys start with the paper's name): each registered
    paper's `PROMPTS` declaration (`nli_lib.papers`), for the papers that have prompts.

    >>> prompt_modules()["ftc"]
    'nli_lib.ftc.prompts'
    """
    return {p.name: module for p in registry() if (module := declared(p, "PROMPTS"))}


class PromptRegistry(Mapping):
    """Templates by key; a paper's module is imported on the first lookup of one of its keys (all of them
    when the registry is listed), so importing the LLM layer never imports the paper packages. `modules`
    (paper -> module) defaults to the papers' declarations, read when first needed."""

    def __init__(self, modules: Mapping[str, str] | None = None):
        self._given = None if modules is None else dict(modules)
        self._templates: dict[str, PromptTemplate] = {}
        self._loaded: set[str] = set()

    @property
    def _modules(self) -> dict[str, str]:
        return prompt_modules() if self._given is None else self._given

    def register(self, *templates: PromptTemplate) -> None:
        for t in templates:
            if t.name in self._templates and self._templates[t.name] is not t:
                raise ValueError(f"prompt {t.name!r} is registered twice")
            self._templates[t.name] = t

    def _load(self, paper: str) -> None:
        if paper in self._modules and paper not in self._loaded:
            import importlib

            self._loaded.add(paper)
            importlib.import_module(self._modules[paper])

    def __getitem__(self, key: str) -> PromptTemplate:
        if key not in self._templates:
            self._load(str(key).split(".", 1)[0])
        try:
            return self._templates[key]
        except KeyError:
            raise KeyError(f"no prompt {key!r}; known: {', '.join(sorted(self))}") from None

    def __iter__(self) -> Iterator[str]:
        for paper in self._modules:
            self._load(paper)
        return iter(dict(sorted(self._templates.items())))

    def __len__(self) -> int:
        return sum(1 for _ in self)


PROMPTS = PromptRegistry()
register = PROMPTS.register
