"""Diagnose your own model: the five papers' lenses on any NLI model, side by side, in one report.

    nli-companion diagnose offline:minilm-esnli tfidf-logreg --quick          (docs/diagnose.md; notebook 92)

One small module per concern:

    candidates   MODEL as typed -> checked (3-way NLI head?) -> loaded, before anything runs
    lenses       what a lens returns (LensResult) and the helpers the lenses share (intervals, paper rows)
    lens_*       one lens per paper (atoms, ftc, factnli, taxinli, phrasis), each calling its notebook's functions
    registry     the lenses by name
    paired       McNemar's exact test and the paired bootstrap (two models, the same items)
    compare      several models side by side, and the paired tests between them
    report       the report: JSON and Markdown
    command      `diagnose()` and the command line
"""
