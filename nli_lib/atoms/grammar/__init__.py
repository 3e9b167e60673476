"""The parts of the rule-based atom decomposer (`nli_lib.atoms.decompose` ties them together), one job each:

* `lexicon`     closed word classes and the WordNet questions about open-class words ("is this noun a person?")
* `morphology`  articles, plurals, gerunds and WordNet-checked lemmas
* `tagging`     tokens, NLTK perceptron tags and the repairs of its frequent errors on SNLI captions
* `chunking`    noun phrases, verb groups with their complements, clauses (a POS-tag grammar, not a parser)
* `realise`     atoms as sentences from the chunks (entities, types, attributes, actions, arguments, purposes)
* `wellformed`  is an atom (from the rules or an LLM) a well-formed sentence? status and reason per atom
"""
from __future__ import annotations

RULES_VERSION = "atoms-rules-v5"  # change when the rules change: it names the OfflineLLM cache namespace
