"""Diagnose your own model: the five papers' lenses on any NLI model, side by side, in one report.

`paired` holds the significance tests that compare two models scored on the same items.
"""
