"""The shared test kit: fake classifiers and a tiny BERT factory (fixtures that use them: tests/conftest.py).

    >>> clf = TableClassifier({("a man sleeps", "a man is awake"): "contradiction"})
    >>> clf.predict(["a man sleeps", "a dog"], ["a man is awake", "an animal"])
    ['contradiction', 'neutral']
    >>> RuleClassifier(lambda p, h: [0.6, 0.3, 0.1] if "dog" in h else [0.2, 0.5, 0.3]).predict(["u"], ["a dog"])
    ['entailment']
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import pytest

from nli_lib.cache import CallCache
from nli_lib.config import LABELS, REPO_ROOT
from nli_lib.models.base import Classifier

NLI_HEAD = {0: "entailment", 1: "neutral", 2: "contradiction"}  # id2label of a 3-way NLI head
WORDS = ("a an the man woman person dog cat is are sleeping running playing eats sits outside inside not no on in "
         "sleeps runs").split()


def in_ci() -> bool:
    """True where CI=true (any case): missing prerequisites fail there instead of skipping."""
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_or_fail(reason: str) -> None:
    """Skip with `reason`, or fail with it under CI=true."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a prerequisite CI must provide is missing)", pytrace=False)
    pytest.skip(reason)


# the papers' texts sit in shared/ beside the repository (as the data mirror does); override with NLI_PAPERS_DIR
PAPERS = Path(os.environ.get("NLI_PAPERS_DIR", REPO_ROOT.parent / "shared" / "papers"))
PAPER_FILES = {"atoms": "atoms-nli-under-the-microscope.txt", "factnli": "factnli-fact-based-augmentation.txt",
               "ftc": "ftc-faithfulness-through-counterfactuals.txt", "phrasis": "phrasis-causal-coherence.txt",
               "taxinli": "taxinli-taxonomy.txt"}


def paper_text(name: str) -> str:
    """The full text of paper `name` (skipped where the papers are absent; a failure under CI=true)."""
    path = PAPERS / PAPER_FILES[name]
    if not path.exists():
        skip_or_fail(f"{path} not available (the papers sit at ../shared/papers beside the repository; "
                     f"NLI_PAPERS_DIR points elsewhere)")
    return path.read_text(encoding="utf-8")


WHOLE_RUNS = ("test_notebooks.py", "test_replica_profile.py", "test_book.py")  # in the order they must run
WHOLE_RUNS_UNIT = "whole-runs"


def xdist_unit(nodeid: str) -> str:
    """The pytest-xdist work unit of a test (`nli-companion test` runs `--dist loadfile` with the scheduler of
    `whole_runs_scheduler`): its file, except that the modules of WHOLE_RUNS form one unit, run on one worker in
    that order: the quick run (test_notebooks.py) trains the offline models the replica run's cache is seeded
    with, and the book (test_book.py) is built from the quick run. A file is one unit, so its module fixtures are
    set up once, as without xdist.

    >>> xdist_unit("tests/test_book.py::test_x[a]"), xdist_unit("tests/test_core.py::test_y")
    ('whole-runs', 'tests/test_core.py')
    """
    file = nodeid.split("::", 1)[0]
    return WHOLE_RUNS_UNIT if Path(file).name in WHOLE_RUNS else file


def order_whole_runs(items: list, first: bool) -> None:
    """Sort pytest `items` in place: the WHOLE_RUNS modules in that order, first or last, the rest in collection
    order between. First with workers (the whole runs are the longest chain: on two workers every other file
    runs beside them); last in one process, so that the quick unit tests fail fast and the runs come after.

    >>> from types import SimpleNamespace as S
    >>> items = [S(path=Path(f"tests/{n}.py")) for n in ("test_book", "test_core", "test_notebooks", "test_zeta")]
    >>> order_whole_runs(items, first=True); [i.path.stem for i in items]
    ['test_notebooks', 'test_book', 'test_core', 'test_zeta']
    >>> order_whole_runs(items, first=False); [i.path.stem for i in items]
    ['test_core', 'test_zeta', 'test_notebooks', 'test_book']
    """
    def rank(item) -> int:
        if item.path.name in WHOLE_RUNS:
            return WHOLE_RUNS.index(item.path.name) + (0 if first else 1)
        return len(WHOLE_RUNS) if first else 0

    items.sort(key=rank)


def whole_runs_scheduler(config, log):
    """For `--dist loadfile`: xdist's file scheduler with the work units of `xdist_unit` (None otherwise: xdist's
    own). Units are handed out in collection order with `--no-loadscope-reorder` (the whole runs first). Why not
    `--dist loadgroup` with `xdist_group` marks: with pytest 9.2 it stops grouping, silently (xdist writes the
    group into the node id, which pytest 9.2 no longer reads back: pytest-xdist issue #1386)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class WholeRunsScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

    return WholeRunsScheduling(config, log)


class TableClassifier(Classifier):
    """Answers from a table {(premise, hypothesis): label or probability row}; unknown pairs get `default`
    (a label, a row, or None: KeyError). A label becomes probability `confidence` for it, the rest shared.

    `calls` counts the pairs the model computed (not those served by the call cache, an in-memory one unless
    `cache` is given)."""

    def __init__(self, table: Mapping, labels: Sequence[str] = LABELS, default="neutral", confidence: float = 1.0,
                 name: str = "table", tier: str = "offline", cache: CallCache | None = None):
        super().__init__(cache=cache or CallCache(":memory:"))
        self.table, self.labels, self.default, self.confidence = dict(table), tuple(labels), default, confidence
        self.name, self.tier, self.calls = name, tier, 0

    def _row(self, value) -> list[float]:
        if not isinstance(value, str):
            return list(value)
        rest = (1 - self.confidence) / (len(self.labels) - 1)
        return [self.confidence if label == value else rest for label in self.labels]

    def _predict_proba_uncached(self, premises, hypotheses):
        self.calls += len(premises)
        rows = []
        for pair in zip(premises, hypotheses):
            if pair not in self.table and self.default is None:
                raise KeyError(f"{self.name}: no answer for {pair}")
            rows.append(self._row(self.table.get(pair, self.default)))
        return np.asarray(rows, dtype=float)


class RuleClassifier(Classifier):
    """Answers with `rule(premise, hypothesis)` -> probability row (the rule may raise, as a crashing model
    does). `calls` counts computed pairs, `computed` lists their premises."""

    def __init__(self, rule: Callable[[str, str], Sequence[float]], labels: Sequence[str] = LABELS,
                 name: str = "rule", tier: str = "offline", cache: CallCache | None = None):
        super().__init__(cache=cache or CallCache(":memory:"))
        self.rule, self.labels, self.name, self.tier = rule, tuple(labels), name, tier
        self.calls, self.computed = 0, []

    def _predict_proba_uncached(self, premises, hypotheses):
        self.calls += len(premises)
        self.computed += list(premises)
        return np.asarray([self.rule(p, h) for p, h in zip(premises, hypotheses)], dtype=float)


def constant(row: Sequence[float]) -> Callable[[str, str], Sequence[float]]:
    """A rule that always answers `row`."""
    return lambda p, h: row


def tiny_bert(path: str | Path, id2label: Mapping[int, str] | None = NLI_HEAD, *, layers: int = 2, hidden: int = 16,
              intermediate: int = 32, words: Sequence[str] = WORDS, seed: int = 0) -> Path:
    """A tiny BERT saved to `path` with its WordPiece tokenizer, loadable with from_pretrained (no download):
    a sequence classifier with head `id2label`, or a bare encoder when id2label is None."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    path = Path(path)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + list(words)
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    torch.manual_seed(seed)
    head = dict(id2label or {})
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                     intermediate_size=intermediate, max_position_embeddings=64, num_labels=max(len(head), 2),
                     id2label=head or None, label2id={v: k for k, v in head.items()} or None)
    (BertForSequenceClassification(cfg) if id2label else BertModel(cfg)).eval().save_pretrained(path)
    return path


def write_notebook(path: Path, code: str, params: str = 'profile = "offline"\nquick = False\nseed = None') -> Path:
    """A notebook of a title cell, a cell tagged 'parameters' and one code cell."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# demo"), cell, nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, path)
    return path


def tiny_train_frame(n: int = 24) -> pd.DataFrame:
    """n seeded NLI training rows over a handful of words (the three labels in turn)."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        lab = LABELS[i % 3]
        h = {"entailment": "a person is sleeping", "neutral": "a man is running outside", "contradiction": "no man is sleeping"}[lab]
        rows.append({"premise": "a man is sleeping " + rng.choice(["inside", "outside"]), "hypothesis": h, "label": lab})
    return pd.DataFrame(rows)


class TableWordNet:
    """A WordNet stand-in for unit tests: subclasses set SYNSETS, synset id -> (definition, lemmas[, hypernym
    ids[, usage examples]]), missing parts empty. Answers what `nli_lib.factnli` asks of WordNet."""

    SYNSETS: dict = {}

    def _part(self, s, i: int) -> list:
        entry = self.SYNSETS[s]
        return list(entry[i]) if len(entry) > i else []

    def synsets(self, term, pos=None):
        return [k for k, v in self.SYNSETS.items() if term in v[1]]

    def definition(self, s):
        return self.SYNSETS[s][0]

    def lemmas(self, s):
        return self._part(s, 1)

    def hypernyms(self, s):
        return self._part(s, 2)

    def hypernym_closure(self, s) -> set:
        above, todo = set(), self.hypernyms(s)
        while todo:
            above |= set(todo)
            todo = [h for sid in todo for h in self.hypernyms(sid) if h not in above]
        return above

    def examples(self, s):
        return self._part(s, 3)

    def __contains__(self, s):
        return s in self.SYNSETS
