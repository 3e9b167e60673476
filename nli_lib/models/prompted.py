"""A chat model behind the atoms paper's Prompt B.1 as an NLI `Classifier` (used by the atoms and FactNLI parts).

>>> from nli_lib.cache import CallCache
>>> from nli_lib.llm import OfflineLLM
>>> llm = OfflineLLM(lambda messages: "c\\nA desert is no field. [END]", name="always-c", cache=CallCache(":memory:"))
>>> PromptNLIClassifier(llm).predict(["A girl in a field."], ["A girl in a desert."])
['contradiction']
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..config import LABELS
from ..hashing import text_hash
from .base import Classifier


class PromptNLIClassifier(Classifier):
    """An LLM behind Prompt B.1 as a `Classifier` (one-hot probabilities).

    A failed call or an answer without a label gives a row of NaN (predicted label None), never a label: the
    chat client counts it in the call ledger, `parse_failures` counts it here and `failures` keeps the
    reason of each.
    """

    labels = LABELS
    tier = "paper"

    def __init__(self, llm, shots: Sequence[dict] = (), name: str | None = None):
        super().__init__()
        self.llm, self.shots = llm, list(shots)
        self.name = name or f"{getattr(llm, 'model', 'llm')} (B.1, {len(self.shots)}-shot)"
        self.parse_failures = 0
        self.failures: list[dict] = []  # premise, hypothesis, raw answer, reason of every unanswered pair

    @property
    def fingerprint(self) -> str:
        return f"b1::{getattr(self.llm, 'label', self.name)}::" + text_hash(
            *[str(sorted(s.items())) for s in self.shots]
        )

    def predict_proba(self, premises, hypotheses) -> np.ndarray:  # the chat client caches; skip the pair cache
        return self._predict_proba_uncached(list(premises), list(hypotheses))

    def _predict_proba_uncached(self, premises, hypotheses) -> np.ndarray:
        from ..llm import PROMPTS

        t = PROMPTS["atoms.B1"]
        results = self.llm.chat_many([t.render(premise=p, hypothesis=h, shots=self.shots)
                                      for p, h in zip(premises, hypotheses)], progress=False)
        out = np.full((len(premises), 3), np.nan)
        for i, parsed in enumerate(self.llm.parse_many(t, results)):
            if parsed.ok:
                out[i] = 0.0
                out[i, LABELS.index(parsed.value)] = 1.0
            else:
                self.parse_failures += 1
                self.failures.append({"premise": premises[i], "hypothesis": hypotheses[i], "answer": parsed.raw,
                                      "reason": parsed.error})
        return out
