"""Which cell of a notebook saved which table or figure: the save calls of a cell's source, matched to sidecars.

A notebook saves its outputs through `nb.save(obj, "name", ...)` (the name declared in the outputs catalog,
`nli_lib.catalog`; a declared name may hold `{fields}` that the call fills, e.g. once per model) or, in older
notebooks, `nb.out.figure(fig, "name", ref=...)` / `nb.out.table(df, "name", ref=...)`. The sidecar each call
writes records the file name and the kind, so a call's name, read from the source, is a pattern the sidecar's
name must match: a literal exactly, `{fields}` and f-string holes as wildcards, and a name held in a variable
(`for name, t in tables.items(): nb.save(t, name)`) as a wildcard that only takes what no named call matches.
"""
from __future__ import annotations

import ast
import datetime as dt
import re
from dataclasses import dataclass

KINDS = ("figure", "table")  # what the book shows (record sets are the explorer's)


@dataclass(frozen=True)
class SavedCall:
    """One save call found in a cell's source."""

    kind: str | None  # 'figure', 'table', or None: either (nb.save decides by the object it is given)
    name: str | None  # regular expression the saved file name must match in full; None: any name
    ref: str = ".+"  # regular expression the paper reference must match in full

    def specificity(self) -> tuple:
        """How much the call says about what it saves: a name before none, more literal characters before fewer,
        a known kind before either.

        >>> SavedCall(None, r"table\\-.+?\\-paper").specificity() > SavedCall("table", r"table\\-.+?").specificity()
        True
        """
        literal = len(re.sub(r"\.\+\?|\\", "", self.name)) if self.name is not None else -1
        return self.name is not None, literal, self.kind is not None

    def matches(self, sidecar: dict) -> bool:
        """Whether a sidecar (its kind, name and ref) was written by a call like this one."""
        kind = sidecar.get("kind")
        return (kind in KINDS and self.kind in (None, kind)
                and (self.name is None or re.fullmatch(self.name, sidecar.get("name", "")) is not None)
                and re.fullmatch(self.ref, sidecar.get("ref", "")) is not None)


def _pattern(node: ast.AST | None) -> str | None:
    """Regex for a name argument: a literal exactly (its `{fields}` as wildcards), an f-string with its holes as
    wildcards, anything else None (any name).

    >>> _pattern(ast.parse('"fig-7-grid-{model}"').body[0].value)
    'fig\\\\-7\\\\-grid\\\\-.+?'
    >>> _pattern(ast.parse('name').body[0].value) is None
    True
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parts = re.split(r"(\{[^{}]*\})", node.value)
        return "".join(".+?" if part.startswith("{") and part.endswith("}") else re.escape(part) for part in parts)
    if isinstance(node, ast.JoinedStr):
        return "".join(re.escape(part.value) if isinstance(part, ast.Constant) else ".+?" for part in node.values)
    return None


def _python_only(source: str) -> str:
    """Cell source with IPython magics and shell escapes blanked (so `ast` can parse it)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _owner_is(node: ast.AST, name: str) -> bool:
    """Whether `node` is the name `name` or an attribute called `name` (`out`, `nb.out`)."""
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


def _looks_like_figure(node: ast.AST | None) -> bool:
    """Whether the object a call saves reads as a matplotlib figure: `fig...`, or made by a `plot...`/`figure`
    function (what decides between a table and a figure declared under one name)."""
    if isinstance(node, ast.Name):
        return node.id.startswith("fig")
    if isinstance(node, ast.Call):
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return bool(re.search(r"plot|figure", func)) and not func.endswith("_table")
    return False


def _save_kind(node: ast.Call, keywords: dict, declared: dict) -> str | None:
    """The kind an `nb.save` call writes: its `kind=`, else the only one of figure/table the catalog declares
    under its name (`declared`: name -> kinds), else a figure when the object reads as one, else None (either)."""
    kind_node = keywords.get("kind")
    if isinstance(kind_node, ast.Constant):
        return kind_node.value
    name = node.args[1] if len(node.args) > 1 else keywords.get("name")
    kinds = set(declared.get(name.value, ())) & set(KINDS) if isinstance(name, ast.Constant) else set()
    if len(kinds) == 1:
        return kinds.pop()
    return "figure" if _looks_like_figure(node.args[0] if node.args else keywords.get("obj")) else None


def saved_calls(source: str, declared: dict | None = None) -> list[SavedCall]:
    """The save calls of a code cell that write a figure or table, in source order. `declared`: the notebook's
    catalog (name -> kinds declared under it), which tells an `nb.save` call's kind when only one fits.

    >>> [(c.kind, c.name) for c in saved_calls('nb.save(t, "fig-5", models=names)')]
    [(None, 'fig\\\\-5')]
    >>> [c.name for c in saved_calls('for n in NUMBERS:\\n    nb.save(t, f"table-{n}")\\n    nb.save(t, name)')]
    ['table\\\\-.+?', None]
    >>> saved_calls('nb.save(rows, "answers", kind="records")')   # a record set: the explorer's, not the page's
    []
    >>> [(c.kind, c.name, c.ref) for c in saved_calls('nb.out.figure(fig, "fig-5", ref="taxinli-fig-5")')]
    [('figure', 'fig\\\\-5', 'taxinli\\\\-fig\\\\-5')]
    >>> saved_calls('plt.figure(figsize=(3, 2)); fig.savefig("x.png"); notes.save()')   # not an output call
    []
    >>> [c.kind for c in saved_calls('nb.save(card, "s"); nb.save(fig, "s"); nb.save(t, "u")', {"u": {"figure"}})]
    [None, 'figure', 'figure']
    """
    try:
        tree = ast.parse(_python_only(source))
    except SyntaxError:
        return []
    calls = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        owner, attr = node.func.value, node.func.attr
        if attr == "save" and _owner_is(owner, "nb") and (len(node.args) > 1 or "name" in keywords):
            kind = _save_kind(node, keywords, declared or {})
            if kind is not None and kind not in KINDS:
                continue
            name = node.args[1] if len(node.args) > 1 else keywords.get("name")
            call = SavedCall(kind, _pattern(name))
        elif attr in KINDS and _owner_is(owner, "out"):
            name = node.args[1] if len(node.args) > 1 else keywords.get("name")
            ref = node.args[2] if len(node.args) > 2 else keywords.get("ref")
            call = SavedCall(attr, _pattern(name), _pattern(ref) or ".+")
        else:
            continue
        calls.append((node.lineno, node.col_offset, call))
    return [call for _, _, call in sorted(calls, key=lambda c: (c[0], c[1]))]


def _when(text: str | None) -> dt.datetime | None:
    """A papermill / sidecar timestamp as an aware datetime (None when absent or unreadable)."""
    if not text:
        return None
    try:
        when = dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def within(created: str | None, start: str | None, end: str | None, slack_s: float = 1.0) -> bool | None:
    """Whether a sidecar's `created` (whole seconds) falls inside [start, end]; None when a time is missing.

    >>> within("2026-11-23T19:57:01+00:00", "2026-11-23T19:57:00.5+00:00", "2026-11-23T19:57:01.2+00:00")
    True
    >>> within("2026-11-23T06:32:47+00:00", "2026-11-23T19:57:00+00:00", "2026-11-23T19:58:00+00:00")
    False
    """
    when, lo, hi = _when(created), _when(start), _when(end)
    if when is None or lo is None or hi is None:
        return None
    slack = dt.timedelta(seconds=slack_s)
    return lo - slack <= when <= hi + slack


def assign(cells: list[tuple[int, list[SavedCall], tuple]], sidecars: list[dict]) -> tuple[dict, list]:
    """Give each sidecar to the cell that wrote it. Cells whose calls say most about it come first
    (`SavedCall.specificity`: `f"table-{n}-paper"` before `f"table-{n}"`); among those, the only one, else the one
    whose papermill time window holds its `created` time, else the first. Returns
    ({cell index: [sidecars]}, [sidecars no cell matched]).

    >>> fig, anything = SavedCall("figure", "f\\\\-.+?"), SavedCall(None, None)
    >>> cells = [(3, [fig], ("2026-01-01T00:00:00", "2026-01-01T00:00:09")),
    ...          (7, [fig], ("2026-01-01T00:00:10", "2026-01-01T00:00:20")), (9, [anything], (None, None))]
    >>> sides = [{"kind": "figure", "name": "f-a", "ref": "x", "created": "2026-01-01T00:00:15"},
    ...          {"kind": "table", "name": "g", "ref": "x"}, {"kind": "records", "name": "r", "ref": "x"}]
    >>> by_cell, unmatched = assign(cells, sides)
    >>> {i: [s["name"] for s in found] for i, found in by_cell.items()}, [s["name"] for s in unmatched]
    ({7: ['f-a'], 9: ['g']}, ['r'])
    """
    by_cell: dict[int, list[dict]] = {}
    unmatched = []
    for side in sidecars:
        scored = [(max(c.specificity() for c in calls if c.matches(side)), index, window)
                  for index, calls, window in cells if any(c.matches(side) for c in calls)]
        if not scored:
            unmatched.append(side)
            continue
        best = max(score for score, _, _ in scored)
        candidates = [(index, window) for score, index, window in scored if score == best]
        timed = [index for index, window in candidates if within(side.get("created"), *window)]
        by_cell.setdefault((timed or [candidates[0][0]])[0], []).append(side)
    return by_cell, unmatched
