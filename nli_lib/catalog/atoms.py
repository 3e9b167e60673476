"""Outputs of the atoms notebooks: name, paper reference and caption, declared once (see nli_lib.catalog)."""
from . import OutputSpec  # noqa: F401

OUTPUTS: dict[str, list[OutputSpec]] = {}
