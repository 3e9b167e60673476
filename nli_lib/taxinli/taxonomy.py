"""The TaxiNLI taxonomy (Joshi et al., 2020, §2 and Figure 1) as data.

    >>> CATEGORIES[0].name, CATEGORIES[0].group, CATEGORIES[0].top
    ('lexical', 'linguistic', 'linguistic')
    >>> [c.name for c in categories_in("knowledge")]
    ['world', 'taxonomic']
    >>> short("coreference_reasoning")
    'coreference'

Names: the data files call the 15 categories `<name>_<suffix>` (`lexical_linguistic`, `negation_logic`,
`causal_reasoning`, `world_knowledge`, ...); figures use the short name. The paper's Figure 1 groups them
as Linguistic | Logical (Connectives, Mathematical, Deductions) | Knowledge; the Mathematical group
(counting, arithmetic) was dropped before annotation, so the data has 15 categories. The four "high-level"
groups of §5 / Figure 7 are linguistic, connectives, deductions and knowledge.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Category:
    """One leaf of the taxonomy (Figure 1)."""

    column: str  # column in the TaxiNLI files, e.g. 'lexical_linguistic'
    name: str  # short name used in the paper's figures, e.g. 'lexical'
    group: str  # high-level group of §5: linguistic | connectives | deductions | knowledge
    top: str  # top level of Figure 1: linguistic | logical | knowledge
    definition: str  # the paper's definition (§2.2), condensed to one line


CATEGORIES: tuple[Category, ...] = (
    Category("lexical_linguistic", "lexical", "linguistic", "linguistic",
             "P and H are almost the same apart from removal, addition or substitution of some lexical items"),
    Category("syntactic_linguistic", "syntactic", "linguistic", "linguistic",
             "syntactic variations or paraphrases are essential to detecting entailment"),
    Category("factivity_linguistic", "factivity", "linguistic", "linguistic",
             "H contains an assumed fact from P (existence of an entity or occurrence of an action)"),
    Category("negation_logic", "negation", "connectives", "logical", "P negates one (or more) of the facts in H"),
    Category("boolean_logic", "boolean", "connectives", "logical",
             "P is a set of statements connected by or / and, and H talks about one of them"),
    Category("quantifier_logic", "quantifier", "connectives", "logical",
             "P or H requires understanding existential or universal quantifiers"),
    Category("conditional_logic", "conditional", "connectives", "logical", "P or H has conditional statements"),
    Category("comparative_logic", "comparative", "connectives", "logical",
             "P (or H) compares entities via comparative phrases"),
    Category("relational_reasoning", "relational", "deductions", "logical",
             "deductive reasoning using relations present in the text"),
    Category("spatial_reasoning", "spatial", "deductions", "logical",
             "reasoning with spatial properties of objects in the text"),
    Category("temporal_reasoning", "temporal", "deductions", "logical",
             "reasoning with temporal properties (time intervals, durations, order) of events in the text"),
    Category("causal_reasoning", "causal", "deductions", "logical",
             "reasoning about cause, effect and intent behind an event or action"),
    Category("coreference_reasoning", "coreference", "deductions", "logical",
             "resolving who or what is referred to in the text"),
    Category("world_knowledge", "world", "knowledge", "knowledge",
             "knowledge about named entities, historical or current events, domain-specific knowledge"),
    Category("taxonomic_knowledge", "taxonomic", "knowledge", "knowledge",
             "taxonomies and hierarchies: IsA, hasA, hasProperty relations"),
)
COLUMNS: tuple[str, ...] = tuple(c.column for c in CATEGORIES)  # the files' category columns, in file order
NAMES: tuple[str, ...] = tuple(c.name for c in CATEGORIES)
GROUPS: tuple[str, ...] = ("linguistic", "connectives", "deductions", "knowledge")
# Figure 1 also lists a Mathematical group that the authors removed after their pilot study (too few examples).
REMOVED = {"mathematical": ("counting", "arithmetic")}
_BY_KEY = {**{c.column: c for c in CATEGORIES}, **{c.name: c for c in CATEGORIES}}


def category(key: str) -> Category:
    """The category named by column ('negation_logic') or short name ('negation')."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown TaxiNLI category {key!r}; known: {list(NAMES)}") from None


def short(column: str) -> str:
    """Short name of a category column; other strings pass through unchanged."""
    return _BY_KEY[column].name if column in _BY_KEY else column


def categories_in(group: str) -> list[Category]:
    """Categories of one high-level group (linguistic | connectives | deductions | knowledge)."""
    if group not in GROUPS:
        raise KeyError(f"unknown group {group!r}; known: {GROUPS}")
    return [c for c in CATEGORIES if c.group == group]


def indicators(df: pd.DataFrame) -> pd.DataFrame:
    """The 15 category columns as 0/1 ints, renamed to short names.

    The source has one value 2 (a syntactic annotation counted twice); indicators clip it to 1.

    >>> indicators(pd.DataFrame({c: [2 if c == "syntactic_linguistic" else 0] for c in COLUMNS})).sum(1).tolist()
    [1]
    """
    missing = [c for c in COLUMNS if c not in df]
    if missing:
        raise KeyError(f"frame lacks TaxiNLI category columns {missing}")
    return df[list(COLUMNS)].clip(upper=1).astype(int).set_axis(list(NAMES), axis=1)


def group_indicators(df: pd.DataFrame) -> pd.DataFrame:
    """One 0/1 column per high-level group: 1 when any category of the group is annotated."""
    ind = indicators(df)
    return pd.DataFrame({g: ind[[c.name for c in categories_in(g)]].max(axis=1) for g in GROUPS}, index=df.index)


def taxonomy_frame() -> pd.DataFrame:
    """Figure 1 as a table: one row per category (top level, group, name, column, definition)."""
    rows = [{"top": c.top, "group": c.group, "category": c.name, "column": c.column, "definition": c.definition,
             "annotated": True} for c in CATEGORIES]
    rows += [{"top": "logical", "group": g, "category": n, "column": "", "definition": "removed after the pilot study",
              "annotated": False} for g, names in REMOVED.items() for n in names]
    return pd.DataFrame(rows)


# Table 1 of the paper: one MNLI example per category, named by the start of the premise and hypothesis so it
# can be looked up in the data (the category for each row comes from the paper's table).
TABLE1_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("lexical", "so it's stayed cold for the entire week", "It has been cold for the whole week."),
    ("syntactic", "Those in Egypt, Libya, Iraq, and Yemen", "Secular nationalist revolutionaries eventually"),
    ("factivity", "The best place to view the spring azaleas", "There is an Azalea Festival at the Nezu Shrine."),
    ("negation", "They post loads of newspaper articles", "Yahoo does not post any articles from newspapers."),
    ("boolean", "on the mountainside is another terrace", "There is a terrace where musicians play."),
    ("quantifier", "Some travelers add Molokai and Lanai", "No one decides to go to Molokai and Lanai."),
    ("conditional", "If the revenue is transferred to the General Fund",
     "Revenue from the General Fund is not considered"),
    ("comparative", "Load time is divided into elemental", "The coverage related load time is longer than elemental."),
    ("relational", "Actually, my sister wrote a story on it.", "My sibling created a story about it."),
    ("spatial", "At the eastern end of Back Lane", "Nicholas Street becomes Patrick Street after turning left"),
    ("temporal", "See you Aug. 12, or soon thereafter", "The person told not to come until December."),
    ("causal", "A dozen minor wounds crossed his forearms", "The grenade explosion left him with a lot of wounds."),
    ("coreference", "According to contemporaneous notes, at 9:55", "The President called the Vice President"),
    ("world", "bringing Steve Jobs back to save Apple", "Steve Jobs unretired in 2002."),
    ("taxonomic", "Georgie stepped on a beautiful pansy", "Georgie crushed a beautiful flower in Chapter 8"),
)


def table1(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 examples looked up in TaxiNLI, with the categories the data actually carries.

    One row per Table 1 entry: the paper's category, the pair, its gold label, the annotated categories and
    whether the paper's category is among them (`agrees`). Entries not found have found=False.
    """
    ind = indicators(df)
    rows = []
    for name, prem, hyp in TABLE1_EXAMPLES:
        hit = df[df["premise"].str.contains(prem, regex=False) & df["hypothesis"].str.startswith(hyp)]
        if hit.empty:
            rows.append({"paper_category": name, "premise": prem, "hypothesis": hyp, "found": False})
            continue
        i = hit.index[0]
        annotated = [n for n in NAMES if ind.at[i, n]]
        rows.append({"paper_category": name, "premise": df.at[i, "premise"], "hypothesis": df.at[i, "hypothesis"],
                     "label": df.at[i, "label"], "found": True, "annotated_categories": ", ".join(annotated),
                     "agrees": name in annotated})
    return pd.DataFrame(rows)


# Table 4 (Appendix A): earlier error-analysis categorisations grouped under four linguistic levels.
# Transcribed from the paper's text extraction; the PDF spreads some cells over two rows ("Tricky" spans
# syntax and pragmatics, "Reference and Names" reasoning and knowledge), so the row alignment is approximate.
OTHER_CATEGORIZATIONS: tuple[tuple[str, str, str], ...] = (
    ("lexical", "Standard Inference; Lexical Inference",
     "Lexical Entailment; Morphological Negation; Factivity; Redundancy"),
    ("syntactic", "Tricky; Standard Inference",
     "Syntactic Ambiguity; Prepositional Phrase; Alternations: Active/Passive, Genitives/Partitives, "
     "Nominalization, Datives"),
    ("semantic", "Numerical, Quantitative; Reference and Names; Reasoning about Facts",
     "Propositional Structure; Intersectivity; Quantifiers; Restrictivity; Quantification; Counting; "
     "Symmetry/Collectivity; Coreference; Richer Logical Structures; Named Entities; Knowledge and Commonsense"),
    ("pragmatic", "Tricky", "Ellipsis/Implicits"),
)


def table4() -> pd.DataFrame:
    """Appendix A, Table 4: ANLI inference types and GLUE diagnostic categories by high-level level."""
    return pd.DataFrame(OTHER_CATEGORIZATIONS, columns=["level", "ANLI inference types", "GLUE diagnostic"])


def plot_taxonomy(ax=None):
    """Figure 1 drawn from `CATEGORIES` (removed Mathematical leaves in grey); returns the figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(13, 4.6))
    leaves = [(c.top, c.group if c.top == "logical" else None, c.name, True) for c in CATEGORIES]
    logical_order = ["connectives", "mathematical", "deductions"]
    leaves += [("logical", g, n, False) for g, names in REMOVED.items() for n in names]
    tops = ["linguistic", "logical", "knowledge"]
    leaves.sort(key=lambda t: (tops.index(t[0]), logical_order.index(t[1]) if t[1] else 0))
    xs = {i: i for i in range(len(leaves))}
    box = dict(boxstyle="round,pad=0.3", fc="white", ec="0.3")
    y_leaf, y_mid, y_top, y_root = 0.0, 1.0, 2.0, 3.0

    def node(x, y, text, grey=False):
        ax.text(x, y, text, ha="center", va="center", fontsize=8, rotation=90 if y == y_leaf else 0,
                bbox={**box, "ec": "0.7" if grey else "0.3"}, color="0.6" if grey else "black")

    top_x = {}
    for top in tops:
        idx = [i for i, t in enumerate(leaves) if t[0] == top]
        top_x[top] = sum(xs[i] for i in idx) / len(idx)
        parents = {}
        if top == "logical":
            for g in logical_order:
                gi = [i for i in idx if leaves[i][1] == g]
                parents[g] = sum(xs[i] for i in gi) / len(gi)
                node(parents[g], y_mid, g, grey=g in REMOVED)
                ax.plot([top_x[top], parents[g]], [y_top - 0.15, y_mid + 0.15], color="0.5", lw=0.8)
        for i in idx:
            px, py = (parents[leaves[i][1]], y_mid) if top == "logical" else (top_x[top], y_top)
            ax.plot([px, xs[i]], [py - 0.15, y_leaf + 0.45], color="0.5", lw=0.8)
            node(xs[i], y_leaf, leaves[i][2], grey=not leaves[i][3])
        node(top_x[top], y_top, top)
        ax.plot([(len(leaves) - 1) / 2, top_x[top]], [y_root - 0.15, y_top + 0.15], color="0.5", lw=0.8)
    node((len(leaves) - 1) / 2, y_root, "NLI")
    ax.set_xlim(-1, len(leaves))
    ax.set_ylim(-0.9, 3.4)
    ax.axis("off")
    return ax.figure
