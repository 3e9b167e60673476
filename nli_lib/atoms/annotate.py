"""An ipywidgets tool to label δ-SNLI atomic sub-problems on the paper's five-point scale (§5.1).

Each (P, aᵢ, U) sub-problem is shown with its premise, hypothesis, update and atom; buttons record
-2 (strongly weakens) .. 0 (no effect) .. +2 (strongly strengthens) or 'invalid' (§3.2 human validation: not
grammatical, not entailed by H, entailed by P, or new information). Every click is written at once to a CSV
in the gold format of `defeasible.read_gold_labels`, so an interrupted session resumes where it stopped
and the file can be loaded back as gold labels.

    tool = AnnotationTool(data.labeled, "my_atom_labels.csv", annotator="me")     # doctest: +SKIP
    tool.widget()          # display in JupyterLab                                        # doctest: +SKIP
    dnli = load_dnli("snli", "test", drop_impossible=True)  # doctest: +SKIP
    gold = read_gold_labels("my_atom_labels.csv", dnli=dnli)  # doctest: +SKIP

The labelling logic (`label`, `labels`, `next_unlabeled`) has no widget dependency and is unit-tested.
"""
from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from .defeasible import GOLD_COLUMNS, SCALE_NAMES, parse_label, read_gold_labels, write_labels

BUTTONS = [(-2, "−2 strongly weakens"), (-1, "−1 weakens"), (0, "0 no effect"), (1, "+1 strengthens"),
           (2, "+2 strongly strengthens"), ("invalid", "invalid")]


class AnnotationTool:
    """Label sub-problems one at a time; labels are saved to `path` (gold CSV format) after every change."""

    def __init__(self, subproblems: pd.DataFrame, path: str | Path, annotator: str = "", show_label: bool = True):
        cols = ["pair_id", "premise", "hypothesis", "update", "update_type", "atom"]
        missing = [c for c in cols if c not in subproblems.columns]
        if missing:
            raise ValueError(f"sub-problems need columns {missing}")
        self.items = subproblems[cols].drop_duplicates(["pair_id", "atom"]).reset_index(drop=True)
        self.path, self.annotator, self.show_label = Path(path), annotator, show_label
        self._labels: dict[tuple[str, str], tuple] = {}
        if self.path.exists():  # resume
            for _, r in read_gold_labels(self.path).iterrows():
                self._labels[(r["pair_id"], r["atom"])] = (r["label"], r.get("note", ""))
        self.position = self.next_unlabeled() if self.next_unlabeled() is not None else 0
        self._ui = None

    # -- logic ------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.items)

    @property
    def done(self) -> int:
        return sum((r.pair_id, r.atom) in self._labels for r in self.items.itertuples())

    def label(self, index: int, value, note: str = "") -> None:
        """Record a label (-2..2 or 'invalid'; None removes it) for item `index` and save the file."""
        item = self.items.iloc[index]
        key = (item["pair_id"], item["atom"])
        parsed = parse_label(value)
        if parsed is None:
            self._labels.pop(key, None)
        else:
            self._labels[key] = (parsed, note)
        self.save()

    def next_unlabeled(self, start: int = 0) -> int | None:
        for i in list(range(start, len(self.items))) + list(range(0, start)):
            r = self.items.iloc[i]
            if (r["pair_id"], r["atom"]) not in self._labels:
                return i
        return None

    def labels(self) -> pd.DataFrame:
        """Labelled items in the gold CSV format."""
        rows = []
        for r in self.items.itertuples():
            if (r.pair_id, r.atom) in self._labels:
                value, note = self._labels[(r.pair_id, r.atom)]
                rows.append({"pair_id": r.pair_id, "premise": r.premise, "hypothesis": r.hypothesis, "update": r.update,
                             "update_type": r.update_type, "atom": r.atom, "label": value,
                             "annotator": self.annotator, "note": note})
        return pd.DataFrame(rows, columns=list(GOLD_COLUMNS))

    def save(self) -> Path:
        return write_labels(self.labels(), self.path)

    # -- widget -----------------------------------------------------------------------------------------------
    def widget(self):
        """The ipywidgets UI (display it in JupyterLab)."""
        import ipywidgets as w

        self._html = w.HTML()
        self._note = w.Text(placeholder="optional note", layout=w.Layout(width="60%"))
        buttons = []
        for value, text in BUTTONS:
            b = w.Button(description=text, layout=w.Layout(width="auto"),
                         button_style="danger" if value in (-2, -1) else "success" if value in (1, 2) else "")
            b.on_click(lambda _, v=value: self._click(v))
            buttons.append(b)
        prev, skip = w.Button(description="◀ previous"), w.Button(description="skip ▶")
        prev.on_click(lambda _: self._move(-1))
        skip.on_click(lambda _: self._move(+1))
        self._ui = w.VBox([self._html, w.HBox(buttons), w.HBox([prev, skip, self._note])])
        self._render()
        return self._ui

    def _click(self, value) -> None:
        self.label(self.position, value, note=self._note.value if self._ui is not None else "")
        nxt = self.next_unlabeled(self.position + 1)
        self.position = nxt if nxt is not None else self.position
        self._render()

    def _move(self, step: int) -> None:
        self.position = max(0, min(len(self.items) - 1, self.position + step))
        self._render()

    def _render(self) -> None:
        if self._ui is None or not len(self.items):
            return
        r = self.items.iloc[self.position]
        current = self._labels.get((r["pair_id"], r["atom"]))
        now = f"{current[0]} ({SCALE_NAMES.get(current[0], 'invalid')})" if current else "—"
        overall = f" <i>(overall: {html.escape(r['update_type'])})</i>" if self.show_label else ""
        self._html.value = (
            f"<b>{self.position + 1} / {len(self.items)}</b> · labelled {self.done} · saved to "
            f"<code>{html.escape(str(self.path))}</code><br><b>Premise:</b> {html.escape(r['premise'])}<br>"
            f"<b>Hypothesis:</b> {html.escape(r['hypothesis'])}<br><b>Update:</b> {html.escape(r['update'])}{overall}"
            f"<br><b>Atom:</b> <span style='font-size:1.15em'>{html.escape(r['atom'])}</span><br>"
            f"How does the update change the belief in the atom? Current label: {now}")
        if current:
            self._note.value = current[1] or ""
