"""Example browser: filter the per-example records behind any table and read them one at a time.

Notebooks save the rows behind their tables with `nb.out.records(df, name, ref, filters=..., text=...)`;
`browse` shows one such frame in JupyterLab (ipywidgets): a dropdown per filter column, a free-text
search over the text columns, a page of matching rows and the full record of the selected row (JSON
cells such as atom lists or fused facts pretty-printed). `explore` puts every saved record set of a
paper (or all papers) into tabs. The filtering itself is the plain function `filter_records`:

    >>> df = pd.DataFrame({"label": ["entailment", "neutral", "neutral"], "hypothesis": ["A dog", "A cat", "Cats"]})
    >>> filter_records(df, {"label": "neutral"}, search="cats", text=["hypothesis"]).index.tolist()
    [2]

Trade-off: pages are rendered as HTML tables (fast, readable, no extra grid dependency); sorting is by
the frame's order, which the notebooks choose to be meaningful (e.g. incorrect examples first).
"""
from __future__ import annotations

import html
import json

import pandas as pd

from .outputs import list_records, load_records  # noqa: F401  (load_records re-exported for notebooks)

ALL = "(all)"


def filter_records(df: pd.DataFrame, selections: dict, search: str = "", text=()) -> pd.DataFrame:
    """Rows whose filter columns equal the selected values (ALL/None = any) and whose text columns contain
    `search` (case-insensitive)."""
    mask = pd.Series(True, index=df.index)
    for col, value in selections.items():
        if value is None or value == ALL:
            continue
        mask &= df[col].astype(str) == str(value)
    if search:
        cols = [c for c in text if c in df.columns] or [c for c in df.columns if df[c].dtype == object]
        hit = pd.Series(False, index=df.index)
        for col in cols:
            hit |= df[col].astype(str).str.contains(search, case=False, regex=False, na=False)
        mask &= hit
    return df[mask]


def _pretty(value) -> str:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return "<pre>" + html.escape(json.dumps(json.loads(value), indent=1, ensure_ascii=False)) + "</pre>"
        except ValueError:
            pass
    return html.escape(str(value))


def record_html(row: pd.Series) -> str:
    """One record as an HTML definition table."""
    cells = "".join(f"<tr><th style='text-align:left;vertical-align:top'>{html.escape(str(k))}</th>"
                    f"<td style='text-align:left'>{_pretty(v)}</td></tr>" for k, v in row.items())
    return f"<table>{cells}</table>"


def browse(df: pd.DataFrame, filters=(), text=(), page_size: int = 10, title: str = "", max_levels: int = 60):
    """An ipywidgets browser over `df` (see module docstring). Returns the widget (display it)."""
    import ipywidgets as w

    filters = [c for c in filters if c in df.columns and df[c].nunique() <= max_levels]
    drops = {c: w.Dropdown(options=[ALL] + sorted(df[c].dropna().astype(str).unique().tolist()), value=ALL,
                           description=c, layout=w.Layout(width="260px"), style={"description_width": "initial"})
             for c in filters}
    search = w.Text(placeholder="search text columns", layout=w.Layout(width="260px"))
    page = w.BoundedIntText(value=1, min=1, max=1, description="page", layout=w.Layout(width="150px"))
    pick = w.Dropdown(description="record", options=[], layout=w.Layout(width="260px"))
    status, table, detail = w.HTML(), w.HTML(), w.HTML()
    short_cols = [c for c in df.columns if c not in text][:8] + list(text)[:2]

    def refresh(*_):
        hits = filter_records(df, {c: d.value for c, d in drops.items()}, search.value, text)
        pages = max(1, -(-len(hits) // page_size))
        page.max = pages
        chunk = hits.iloc[(page.value - 1) * page_size: page.value * page_size]
        status.value = f"<b>{title}</b> {len(hits):,} of {len(df):,} records · page {page.value}/{pages}"
        shown = chunk[short_cols].astype(str).apply(lambda col: col.str.slice(0, 80))
        table.value = shown.to_html(escape=True) if len(chunk) else "<i>no records</i>"
        pick.options = [str(i) for i in chunk.index]
        show()

    def show(*_):
        detail.value = record_html(df.loc[type(df.index[0])(pick.value)]) if pick.value and len(df) else ""

    for widget in [*drops.values(), search, page]:
        widget.observe(refresh, names="value")
    pick.observe(show, names="value")
    refresh()
    # the controls wrap onto as many rows as the page needs, and a wide table scrolls inside its own box: the page
    # never gets a horizontal scrollbar that hides the filters
    controls = w.Box([*drops.values(), search, page], layout=w.Layout(display="flex", flex_flow="row wrap",
                                                                       width="100%"))
    scroll = w.Box([table], layout=w.Layout(overflow="auto", width="100%"))
    return w.VBox([controls, status, scroll, pick, detail], layout=w.Layout(width="100%"))


def explore(paper: str | None = None, root=None):
    """Tabs with a `browse` widget for every saved record set (of one paper, or all)."""
    import ipywidgets as w

    sets = list_records(root)
    if paper:
        sets = sets[sets.paper == paper]
    if sets.empty:
        from .outputs import record_roots

        looked = ", ".join(str(folder) for _, folder in ([("", root)] if root is not None else record_roots()))
        return w.HTML(
            f"<i>no per-example records saved yet{' for ' + paper if paper else ''} (looked in {looked}): run the "
            f"paper's notebooks (./run_all.sh, or ./run_all.sh --quick)</i>"
        )
    children, titles = [], []
    for s in sets.itertuples(index=False):
        df = pd.read_csv(s.path)
        children.append(browse(df, s.filters, s.text, title=f"{s.ref} · {s.caption} · from the {s.run}"))
        titles.append(f"{s.notebook[:2]} {s.name}")
    tabs = w.Tab(children=children)
    for i, t in enumerate(titles):
        tabs.set_title(i, t)
    return tabs


def record_summary(paper: str | None = None, root=None) -> pd.DataFrame:
    """Static overview of the saved record sets (readable without widgets, e.g. on GitHub)."""
    sets = list_records(root)
    if paper:
        sets = sets[sets.paper == paper]
    return sets[["paper", "notebook", "name", "ref", "n_rows", "filters", "caption", "run"]].reset_index(drop=True)
