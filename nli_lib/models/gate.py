"""The sanity gate every fine-tuned stand-in passes before any of its numbers is shown.

A fine-tuned model that predicts (almost) one label can still land near a paper's number: a model that
always says the same thing is perfectly "coherent", and a weighted F-score of a majority guess is not zero.
So before a stand-in's numbers are set beside a paper's, its predictions on held-out data (never trained on)
must

* beat the majority-class baseline: accuracy strictly above that of always answering the training set's most
  frequent label, and
* not collapse: no label takes more than `max_share` (default 90 %) of the predictions, unless the gold labels
  are that skewed themselves, and no label that is at least `min_gold` (10 %) of the gold labels is (almost)
  never predicted: under `ignored` (a fifth) of its gold share. A 6-way model that answers only two labels
  beats the baseline and stays under 90 %, yet has learned nothing of the labels it ignores.

A model that fails is reported as failed (`Gate.line` for the notebook, `Gate.reason` for the scorecard) and
its numbers are withheld.

>>> gold = ["a", "a", "b", "c", "a", "b"]
>>> sanity_gate(gold, ["a", "a", "b", "c", "b", "b"], majority="a", model="m").passed
True
>>> g = sanity_gate(gold, ["a"] * 6, majority="a", model="m")
>>> g.passed
False
>>> for why in g.failures:
...     print(why)
accuracy 0.500 is not above the majority-class baseline 0.500 (always a)
collapsed: a is 100% of the predictions (gold: 50%)
ignores b (gold 33%, predicted 0%), c (gold 17%, predicted 0%)
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

MAX_SHARE = 0.9  # a label above this share of the predictions, when gold is not that skewed, is a collapse
MIN_GOLD, IGNORED = 0.10, 0.2  # a label >= 10 % of gold, predicted under a fifth of that share, is ignored


@dataclass(frozen=True)
class Gate:
    """The gate's verdict on one model's held-out predictions (`sanity_gate`)."""

    model: str
    n: int  # held-out examples
    accuracy: float
    majority: str  # the label the baseline always answers (the training set's most frequent)
    baseline: float  # the baseline's accuracy on the held-out gold labels
    top_label: str  # the label the model predicts most often
    top_share: float  # its share of the predictions
    gold_top_share: float  # the share of the most frequent gold label
    ignored_labels: tuple = ()  # (label, gold share, predicted share) of the frequent gold labels hardly predicted
    max_share: float = MAX_SHARE
    where: str = "held-out data"

    @property
    def failures(self) -> tuple[str, ...]:
        """Why the model fails (empty when it passes)."""
        if not self.n:
            return ("no held-out predictions to judge",)
        out = []
        if not self.accuracy > self.baseline:
            out.append(f"accuracy {self.accuracy:.3f} is not above the majority-class baseline {self.baseline:.3f} "
                       f"(always {self.majority})")
        if self.top_share > self.max_share and self.gold_top_share <= self.max_share:
            out.append(f"collapsed: {self.top_label} is {self.top_share:.0%} of the predictions "
                       f"(gold: {self.gold_top_share:.0%})")
        if self.ignored_labels:
            out.append("ignores " + ", ".join(f"{lab} (gold {g:.0%}, predicted {q:.0%})"
                                              for lab, g, q in self.ignored_labels))
        return tuple(out)

    @property
    def passed(self) -> bool:
        return not self.failures

    def line(self) -> str:
        """One line for the notebook: PASSED or FAILED, with the numbers behind the verdict."""
        facts = (f"accuracy {self.accuracy:.3f} vs majority baseline {self.baseline:.3f} (always {self.majority}); "
                 f"most predicted {self.top_label} {self.top_share:.0%} (gold max {self.gold_top_share:.0%}); "
                 f"n = {self.n} {self.where}")
        if self.passed:
            return f"sanity gate PASSED · {self.model}: {facts}"
        return (f"sanity gate FAILED · {self.model}: {'; '.join(self.failures)}; n = {self.n} {self.where}: its "
                f"numbers are withheld")

    def reason(self) -> str:
        """The scorecard's reason for a withheld number."""
        return f"withheld: {self.model} failed its sanity gate on {self.n} {self.where}: {'; '.join(self.failures)}"


def sanity_gate(gold: Sequence[str], pred: Sequence[str], *, majority: str | None = None, model: str = "model",
                max_share: float = MAX_SHARE, min_gold: float = MIN_GOLD, ignored: float = IGNORED,
                where: str = "held-out data") -> Gate:
    """Judge `pred` against `gold` (held-out labels, same order). `majority`: the training set's most frequent
    label, which the baseline always answers (None: the most frequent gold label, the strongest constant)."""
    gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels for {len(pred)} predictions")
    n = len(gold)
    gold_counts, pred_counts = Counter(gold), Counter(pred)
    if majority is None:
        majority = gold_counts.most_common(1)[0][0] if n else ""
    top_label, top_n = pred_counts.most_common(1)[0] if n else ("", 0)
    hardly = tuple((lab, k / n, pred_counts[lab] / n) for lab, k in gold_counts.most_common()
                   if k / n >= min_gold and pred_counts[lab] / n < ignored * k / n)
    return Gate(model=model, n=n, accuracy=sum(g == p for g, p in zip(gold, pred)) / n if n else 0.0,
                majority=majority, baseline=gold_counts[majority] / n if n else 0.0, top_label=top_label,
                top_share=top_n / n if n else 0.0,
                gold_top_share=gold_counts.most_common(1)[0][1] / n if n else 0.0, ignored_labels=hardly,
                max_share=max_share, where=where)


def majority_label(labels: Sequence[str]) -> str:
    """The most frequent label (ties: the first seen), the one the majority-class baseline answers.

    >>> majority_label(["b", "a", "a", "b", "c"])
    'b'
    """
    return Counter(str(x) for x in labels).most_common(1)[0][0]
