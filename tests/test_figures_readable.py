"""Figures a reader can read: small groups drawn as points, the paper's value beside ours, method-demonstration
warnings inside the image, and PDFs whose bytes depend only on the figure."""
from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")


def test_a_saved_figure_s_pdf_has_the_same_bytes_every_time(tmp_path, monkeypatch):
    """No creation date in the PDF: two saves of one figure (a second apart, as two runs are) are byte-identical."""
    import time

    import matplotlib.pyplot as plt

    from nli_lib.outputs import Outputs

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1])
    ax.set_title("n = 0 · μ → ours")
    saved = []
    for i in range(2):
        out = Outputs(f"00_x{i}", params={"quick": False}, tier="offline", seed=0)
        png = out.figure(fig, "f", ref="companion-fig-1", caption="a figure")
        saved.append(png.with_suffix(".pdf").read_bytes())
        if not i:
            time.sleep(1.1)  # matplotlib's creation date has one-second resolution
    plt.close(fig)
    assert b"CreationDate" not in saved[0]
    assert saved[0] == saved[1]


def test_the_scorecard_figure_keeps_zeros_and_gives_each_status_one_colour():
    """Every recorded entry is drawn (ours = 0 and a printed 0 included, where log axes dropped them), at its
    relative difference from the paper (a 20 % gap sits at 20, whatever the quantity's scale), in its status's
    colour, the same colour as in the count bars; not-computed entries are not drawn."""
    import matplotlib.colors as mcolors

    from nli_lib import scorecard

    card = pd.DataFrame({
        "paper": ["a", "a", "b", "b", "b"], "ref": "r", "quantity": ["q1", "q2", "q3", "q4", "q5"],
        "paper_value": [10.0, 0.0, 1e4, 0.01, 5.0], "ours": [0.0, 0.0, 1.2e4, 0.012, float("nan")],
        "status": ["differs", "stand-in", "differs", "not graded", "not computed: needs X"]})
    fig = scorecard.figure(card)
    bars, like, rest = fig.axes
    drawn = {ax: [tuple(o) for c in ax.collections for o in c.get_offsets()] for ax in (like, rest)}
    assert sorted(x for x, _ in drawn[like]) == [-100.0, 20.0]
    assert sorted(x for x, _ in drawn[rest]) == [0.0, 20.0]
    colours = {t.get_text().split(" (")[0]: mcolors.to_hex(h.get_facecolor()[0] if hasattr(h, "get_facecolor")
                                                            else h.get_color())
               for ax in (like, rest) for h, t in zip(ax.get_legend().legend_handles, ax.get_legend().get_texts())}
    bar_colours = {t.get_text(): mcolors.to_hex(h.get_facecolor())
                   for h, t in zip(bars.get_legend().legend_handles, bars.get_legend().get_texts())}
    assert colours == {s: bar_colours[s] for s in ("differs", "stand-in", "not graded")}
    assert len(set(bar_colours.values())) == len(bar_colours)  # one colour, one meaning


def test_a_method_demonstration_warning_is_printed_in_the_figure_not_only_its_sidecar(tmp_path, monkeypatch):
    """Atoms Figures 5-7 carry the `demo` warning in their captions: saving one puts the warning's text into the
    figure itself (once, even for a plot that already prints it); no warning, no note."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from nli_lib.atoms import plots
    from nli_lib.figures import NOTE_GID
    from nli_lib.notebook import NotebookSession
    from nli_lib.outputs import Outputs
    from nli_lib.profile import load_profile

    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    stem, params = "12_atoms_defeasible", {"tier": "offline", "seed": 0, "quick": True}
    nb = NotebookSession(name=stem, profile=load_profile(text="tier: offline\nseed: 0\n"), params=params,
                         out=Outputs(stem, params=params))
    demo = "METHOD DEMONSTRATION, not a result: the silver atom labels fail the project's checks (placebo). "
    labeled = pd.DataFrame({"label": [-2, 0, 1, 2, 2]})
    summary = pd.DataFrame({"n_valid": [2, 3], "n_critical": [1, 3], "critical_share": [0.5, 1.0],
                            "labels": [[1, 2], [0, 1, 2]]})
    figs = {"figure-5-labels": plots.label_distribution(labeled, "silver"),
            "figure-7-critical-share": plots.critical_share(summary, "silver")}
    for name, fig in figs.items():
        nb.save(fig, name, models=["m"], demo=demo, source="silver")
        notes = [t.get_text() for t in fig.findobj(Text) if t.get_gid() == NOTE_GID]
        assert len(notes) == 1 and "METHOD DEMONSTRATION" in notes[0] and "placebo" in notes[0].replace("\n", " ")
    clean = plots.label_distribution(labeled, "gold")
    nb.save(clean, "figure-5-labels", models=["m"], demo="", source="gold")
    assert not [t for t in clean.findobj(Text) if t.get_gid() == NOTE_GID]
    for fig in (*figs.values(), clean):
        plt.close(fig)


def test_atoms_figures_draw_the_paper_s_printed_values_beside_ours():
    """Notebook 11's consistency-by-label bars and notebook 13's I_C intervals carry the paper's Table 2 / Table 4
    values, looked up in the paper values (never typed into the plot), labelled as the paper's."""
    import matplotlib.pyplot as plt

    from nli_lib.atoms import plots
    from nli_lib.atoms.report import TABLE2_METRICS, TABLE4_METRICS, paper_reference

    t2 = pd.DataFrame({"model": ["ours"], "consistency_pred_entailment": [11.0], "consistency_pred_neutral": [12.0],
                       "consistency_pred_contradiction": [13.0]})
    fig = plots.consistency_by_label(t2, "offline")
    heights = [round(p.get_height(), 6) for p in fig.axes[0].patches]
    printed = paper_reference("atoms-table-2", TABLE2_METRICS)
    cols = list(t2.columns[1:])
    assert heights == [11.0, 12.0, 13.0, *printed[cols].round(6).to_numpy().ravel().tolist()]
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["ours", *(f"paper: {m}" for m in printed["model"])]

    t4 = pd.DataFrame({"model": ["ours"], "inferential_consistency": [70.0], "ci_low": [60.0], "ci_high": [80.0],
                       "buckets": [2]})
    fig4 = plots.ic_intervals(t4, "offline", "silver")
    marks = [line for line in fig4.axes[0].get_lines() if line.get_marker() == "D"]
    assert len(marks) == 1
    assert list(marks[0].get_xdata()) == paper_reference("atoms-table-4", TABLE4_METRICS)[
        "inferential_consistency"].tolist()
    plt.close(fig)
    plt.close(fig4)


def test_the_phrasis_coherence_figure_draws_the_paper_s_best_printed_values():
    """Notebook 21's coherence comparison ends with a hatched row of the paper's best SoftCoh/HardCoh per scenario
    and split, taken from its Tables 4-7 in the paper values."""
    import matplotlib.pyplot as plt

    from nli_lib.phrasis.analysis import paper_long
    from nli_lib.phrasis.figures import PAPER_BEST, plot_coherence

    summary = pd.DataFrame({"model": ["svm"] * 2, "split": ["seen", "unseen"], "scenario": ["All-A"] * 2,
                            "SoftCoh": [0.5, 0.4], "HardCoh": [0.2, 0.1], "n_pairs": [40, 50], "tier": "offline"})
    fig = plot_coherence(summary)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["svm", PAPER_BEST]
    hatched = sorted(round(p.get_width(), 6) for p in ax.patches if p.get_hatch())
    best = sorted(round(float(paper_long(f"phrasis-table-{n}").query("scenario == 'All-A'")["value"].max()), 6)
                  for n in (4, 5, 6, 7))
    assert hatched == best
    plt.close(fig)


def test_the_factnli_accuracy_figure_draws_the_paper_s_table_2_beside_ours():
    """Notebook 41's accuracy-by-level figure carries the paper's Table 2 (SNLI): its models' range per level as a
    band and their printed average as a line, read from the paper values."""
    import matplotlib.pyplot as plt

    from nli_lib.factnli.figures import accuracy_figure
    from nli_lib.paper_values import paper_value

    acc = pd.DataFrame({"model": "m", "tier": "offline", "level": [0, 1, 2, 3], "n": 10, "accuracy": 50.0,
                        "ci_low": 40.0, "ci_high": 60.0})
    fig = accuracy_figure(acc)
    ax = fig.axes[0]
    average = [line for line in ax.get_lines() if line.get_label() == "paper: average of its models"]
    assert len(average) == 1
    assert list(average[0].get_ydata()) == [paper_value("factnli-table-2", f"Average SNLI Acc L={k}") for k in range(4)]
    band = [c for c in ax.collections if "range" in c.get_label()]
    assert len(band) == 1 and band[0].get_label().startswith("paper: its ")
    plt.close(fig)


def _taxinli_sample(n: int = 90) -> pd.DataFrame:
    """n TaxiNLI-like rows whose connectives take 12 values (single categories and pairs)."""
    from nli_lib.taxinli.taxonomy import COLUMNS, short

    combos = [(), ("negation",), ("boolean",), ("quantifier",), ("conditional",), ("comparative",),
              ("monotonicity",), ("negation", "boolean"), ("boolean", "quantifier"), ("negation", "quantifier"),
              ("comparative", "boolean"), ("conditional", "negation")]
    rows = []
    for i in range(n):
        cats = combos[i % len(combos)] + (("lexical",) if i % 3 else ("world",))
        rows.append({"label": ["entailment", "neutral", "contradiction"][i % 3],
                     **{c: int(short(c) in cats) for c in COLUMNS}})
    return pd.DataFrame(rows)


def test_taxinli_t_sne_figures_are_readable_at_the_book_s_width():
    """Notebook 54's grid shows three layers (first, middle, last) of seven, no unkeyed inset (the NLI label is a
    keyed row of its own), at most MAX_COLOURS colour-blind-safe colours plus 'none' and 'other' per panel, and
    legends of 9 pt; the best-layer figure keys the NLI label beside each group's map."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from nli_lib.taxinli import representations as rep

    df = _taxinli_sample()
    rng = np.random.default_rng(0)
    coords = {k: rng.normal(size=(len(df), 2)) for k in range(7)}
    fig = rep.plot_tsne_grid(coords, df)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["layer 0 (embeddings)", "layer 3", "layer 6"]
    assert not any(ax.child_axes for ax in fig.axes)  # no inset
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == len(rep.GRID_ROWS) + 1  # every row keyed, the NLI label included
    assert min(t.get_fontsize() for lg in legends for t in lg.get_texts()) >= 9
    allowed = {to_hex(c) for c in (*rep.CB_COLORS, rep.OTHER_COLOR, rep.NONE_COLOR, *rep.NLI_COLORS.values())}
    for ax in fig.axes:
        colours = {to_hex(line.get_color()) for line in ax.get_lines()}
        assert colours <= allowed and len(colours) <= rep.MAX_COLOURS + 2
    connectives = [t.get_text() for t in legends[3].get_texts()]
    assert connectives[0].startswith("none") and connectives[-1].startswith("other")
    plt.close(fig)

    sep = pd.DataFrame([{"kind": "group", "target": g, "layer": k, "probe_auc": 0.5 + 0.01 * k}
                        for g in rep.GROUPS for k in coords])
    fig, _ = rep.figure7_panels(coords, sep, df)
    assert not any(ax.child_axes for ax in fig.axes)
    nli_keys = [ax.get_legend() for ax in fig.axes if "NLI label" in ax.get_title()]
    assert len(nli_keys) == len(rep.GROUPS) and all(lg is not None for lg in nli_keys)
    plt.close(fig)
