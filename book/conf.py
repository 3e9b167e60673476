"""Sphinx configuration of the book (built by scripts/book.sh from a staged copy of one executed run).

The staged source (book/_build/src/) holds the executed notebooks and generated pages; this folder holds
the configuration, the hand-written pages and the stylesheet. Notebooks are rendered with their stored
outputs and never executed (nb_execution_mode = "off").
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent

project = "NLI companion"
author = "nli-companion contributors"
copyright = "nli-companion contributors (code: MIT; dataset excerpts: see Data licences)"

extensions = ["myst_nb"]
nb_execution_mode = "off"  # outputs as executed by run_all.sh; the book build runs no code
nb_output_stderr = "show"  # warnings a notebook printed stay visible, as in JupyterLab
nb_merge_streams = False  # prepare.py joins consecutive prints (merging all would lift labels above every table)
nb_render_markdown_format = "myst"  # Markdown a cell displays (notebook 92's report) keeps its tables
myst_enable_extensions = []  # no dollar math: a '$' in the narrative is a dollar sign
myst_heading_anchors = 3  # GitHub's anchors for headings, so links between the docs/ pages work in the book too
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]  # notebooks may skip a heading level; harmless on the page

html_theme = "sphinx_book_theme"
html_title = "NLI companion: the book"
html_static_path = [str(HERE / "_static")]
html_css_files = ["book.css"]
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "show_navbar_depth": 1,
    "home_page_in_toc": True,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
}
html_context = {"default_mode": "light"}  # an explicit mode: the theme logs an error for the empty default
nb_ipywidgets_js = {}  # widget outputs are made static by prepare.py: no widget scripts from a CDN
