"""Tokenising and normalising text: every tokeniser of the companion, in one place.

A *word* is a run of letters or digits, joined across inner apostrophes and hyphens (`WORD`):

    >>> words("Two kids can’t fly car-bombs .")
    ['two', 'kids', "can't", 'fly', 'car-bombs']
    >>> word_spans("A dog."), word_count("A woman wearing a yellow tank top .")
    ([('a', 0, 1), ('dog', 2, 5)], 7)
    >>> normalise("The  Dog, barking!")          # de-duplication key: lower-cased words only
    'the dog barking'
    >>> untokenize_ptb("a lady ca n't be young , or old .")   # e-SNLI's PTB tokens back to plain text
    "a lady can't be young, or old"
    >>> slug("DeBERTa v3 (NLI fine-tuned)")
    'deberta-v3-nli-fine-tuned'

The other tokenisers split differently on purpose; each one's docstring says what it feeds and why its rule
differs (numbers kept whole, clitics split for a tagger, punctuation kept for clause splitting, ...).
Changing one changes the features or cache keys behind published numbers: their callers version them.
(`atoms.decompose` keeps its own tokeniser beside the grammar it serves.)
"""
from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(lower-cased word, start, end) for every word of `text`; a curly apostrophe becomes a straight one."""
    return [(m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in WORD.finditer(str(text))]


def words(text: str) -> list[str]:
    """The lower-cased words of `text` (`word_spans` without the offsets); METEOR's tokens."""
    return [w for w, _, _ in word_spans(text)]


def word_count(text: str) -> int:
    """Number of words (punctuation excluded), the unit of FactNLI's Fig. 3a."""
    return len(WORD.findall(str(text)))


def normalise(text: str) -> str:
    """Lower-cased words joined by single spaces: the key for de-duplicating facts, snippets and sentences.

    Curly apostrophes are kept as they are (unlike `words`): the keys of stored FactNLI runs depend on it.
    """
    return " ".join(w.lower() for w in WORD.findall(str(text)))


def untokenize_ptb(text: str) -> str:
    """PTB-tokenised text (e-SNLI explanations) as plain lower-cased text: clitics re-attached ("ca n't" ->
    "can't"), `` '' quote tokens dropped, no space before punctuation, end punctuation trimmed.

    >>> untokenize_ptb("`` a man '' does n't mean they 're here .")
    "a man doesn't mean they're here"
    """
    t = str(text).lower().replace("’", "'").replace("‘", "'").replace("`` ", "").replace(" ''", "")
    t = t.replace("``", "").replace("''", "")
    t = re.sub(r"\bca n't\b", "can't", t)
    t = re.sub(r"\bwo n't\b", "won't", t)
    t = re.sub(r"\s+n't\b", "n't", t)
    t = re.sub(r"\s+'(s|re|ve|ll|d|m)\b", r"'\1", t)
    t = re.sub(r"\s+([,.;:!?])", r"\1", t)
    t = re.sub(r"\s+", " ", t).strip()
    return t.rstrip(" .!?;:,").strip()


def spaceless_key(text: str) -> str:
    """Lower-cased text with every space removed and PTB quotes (`` '') as '"': matches a sentence across
    tokenisations (CAD's plain text vs e-SNLI's PTB tokens), where word-based keys would differ on "can't".

    >>> spaceless_key("`` A dog , sleeping . ''") == spaceless_key('"A dog, sleeping."')
    True
    """
    return "".join(str(text).lower().split()).replace("``", '"').replace("''", '"')


def slug(name: str) -> str:
    """File-name form of a model name: lower-cased, runs of other characters as one '-'; a name with no letter
    or digit gets a short hash instead of an empty string.

    >>> slug("minilm-esnli (NLI fine-tuned)"), slug("()") == slug("()") != ""
    ('minilm-esnli-nli-fine-tuned', True)
    """
    out = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    if out:
        return out
    from .hashing import text_hash

    return text_hash(str(name))


_BOW_TOKEN = re.compile(r"[a-z0-9']+|n't")


def bow_tokens(text: str) -> list[str]:
    """Tokens of the TF-IDF / naive-Bayes pair baselines: lower-cased runs of letters, digits and apostrophes.

    Differs from `words`: a hyphen splits ("car-bombs" -> 'car', 'bombs') and apostrophes stay inside a token
    (PTB's "n't" is one). The fitted vectorizers of the baselines were built with it; changing it changes them.

    >>> bow_tokens("A man can't sleep; car-bombs n't")
    ['a', 'man', "can't", 'sleep', 'car', 'bombs', "n't"]
    """
    return _BOW_TOKEN.findall(str(text).lower())


_PHRASE_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*(?:'[a-z]+)?")


def phrase_tokens(text: str) -> list[str]:
    """PhrasIS feature tokens: lower-cased words; numbers keep their separators ('1,000', '2.5').

    Differs from `words`: numbers must stay whole for the number-mismatch features ('1,000' vs '1'), and a
    hyphen splits a compound so each part can be looked up in WordNet.

    >>> phrase_tokens("Pope Francis's 2 car-bombs, 1,000 dead")
    ['pope', "francis's", '2', 'car', 'bombs', '1,000', 'dead']
    """
    return _PHRASE_TOKEN.findall(str(text).lower())


_CLITIC = re.compile(r"^(.+?)(n't|'s|'re|'ve|'ll|'d|'m)$")


def clitic_tokens(text: str) -> list[str]:
    """Lower-cased words with clitics split off the way the Penn Treebank writes them ("he's" -> 'he', "'s";
    "can't" -> 'ca', "n't"): the input NLTK's perceptron tagger was trained on.

    >>> clitic_tokens("He's sure they can't go .")
    ['he', "'s", 'sure', 'they', 'ca', "n't", 'go']
    """
    out = []
    for w in words(text):
        m = _CLITIC.match(w)
        if m:
            head = {"can": "ca", "won": "wo"}.get(m.group(1), m.group(1))
            out.extend([head, m.group(2)])
        else:
            out.append(w)
    return out


_PUNCT_TOKEN = re.compile(r"\d+(?:[.,:]\d+)+|[A-Za-z0-9]+(?:[-'’][A-Za-z0-9]+)*|[^\sA-Za-z0-9]")


def punct_tokens(text: str) -> list[str]:
    """Words (case kept), numbers with separators ('12:30', '1,000') and each punctuation mark as a token.

    Differs from `words`: FactNLI's fact extraction splits clauses at punctuation and tags the tokens, so the
    marks and the original case must survive.

    >>> punct_tokens("At 12:30, St. Mary's rang.")
    ['At', '12:30', ',', 'St', '.', "Mary's", 'rang', '.']
    """
    return _PUNCT_TOKEN.findall(str(text))


_LETTER_TOKEN = re.compile(r"[a-z][a-z'-]*|[^\sa-z]")


def letter_tokens(text: str) -> list[str]:
    """Lower-cased letter words and every other non-space character (each digit, each mark) as a token.

    Differs from `punct_tokens`: FactNLI's countability statistic counts "a <word>" followed by a mark or a
    function word in WordNet's glosses; numbers never follow an article there as a noun, so digits need not
    stay whole, and words start with a letter.

    >>> letter_tokens("A violin; 12 strings")
    ['a', 'violin', ';', '1', '2', 'strings']
    """
    return _LETTER_TOKEN.findall(str(text).lower())
