"""The papers' LLM prompts as templates, with tolerant parsers and the exemplars the papers print.

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
>>> PROMPTS["atoms.B1"].parse("I cannot tell.")
Parsed(ok=False, value=None, raw='I cannot tell.', error='no NLI label (e/n/c or entailment/neutral/contradiction) found')

Refusals, empty answers and echoes of the prompt are rejected before any parser sees them (`junk_reason`),
so a refusal never becomes an atom or a label word found inside it:

>>> PROMPTS["atoms.A1"].parse("Sorry, I can't help with that.").error
'refusal: "Sorry, I can\\'t help with that."'
>>> PROMPTS["atoms.B1"].parse("As an AI language model, I cannot determine whether this follows.").ok
False
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

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
    paper: str  # "atoms" | "factnli" | "ftc" | "phrasis"
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
        return ([{"role": "system", "content": self.system}] if self.system else []) + [{"role": "user", "content": user}]

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

    @property
    def fixed_sentences(self) -> tuple[str, ...]:
        """Sentences of the prompt's own wording (40+ characters, placeholders cut out), lower-cased."""
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
    r"|unfortunately,?\s+(?:i|we)\b)",
    re.I)


def is_refusal(text: str) -> bool:
    """Whether text opens like a refusal or an assistant disclaimer ("Sorry, I can't ...", "As an AI ...").

    >>> [is_refusal(t) for t in ["Sorry, I can't help with that.", "I'm sorry, but I cannot", "As an AI model, e",
    ...  "I cannot assist with this request.", "1. The man is sorry.", "I cannot swim.", "n"]]
    [True, True, True, True, False, False, False]
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
_HEADER = re.compile(r"^\s*(facts|atomic facts|atoms|here (are|is)\b.*|sure\b.*)\s*:?\s*$", re.I)


def _before_end(text: str) -> str:
    return text.split("[END]")[0]


def _strip_fences(text: str) -> str:
    return re.sub(r"```(?:json)?", "", text)


def parse_atoms(text: str) -> list[str]:
    """One atom per line, numbered or bulleted, up to [END] (a JSON list of strings also works)."""
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
        atom = _BULLET.sub("", line, count=1).strip().strip('"').strip()
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


def parse_nli_label(text: str) -> str:
    """'e'/'n'/'c' (Prompt B.1) or entailment/neutral/contradiction, tolerant of case, quotes, explanations."""
    body = _before_end(text)
    head = re.sub(r"^(answer|label|prediction|output)\s*(is)?\s*[:\-]?\s*", "", _first_line(body), flags=re.I)
    letter = re.match(r"^[\s'\"‘’“(\[*]*([enc])(?![a-z])", head, re.I)
    if letter:
        return _NLI_LETTER[letter.group(1).lower()]
    quoted = re.search(r"(?:answer|label)\s*(?:is)?\s*[:\-]?\s*[\s'\"‘’“(\[*]*([enc])(?![a-z])", body, re.I)
    if quoted:
        return _NLI_LETTER[quoted.group(1).lower()]
    for source in (head, body):
        hits = [(m.start(), label) for label, pat in _NLI_WORDS for m in [re.search(rf"\b(?:{pat})", source, re.I)] if m]
        if hits:
            start, label = min(hits)
            if _NEGATED.search(source[:start]):  # "is not entailed by": a negated label word names no label
                raise ValueError(f"negated label word: {_clip(source[max(0, start - 30):start + 20])}")
            return label
    raise ValueError("no NLI label (e/n/c or entailment/neutral/contradiction) found")


_NEGATED = re.compile(r"(?:\b(?:not|no|never|neither|nor|cannot)|n['’]t)\s+(?:\w+\s+){0,2}$", re.I)


_DEFEASIBLE_WORDS = [
    ("no effect", r"none|no effect|unchanged|neither|no change"),
    ("strengthener", r"more|strengthen\w*|stronger"),
    ("weakener", r"less|weaken\w*|weaker"),
]


def _defeasible(text: str, allowed: tuple[str, ...]) -> str:
    body = _before_end(text)
    for source in (_first_line(body), body):
        hits = [(m.start(), label) for label, pat in _DEFEASIBLE_WORDS if label in allowed
                for m in [re.search(rf"(?<![a-z])(?:{pat})(?![a-z])", source, re.I)] if m]
        if hits:
            return min(hits)[1]
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


def _json_object(text: str) -> dict:
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
    facts = _json_object(text).get("facts")
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
        result = _json_object(text).get("fusion_result")
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
    lines = [l.strip() for l in _cut_continuation(text.strip(), "Explanation").splitlines() if l.strip()]
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


def parse_phrase_relation(text: str) -> str:
    """PhrasIS relation: one of EQUI, FORW, BACK, SIMI, REL, OPPO, UNR (codes or full words, any case)."""
    for source in (_first_line(text), text):
        hits = [(m.start(), label) for label, pat in _PHRASE_PATTERNS
                for m in [re.search(rf"(?<![A-Za-z])(?:{pat})(?![A-Za-z])", source, re.I)] if m]
        if hits:
            return min(hits)[1]
    raise ValueError(f"no phrase relation label ({', '.join(PHRASE_LABELS)}) found")


# ---------------------------------------------------------------------------------------------------
# Exemplars printed in the papers (structured; reusable as evaluation items)
# ---------------------------------------------------------------------------------------------------
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
    [{"sentence": r["hypothesis"], "atoms": [a["atom"] for a in r["atoms"] if a["scale"] != "invalid"],
      "invalid_atoms": [a["atom"] for a in r["atoms"] if a["scale"] == "invalid"], "source": r["source"]}
     for r in _T1_DNLI]
    + [{"sentence": r["hypothesis"], "atoms": [a for a, l in r["atoms"] if l != "invalid"],
        "invalid_atoms": [a for a, l in r["atoms"] if l == "invalid"], "source": r["source"]} for r in _T1_SNLI]
    + [
        {"sentence": "The man and woman are going to a movie in the city.",
         "atoms": ["There are two people.", "There are two people who are a man and a woman.", "There are people going.",
                   "There are people going to a movie.", "There is a destination for the people going.",
                   "The destination is a movie.", "There is a city.", "The people are going to the city."],
         "invalid_atoms": [], "missing_atoms": ["The movie is in the city."], "source": "atoms Table 8"},
        {"sentence": "The man is riding on the sidewalk.",
         "atoms": ["There is a person.", "There is a person who is a man.", "There is a person riding.",
                   "There is a person riding on something.", "The thing the person is riding on is a sidewalk."],
         "invalid_atoms": [], "source": "atoms Appendix B.1"},
        {"sentence": _T7["hypothesis"], "atoms": list(_T7["atoms"]), "invalid_atoms": [], "source": "atoms Table 7"},
    ]
)

#: SNLI items (B.1): full P-H pairs and the (premise, atom) sub-problems of Table 1 with gold labels.
NLI_EXAMPLES: tuple[dict, ...] = tuple(
    [{"premise": "A little girl in a lush green field", "hypothesis": "A little girl rides her ox in a desert",
      "label": "contradiction", "kind": "full", "source": "atoms Section 2.1"}]
    + [{"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "kind": "full",
        "source": r["source"]} for r in _T1_SNLI]
    + [{"premise": r["premise"], "hypothesis": a, "label": l, "kind": "atom", "source": r["source"]}
       for r in _T1_SNLI for a, l in r["atoms"] if l != "invalid"]
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
    {"atom": "The thing the grandpa is wearing is a shirt.", "qud": "What is the person wearing?", "source": "atoms Table 9"},
    {"atom": "The two women are sisters.", "qud": "What is the relationship between the two people?", "source": "atoms Table 9"},
    {"atom": "The bike is brand new.", "qud": "What is the condition of the object?", "source": "atoms Table 9"},
    {"atom": "The girls are posing.", "qud": "What are the people doing?", "source": "atoms Table 9"},
    {"atom": "The vest that the person wears is orange.", "qud": "What color is the vest that the man is wearing?",
     "source": "atoms Figure 3"},
    {"atom": "The person stands.", "qud": "What is the man doing on the dock?", "source": "atoms Figure 3"},
    {"atom": "The person is on a dock.", "qud": "Where is the man?", "source": "atoms Figure 3"},
)

# FTC paper, Table 13 (extraction) and Table 14 (transformation). The paper primed GPT-Neo with 20 examples
# per label but prints 5 per label; only those are here. Text extraction interleaved the columns, so row
# boundaries were reconstructed from the table layout; every string is the paper's (typos kept: "he has a
# map" for "mop", "If your pausing", "they gets ready"; hyphenated line breaks "class-room",
# "con-struction" rejoined). Table 14 C/E row 2 and row 3 swap which span is A, as printed.
FTC_EXTRACT_EXAMPLES: dict[str, tuple[dict, ...]] = {
    "C": (
        {"explanation": "Jail cells aren’t pastel-colored or a classroom.", "A": "jail cells",
         "B": "pastel-colored or a classroom"},
        {"explanation": "The two men cannot both be at a construction site and also never have been at a "
                        "construction site.", "A": "at a construction site",
         "B": "never have been at a construction site."},
        {"explanation": "One cannot be happy and angry at the same time.", "A": "happy", "B": "angry"},
        {"explanation": "a dog is not a cat.", "A": "dog", "B": "cat"},
        {"explanation": "Star is not balloon", "A": "star", "B": "balloon"},
    ),
    "E": (
        {"explanation": "The guy on the phone is sitting at a desk.", "A": "guy on the phone", "B": "sitting at a desk"},
        {"explanation": "People is a generalization of many people.", "A": "people", "B": "many people"},
        {"explanation": "Jockeys are people, so jockeys riding horses are people riding horses.", "A": "jockeys",
         "B": "people"},
        {"explanation": "If people are sitting on blankets and the blankets are in the park, then the people are "
                        "sitting at the park as well, because they cannot be in a separate location from the "
                        "blankets they are sitting upon.", "A": "people sitting on blankets",
         "B": "people sitting on blankets in the park"},
        {"explanation": "If your pausing for a photo then they are having their photo taken", "A": "pausing for a photo",
         "B": "having photo taken"},
    ),
    "N": (
        {"explanation": "Looking on does not mean waiting for their turn and doesn’t mean they are at a competition.",
         "A": "looking", "B": "waiting for their turn and they are at a competition"},
        {"explanation": "Just because a track athlete is carrying a large pole it does not mean they gets ready for "
                        "their turn at the pole vault.", "A": "A track athlete is carrying a large pole",
         "B": "A track athlete gets ready for their turn at the pole vault."},
        {"explanation": "There is no evidence that the women talking to the man outside the building are sad",
         "A": "The women talking to the man outside the building", "B": "the women are sad"},
        {"explanation": "Just because he has a mop, does not mean he has a broom.", "A": "he has a map",
         "B": "he has a broom"},
        {"explanation": "No way to know that is alone because he lost his friends in a war.", "A": "he is alone",
         "B": "he lost his friends in a war"},
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

#: FactNLI Appendix G (Table 10), level 1 of the SNLI case study (label entailment).
FACTNLI_CASE_STUDY: dict = {
    "premise": "A woman wearing a yellow tank top and white pants looking into a window on a city street.",
    "hypothesis": "A woman wearing a tank top and pants looks through some glass.",
    "label": "entailment",
    "L1_facts": ["Carnaby Street is a shopping street in Soho, City of Westminster.", "Carnaby Street is pedestrianised.",
                 "Street fashion is associated with youth culture.", "Street fashion is seen in major urban centers."],
    "L1_premise": "A woman wearing a yellow tank top and white pants is looking into a window on a city street, where "
                  "street fashion, often associated with youth culture, is prominently displayed in major urban "
                  "centers like Carnaby Street, a pedestrianised shopping street in Soho, City of Westminster.",
    "L1_hypothesis": "A woman wearing a tank top and pants looks through some glass, embodying the street fashion that "
                     "is often seen in major urban centers and is closely associated with youth culture.",
    "source": "factnli Appendix G, Table 10",
}

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

# FTC: layout companion-authored (the paper prints only the example rows).
_FTC_SYSTEM = "Complete the last example in exactly the same format as the examples. Output only the completion."
_FTC_EXTRACT = "{shots}Explanation: {explanation}\nA:"
_FTC_TRANSFORM = "{shots}Hypothesis: {hypothesis}\nA: {A}\nB: {B}\nCounterfactual:"

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

_LETTER = {"entailment": "e", "neutral": "n", "contradiction": "c"}
_MORE_LESS = {"strengthener": "more", "weakener": "less", "no effect": "none"}

_VERBATIM = "Verbatim from the paper (bold markers dropped)."
_ATOMS_SHOTS = ("The paper's own prompt exemplars are not printed; `exemplars` holds the worked examples it does "
                "print (pass shots=k, or shots=[...] with your own rows).")


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
        name=f"ftc.transform.{label}", paper="ftc", section="Appendix 7.9, Table 14", system=_FTC_SYSTEM,
        template=_FTC_TRANSFORM, exemplars=rows, default_shots=len(rows),
        parser=parse_ftc_counterfactual_pair if label == "N" else parse_ftc_counterfactual,
        shot_format=lambda r: f"Hypothesis: {r['hyp_original']}\nA: {r['A']}\nB: {r['B']}\nCounterfactual: {r['hyp_cf']}",
        notes="Example rows verbatim from Table 14 (reconstructed from interleaved columns); layout and system "
              "line companion-authored." + (" C and E share one example set, as in the paper." if label != "N" else ""),
    )


PROMPTS: dict[str, PromptTemplate] = {
    t.name: t
    for t in [
        PromptTemplate(
            name="atoms.A1", paper="atoms", section="Appendix A, Prompt A.1: Atom Generation", system=None,
            template=_A1, parser=parse_atoms, exemplars=ATOM_DECOMPOSITIONS,
            shot_format=lambda r: f"SENTENCE: {r['sentence']}\n\nFACTS:\n" + "\n".join(f"- {a}" for a in r["atoms"]) + "\n[END]",
            notes=_VERBATIM + " " + _ATOMS_SHOTS,
        ),
        PromptTemplate(
            name="atoms.B1", paper="atoms", section="Appendix B, Prompt B.1: Traditional NLI", system=None,
            template=_B1, parser=parse_nli_label, exemplars=NLI_EXAMPLES,
            shot_format=lambda r: f"Premise: {r['premise']}\nHypothesis: {r['hypothesis']}\n\n{_B1_QUESTION}\n"
                                  f"{_LETTER[r['label']]}\n" + (f"{r['explanation']}\n" if r.get("explanation") else "") + "[END]",
            notes=_VERBATIM + " The paper used 12 SNLI dev exemplars (not printed). " + _ATOMS_SHOTS,
        ),
        PromptTemplate(
            name="atoms.C1", paper="atoms", section="Appendix C, Prompt C.1: Defeasible Inference", system=None,
            template=_C1, parser=parse_defeasible, exemplars=DEFEASIBLE_EXAMPLES,
            shot_format=lambda r: _c_shot(r),
            notes=_VERBATIM + " The paper used 10 δ-SNLI exemplars (not printed). " + _ATOMS_SHOTS,
        ),
        PromptTemplate(
            name="atoms.C2", paper="atoms", section="Appendix C, Prompt C.2: Defeasible Inference Atoms", system=None,
            template=_C2, parser=parse_defeasible3, exemplars=DEFEASIBLE_ATOM_EXAMPLES,
            shot_format=lambda r: _c_shot(r),
            notes=_VERBATIM + " Prompt C.2 asks for more/less/none; the -2..+2 scale is the paper's human annotation "
                  "(see parse_scale5 and the 'scale' of DEFEASIBLE_ATOM_EXAMPLES). " + _ATOMS_SHOTS,
        ),
        PromptTemplate(
            name="atoms.D1", paper="atoms", section="Appendix D, Prompt D.1: QUD Generation", system=None,
            template=_D1, parser=parse_question, exemplars=QUD_EXAMPLES,
            shot_format=lambda r: f"Sentence: {r['atom']}\nQuestion: {r['qud']}",
            notes=_VERBATIM + " The placeholder printed as 'critical atom' is {critical_atom}. The paper used 15 "
                  "exemplars (not printed) with gpt-4o at temperature 0.01. " + _ATOMS_SHOTS,
        ),
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
        *[_ftc_extract(label) for label in ("C", "E", "N")],
        *[_ftc_transform(label) for label in ("C", "E", "N")],
        PromptTemplate(
            name="phrasis.relation", paper="phrasis", section="companion-authored (labels: PhrasIS Appendix A.1)",
            system="You are an expert annotator of inference relations between short phrases.",
            template=_PHRASIS, parser=parse_phrase_relation, exemplars=PHRASIS_EXAMPLES,
            shot_format=lambda r: f"PHRASE 1: {r['phrase1']}\nPHRASE 2: {r['phrase2']}\nLabel: {r['label']}",
            notes="COMPANION-AUTHORED: the PhrasIS paper evaluates fine-tuned classifiers and prints no prompt. "
                  "Label definitions quoted from its Appendix A.1; exemplars are its Table 1 pairs.",
        ),
    ]
}


def _c_shot(r: dict) -> str:
    return (f"Situation: {r['premise']}\n\nHypothesis: {r['hypothesis']}\n\nEvidence: {r['update']}\n\n"
            "Does the evidence make the hypothesis about the situation more or less likely to be true?\n"
            f"{_MORE_LESS[r['label']]}\n" + (f"{r['explanation']}\n" if r.get("explanation") else "") + "[END]")
