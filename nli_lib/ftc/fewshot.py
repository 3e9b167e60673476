"""§2.4 extract and transform with few-shot priming (FSP), through the cached chat client.

The paper primes GPT-Neo / GPT2-XL with 20 hand-labelled examples per label (Tables 13 and 14 print five
per label; four for the neutral transform). Prompts come from the registry (`ftc.extract.{C,E,N}`,
`ftc.transform.{C,E,N}`); every call goes through the call cache.

* **paper profile**: `FewShotRewriter.from_llm(make_llm(profile))` — an OpenAI-compatible endpoint.
  `exemplar_rows(..., n=20, pool=...)` fills the printed rows up to 20 with rows taken from a pool of
  e-SNLI pairs (dev, so disjoint from the test pairs scored) on which the regex pipeline succeeded.
  Those extra rows are COMPANION-DERIVED (regex-labelled, not hand-labelled as in the paper); pass
  `n=None` to prime with the printed rows only.
* **offline profile**: `FewShotRewriter.offline()` — `OfflineLLM` stand-ins that read the query out of
  the rendered prompt and answer in the prompt's format, so they are cached and parsed like an LLM:
  extraction by `rule_extract` (cue splitting with a broader cue lexicon than Tables 15–17, companion-
  authored), transformation by `align_transform` (fuzzy span alignment and, for neutral, the
  "subject + span" rewrites of the Table 14 neutral rows). They are NOT language models; tables label
  them `offline://ftc-*`.

>>> rule_extract("one cannot be happy and angry at the same time .", "contradiction")
('happy', 'angry')
>>> align_transform("an angry man grills vegetables on a barbecue .", "angry", "happy", "contradiction")
'a happy man grills vegetables on a barbecue .'
>>> align_transform("The skateboarders are waiting for their turn at a competition .", "looking",
...                 "waiting for their turn", "neutral")
('The skateboarders are looking at a competition .', 'The skateboarders are waiting for their turn at a competition .')
>>> align_transform("Two kids walk home from school .", "kids walking down a sidewalk",
...                 "kids are going home from school", "neutral")
('Two kids walking down a sidewalk .', 'The kids are going home from school .')
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from .. import calls as call_ledger
from ..hashing import files_hash
from ..llm import PROMPTS, OfflineLLM, Parsed
from ..llm.context import PromptTooLong, fit_shots
from ..text import untokenize_ptb, word_spans
from .logic import SHORT, as_label
from .prompts import FTC_EXTRACT_EXAMPLES, FTC_TRANSFORM_EXAMPLES
from .templates import clean_span, extract_regex, has_content
from .text import AUXILIARIES, DETERMINERS, align_span, replace_at
from .validity import check_counterfactual, tag

PAPER_SHOTS = 20  # priming examples per label in the paper (§3.1)
# Versions the stand-ins' cache keys: any change to their code (here, text.py, templates.py) gives new keys.
_SOURCE_HASH = files_hash((Path(__file__).parent / f for f in ("fewshot.py", "text.py", "templates.py", "../text.py")),
                          length=10)

# ---------------------------------------------------------------------------------------------------
# Offline stand-in for the extraction prompt: ordered cue rules (companion-authored)
# ---------------------------------------------------------------------------------------------------

_S = r"(?P<{}>(?:[^,.;:!?]|(?<=\d)[.,](?=\d))+?)"  # a span stops at punctuation, not inside "9.99"
_NEG = r"(?:can ?not|can't|cannot|could not|couldn't|cant)"
_LEAD = r"(?:^|(?<=[.;:!?,])\s*|\b(?:because|since|if|as|so)\s+)"


def _rules(raw: list[tuple[str, str]]) -> list[tuple[str, re.Pattern]]:
    return [(name, re.compile(pat.replace("{A}", _S.format("A")).replace("{B}", _S.format("B")))) for name, pat in raw]


_END = r"\s*(?=[,;:!?]|\.(?!\d)|$)"
EXTRACT_RULES: dict[str, list[tuple[str, re.Pattern]]] = {
    "contradiction": _rules([
        ("both-and", rf"{_NEG}\s+(?:be\s+|both\s+|be\s+both\s+)?{{A}}\s+and\s+(?:also\s+)?{{B}}\s+(?:at the same time|simultaneously|at once|together)\b"),
        ("either-or", r"\beither\s+{A}\s+or\s+{B}" + _END),
        ("different", _LEAD + r"{A}\s+and\s+{B}\s+(?:are|is)\s+(?:two\s+)?(?:different|not the same)\b"),
        ("is-not", _LEAD + r"{A}\s+(?:is|are)(?:\s+not|n't)\s+(?:the same as\s+|a\s+|an\s+)?{B}" + _END),
        ("opposite", _LEAD + r"{A}\s+(?:is|are)\s+(?:the opposite of|different (?:from|than))\s+{B}" + _END),
        ("cannot-while", rf"{_NEG}\s+(?:be\s+)?{{A}}\s+(?:while|if|when|and)\s+{{B}}" + _END),
        ("x-cannot-be", _LEAD + rf"{{A}}\s+{_NEG}\s+(?:be\s+|have\s+)?{{B}}" + _END),
        ("instead", _LEAD + r"{A}\s+(?:instead of|rather than|not)\s+{B}" + _END),
        ("or", _LEAD + r"{A}\s+or\s+{B}" + _END),
        ("negation", _LEAD + r"{A}\s+(?:do|does|did|is|are|was|were)(?:\s+not|n't)\s+{B}" + _END),
    ]),
    "entailment": _rules([
        ("if-then", r"\bif\s+{A}(?:\s*,\s*|\s+)then\s+(?:(?:they|he|she|it)\s+)?(?:(?:must|has to|have to)\s+)?(?:be\s+)?{B}" + _END),
        ("synonym", _LEAD + r"{A}\s+(?:is|are)\s+(?:a |an |another |the )?(?:type of|kind of|form of|same as|the same as|"
                            r"(?:rephrasing|rephrase|paraphrase|paraphrasing|rewording|restatement) of|"
                            r"(?:different |other )?(?:wording|word|words|term|phrase|way to say) for|"
                            r"way of saying|synonym (?:for|of)|synonymous with|generalization of|more general (?:way of saying|term for)|"
                            r"part of|example of)\s+{B}" + _END),
        ("implies", _LEAD + r"{A}\s+(?:implies|imply|means|mean|indicates|entails|equals|refers to|suggests|shows)\s+(?:that\s+)?{B}" + _END),
        ("copula", _LEAD + r"{A}\s+(?:is|are|was|were)\s+(?:a |an )?{B}" + _END),
        ("so", _LEAD + r"{A}\s*,?\s+(?:so|thus|therefore|then)\s+{B}" + _END),
        ("must-be", _LEAD + r"{A}\s+(?:must be|has to be|have to be|would be|is also|are also)\s+{B}" + _END),
    ]),
    "neutral": _rules([
        ("just-because", r"\b(?:just because|because|that|if)\s+{A}\s*,?\s*(?:it\s+|this\s+|that\s+)?(?:does not|doesn't|doesnt|did not|didn't|is not|isn't)\s+"
                         r"(?:necessarily\s+|always\s+|automatically\s+)?(?:mean|imply|make|indicate|suggest)s?\s+(?:that\s+)?{B}" + _END),
        ("does-not-mean", _LEAD + r"{A}\s+(?:does not|doesn't|doesnt|did not|didn't|is not|isn't)\s+(?:necessarily\s+|always\s+)?"
                          r"(?:mean|imply|make|indicate|suggest)s?\s+(?:that\s+)?{B}" + _END),
        ("not-all", r"\bnot (?:all|every|everyone|everybody|everything)\s+{A}\s+(?:is|are|will|can|have|has|do)\s+{B}" + _END),
        ("not-necessarily", _LEAD + r"{A}\s+(?:is|are|does|do)(?:\s+not|n't)\s+(?:necessarily|always)\s+{B}" + _END),
        ("no-evidence", r"\b(?:no evidence|no way to know|not known|unknown|we don't know|we do not know|can't tell|cannot tell|not sure|no indication)\s+(?:that\s+|if\s+|whether\s+)?{A}\s+(?:is|are)\s+{B}" + _END),
        ("may-not", _LEAD + r"{A}\s+(?:may|might|could|can)\s+(?:not\s+|also\s+)?(?:be\s+)?{B}" + _END),
        ("without", r"\bcan\s+{A}\s+without\s+{B}" + _END),
        ("not-have-to", _LEAD + r"{A}\s+(?:does not|doesn't|doesnt|do not|don't)\s+(?:have|need)\s+to\s+(?:be\s+)?{B}" + _END),
        ("negation", _LEAD + r"{A}\s+(?:is|are|does|do)(?:\s+not|n't)\s+{B}" + _END),
    ]),
}


def rule_extract(explanation: str, label: str) -> tuple[str, str] | None:
    """Offline stand-in for FSP extraction: the first cue rule (in priority order) that yields two spans."""
    text = untokenize_ptb(explanation)
    for _, rx in EXTRACT_RULES[as_label(label)]:
        for m in rx.finditer(text):
            a, b = clean_span(m.group("A")), clean_span(m.group("B"))
            if has_content(a) and has_content(b) and a != b:
                return a, b
    ex = extract_regex(explanation, label)  # the paper's templates as a last resort
    return (ex.A, ex.B) if ex.ok else None


# ---------------------------------------------------------------------------------------------------
# Offline stand-in for the transformation prompt: fuzzy alignment + neutral "subject + span" rewrites
# ---------------------------------------------------------------------------------------------------

_PLURAL_WORDS = {"two", "three", "four", "five", "several", "many", "some", "people", "men", "women", "children",
                 "they", "both", "we"}
_PRONOUNS = {"he", "she", "they", "it", "there", "we", "someone", "somebody", "people"}
_INDEFINITE_PRONOUNS = {"everyone", "everybody", "anyone", "anybody", "nobody", "everything", "something", "nothing"}


def _subject(hypothesis: str) -> tuple[str, bool]:
    """The hypothesis's subject phrase (words before the first auxiliary or -ing word) and whether it is plural."""
    ws = word_spans(hypothesis)
    cut = next((i for i, (w, _, _) in enumerate(ws) if i > 0 and (w in AUXILIARIES or w.endswith("ing"))), None)
    if cut is None:
        cut = min(2, len(ws))
    subj = hypothesis[: ws[cut - 1][2]] if cut else ""
    low = [w for w, _, _ in ws[:cut]]
    verb = ws[cut][0] if cut < len(ws) else ""
    plural = bool(low) and (verb in {"are", "were", "have"} or low[0] in _PLURAL_WORDS
                            or (low[-1].endswith("s") and not low[-1].endswith("ss")))
    return subj.strip(), plural


def is_clause(span: str) -> bool:
    """Whether a span reads as a sentence of its own (a pronoun/determiner subject, or a verb after word 1)."""
    ws = [w for w, _, _ in word_spans(span)]
    return bool(ws) and (ws[0] in _PRONOUNS or any(w in AUXILIARIES for w in ws[1:])
                         or (ws[0] in DETERMINERS | _PLURAL_WORDS and len(ws) > 2))


_SUBJECT_PRONOUN = re.compile(r"^(he|she|they)(?='s|'re|\b)", re.IGNORECASE)


def _resolve_pronoun(hypothesis: str, clause: str) -> str:
    """A clause's leading he/she/they replaced by the hypothesis's subject when their number agrees (Table 14
    resolves them too: "he is alone" -> "There is an old man sitting alone").

    >>> _resolve_pronoun("Two women are running late for a meeting .", "they are running late for something")
    'Two women are running late for something'
    >>> _resolve_pronoun("A man is sailing to Cuba .", "he's sailing"), _resolve_pronoun("A man sails .", "they sail")
    ('A man is sailing', 'they sail')
    """
    m = _SUBJECT_PRONOUN.match(clause)
    subj, plural = _subject(hypothesis)
    first = (word_spans(subj)[:1] or [("", 0, 0)])[0][0]
    if m is None or not subj or first in _PRONOUNS or plural != (m.group(1).lower() == "they"):
        return clause
    rest = clause[m.end():]
    if rest.startswith("'s"):
        rest = " is" + rest[2:]
    elif rest.startswith("'re"):
        rest = " are" + rest[3:]
    return subj + rest


def compose(hypothesis: str, span: str) -> str:
    """A hypothesis built from `span` the way the Table 14 neutral rows do: the span itself when it is
    a clause (its he/she/they resolved to the hypothesis's subject, a bare noun subject given "the"), else
    the hypothesis's subject + (is/are) + span.

    >>> compose("The young girl loves to run .", "girl is running")
    'The girl is running .'
    """
    span = span.strip().rstrip(".")
    first = (word_spans(span)[:1] or [("", 0, 0)])[0][0]
    if is_clause(span):
        span = _resolve_pronoun(hypothesis, span)
        head = tag(span)[:1]
        if head and head[0][1] in ("NN", "NNS") and head[0][0] not in _PRONOUNS | _INDEFINITE_PRONOUNS:
            span = "the " + span  # spans lose their determiner (`clean_span`); a sentence needs one back
        return span[:1].upper() + span[1:] + " ."
    subj, plural = _subject(hypothesis)
    if first in AUXILIARIES:
        return f"{subj} {span} ."
    return f"{subj} {'are' if plural else 'is'} {span} ."


def _rank(m) -> tuple:
    return (-1, 0) if m is None else ({"exact": 2, "stem": 1, "partial": 0}[m.kind], m.score)


def _present(m) -> bool:
    return m is not None and (m.kind != "partial" or m.score >= 0.5)


def align_transform(hypothesis: str, a: str, b: str, label: str):
    """Offline stand-in for FSP transformation: a string (C, E) or the pair (x_cf[A], x_cf[B]) for N.

    C, E: the span that occurs in the hypothesis (fuzzy alignment; verbatim beats stem beats partial,
    then coverage) is replaced by the other; when neither occurs, or both equally well, there is nothing
    to substitute and the hypothesis comes back unchanged (which the pipeline counts as a failure). N: x_cf[A] is A as a sentence when A is a clause, else the hypothesis
    with B's window replaced by A (or subject + A); x_cf[B] likewise with B.
    """
    label = as_label(label)
    ma, mb = align_span(hypothesis, a), align_span(hypothesis, b)
    if label != "neutral":
        ra = _rank(ma) if _present(ma) else (-1, 0)
        rb = _rank(mb) if _present(mb) else (-1, 0)
        if ra == rb:  # neither occurs, or both equally well: nothing to substitute
            return hypothesis
        return replace_at(hypothesis, ma, b) if ra > rb else replace_at(hypothesis, mb, a)
    if is_clause(a):
        x_a = compose(hypothesis, a)
    else:
        x_a = replace_at(hypothesis, mb, a) if _present(mb) else compose(hypothesis, a)
    if is_clause(b):
        x_b = compose(hypothesis, b)
    elif _present(ma):
        x_b = replace_at(hypothesis, ma, b)
    elif _present(mb):
        x_b = replace_at(hypothesis, mb, b)
    else:
        x_b = compose(hypothesis, b)
    return x_a, x_b


# ---------------------------------------------------------------------------------------------------
# Prompt plumbing: read the query back out of a rendered prompt (what the stand-ins see)
# ---------------------------------------------------------------------------------------------------

def _last_user(messages) -> str:
    return [m["content"] for m in messages if m.get("role") == "user"][-1]


def query_explanation(messages) -> str:
    """The explanation of the final (unanswered) example of an extraction prompt."""
    text = _last_user(messages)
    return text.rsplit("Explanation: ", 1)[1].rsplit("\nA:", 1)[0].strip()


def query_transform(messages) -> tuple[str, str, str]:
    """(hypothesis, A, B) of the final example of a transformation prompt."""
    block = _last_user(messages).rsplit("Hypothesis: ", 1)[1]
    hyp, rest = block.split("\nA: ", 1)
    a, rest = rest.split("\nB: ", 1)
    b = rest.rsplit("\nCounterfactual:", 1)[0]
    return hyp.strip(), a.strip(), b.strip()


def _extract_generator(label: str):
    def generate(messages) -> str | None:
        spans = rule_extract(query_explanation(messages), label)
        return None if spans is None else f"A: {spans[0]}\nB: {spans[1]}"  # None: no cue rule applies
    return generate


def _transform_generator(label: str):
    def generate(messages) -> str:
        out = align_transform(*query_transform(messages), label)
        return f"A: {out[0]}; B: {out[1]}" if isinstance(out, tuple) else out
    return generate


# ---------------------------------------------------------------------------------------------------
# Exemplars and the rewriter
# ---------------------------------------------------------------------------------------------------

def exemplar_rows(step: str, label: str, n: int | None = PAPER_SHOTS, pool: pd.DataFrame | None = None,
                  seed: int = 0) -> list[dict]:
    """Priming rows for `step` ('extract' | 'transform') and `label`: the paper's printed rows, then
    (if `n` and `pool` are given) regex-derived rows from `pool` up to `n` (companion-derived, see module doc).

    `pool` is a frame of pipeline rows (`counterfactual_rows(..., 'regex', 'regex')` output) with ok rows;
    a row primes only when its counterfactual passes `validity.check_counterfactual` (a neutral row needs
    both x_cf[A] and x_cf[B] to pass; an extraction row, some slot of its pair).
    C and E transformation rows are one shared set drawn from both labels, as in the paper.
    """
    key = SHORT[as_label(label)]
    printed = list(FTC_EXTRACT_EXAMPLES[key] if step == "extract" else FTC_TRANSFORM_EXAMPLES["N" if key == "N" else "CE"])
    if not n or pool is None or len(printed) >= n:
        return printed[: n or None]
    # C and E share one transformation set (Table 14 caption), so its extra rows come from both labels.
    same_set = ["entailment", "contradiction"] if step == "transform" and key != "N" else [as_label(label)]
    rows = pool[pool["label"].isin(same_set) & pool["ok"]]
    # Only well-formed counterfactuals prime, whatever the pool's own ok flag says (the same check as the pipeline).
    sources = rows["explanation"] if "explanation" in rows else [None] * len(rows)
    premises = rows["premise"] if "premise" in rows else [None] * len(rows)
    valid = [check_counterfactual(h, x, s, source=z, premise=p).ok
             for h, x, s, z, p in zip(rows["hypothesis"], rows["x_cf"], rows["slot"], sources, premises)]
    rows = rows.loc[pd.Series(valid, index=rows.index, dtype=bool)]
    if step == "extract":
        rows = rows.drop_duplicates("pair_id").sample(frac=1.0, random_state=seed)
        extra = [{"explanation": r.explanation, "A": r.A, "B": r.B} for r in rows.itertuples()]
    elif key == "N":
        wide = rows.pivot_table(index=["pair_id", "hypothesis", "A", "B"], columns="slot", values="x_cf",
                                aggfunc="first").dropna().reset_index().sample(frac=1.0, random_state=seed)
        extra = [{"hyp_original": r.hypothesis, "A": r.A, "B": r.B, "hyp_cf": f"A: {r['N[A]']}; B: {r['N[B]']}"}
                 for _, r in wide.iterrows()]
    else:
        rows = rows.sample(frac=1.0, random_state=seed)  # same rows for C and E: the same shared set
        extra = [{"hyp_original": r.hypothesis, "A": r.A, "B": r.B, "hyp_cf": r.x_cf} for r in rows.itertuples()]
    for row in extra:
        row["source"] = "companion: regex-labelled e-SNLI pair"
    return printed + extra[: n - len(printed)]


def shot_sets(pool: pd.DataFrame | None, n: int | None = PAPER_SHOTS, seed: int = 0) -> dict:
    """{(step, label): exemplar rows} for every FTC prompt (see `exemplar_rows`); `FewShotRewriter.shots`."""
    return {(step, lab): exemplar_rows(step, lab, n=n, pool=pool, seed=seed)
            for step in ("extract", "transform") for lab in SHORT}


@dataclass(frozen=True)
class FewShotParsed(Parsed):
    """A parsed FSP answer and the number of priming examples its prompt held (after fitting the context)."""

    shots: int | None = None  # examples in the prompt sent (None: no prompt was sent)
    dropped: int = 0  # examples of the set left out so that the prompt fits the context


@dataclass
class FewShotRewriter:
    """Extract and transform with the FTC prompts through cached chat clients (one per step and label).

    With a client that knows its context window (`token_budget`: an in-process model, or an endpoint with
    `context_tokens` / `tokenizer` set), each prompt keeps the most priming examples that fit beside the
    completion's max_tokens (`llm.context.fit_shots`: the last rows go first); every answer records how many
    it had (`FewShotParsed.shots`). A prompt too long even with none is a failed item, counted as an error.
    """

    extract_clients: dict  # 'entailment' | 'neutral' | 'contradiction' -> chat client
    transform_clients: dict
    name: str  # printed beside every result: the model's short name or 'offline://ftc-*'
    tier: str  # 'paper' (an LLM) or 'offline' (rule stand-ins)
    shots: dict = field(default_factory=dict)  # (step, label) -> exemplar rows; missing = printed rows
    paper_system: str | None = None  # the paper's rewriter this one is declared to be (profile `as`); None: stand-in

    @classmethod
    def offline(cls, cache=None) -> "FewShotRewriter":
        ex = {lab: OfflineLLM(_extract_generator(lab), name=f"ftc-extract-{SHORT[lab]}-rules-{_SOURCE_HASH}", cache=cache)
              for lab in SHORT}
        tr = {lab: OfflineLLM(_transform_generator(lab), name=f"ftc-transform-{SHORT[lab]}-align-{_SOURCE_HASH}",
                              cache=cache) for lab in SHORT}
        return cls(ex, tr, name="offline://ftc-rules+align", tier="offline")

    @classmethod
    def from_llm(cls, client, shots: dict | None = None) -> "FewShotRewriter":
        return cls({lab: client for lab in SHORT}, {lab: client for lab in SHORT},
                   name=getattr(client, "model", str(client)), tier="paper", shots=dict(shots or {}),
                   paper_system=getattr(client, "paper_system", None))

    def _shots(self, step: str, label: str):
        return self.shots.get((step, label))

    def extract(self, explanations: Sequence[str], labels: Sequence[str], progress: bool = False) -> list:
        """Parsed extraction per explanation (`Parsed.value` = {"A", "B"} when ok)."""
        return self._run("extract", labels, [dict(explanation=str(z)) for z in explanations], progress)

    def transform(self, hypotheses: Sequence[str], spans_a: Sequence[str], spans_b: Sequence[str],
                  labels: Sequence[str], progress: bool = False) -> list:
        """Parsed transformation per item: a string (C, E) or {"A": x_cf[A], "B": x_cf[B]} (N)."""
        fields = [dict(hypothesis=str(h), A=str(a), B=str(b)) for h, a, b in zip(hypotheses, spans_a, spans_b)]
        return self._run("transform", labels, fields, progress)

    def _run(self, step: str, labels, fields, progress: bool) -> list[FewShotParsed]:
        labels = [as_label(lab) for lab in labels]
        out: list = [None] * len(labels)
        clients = self.extract_clients if step == "extract" else self.transform_clients
        for lab in sorted(set(labels)):
            idx = [i for i, x in enumerate(labels) if x == lab]
            template, client = PROMPTS[f"ftc.{step}.{SHORT[lab]}"], clients[lab]
            rows = self._shots(step, lab)
            rows = list(template.exemplars[: template.default_shots] if rows is None else rows)
            budget = getattr(client, "token_budget", lambda: None)()  # None: no context limit known
            sent, too_long = [], []
            for i in idx:
                try:
                    messages, k = fit_shots(lambda r, f=fields[i], t=template: t.render(shots=r, **f), rows, budget)
                    sent.append((i, messages, k))
                except PromptTooLong as exc:
                    too_long.append(i)
                    out[i] = FewShotParsed(False, None, "", f"call failed: PromptTooLong: {exc}", shots=None,
                                           dropped=len(rows))
            if too_long:  # never sent: each counts as a failed request of this model
                call_ledger.count(client.ledger_kind, client.label, requests=len(too_long), errors=len(too_long))
            results = client.chat_many([m for _, m, _ in sent], progress=progress)
            for (i, _, k), parsed in zip(sent, client.parse_many(template, results)):
                # failed calls, non-answers and junk stay failures, counted by the client
                out[i] = FewShotParsed(parsed.ok, parsed.value, parsed.raw, parsed.error, shots=k,
                                       dropped=len(rows) - k)
        return out
