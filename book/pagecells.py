"""What a book page shows of a notebook's cells: outputs without the builder's machine in them, the section
each saved output sits in, committed tables as HTML, and which commit the committed results come from.

A reader of the book never sees the builder's paths (the checkout, the run's temporary output folder, the home
folder), the bookkeeping `nb.finish()` prints, or the absolute profile path the runner injects as a parameter.
"""
from __future__ import annotations

import html
import math
import re
import subprocess
from pathlib import Path

import pandas as pd

BOOK_DIR = Path(__file__).resolve().parent
REPO_ROOT = BOOK_DIR.parent
TEXT_TYPES = ("text/plain", "text/html", "text/markdown")
_TEMP = re.compile(r"(?<![\w./-])(?:/private)?/(?:tmp|var/tmp|var/folders)/[^\s'\"<>()\[\],;]*")
_OUTPUT_DIRS = ("tables", "figures", "runs")
_CR = re.compile(r"[^\n]*\r(?=[^\n])")
_BACKSPACE = re.compile(r"[^\n]\x08")


def scrub_paths(text: str, roots: tuple = ()) -> str:
    """`text` without the builder's machine in it: the checkout and `roots` (output folders) become relative,
    a temporary path keeps what follows its tables/, figures/ or runs/ folder (else its last part), and the
    home folder is `~`.

    >>> scrub_paths("/work/x/nli_lib/a.py:3: Warn; cd /work/x, not /work/x2", roots=(Path("/work/x"),))
    'nli_lib/a.py:3: Warn; cd ., not /work/x2'
    >>> scrub_paths("   /tmp/outwarm/tables/00_data/sizes.csv\\nsaved /tmp/pytest-1/t0/scratch.json")
    '   tables/00_data/sizes.csv\\nsaved scratch.json'
    """
    for root in (*roots, REPO_ROOT):
        text = text.replace(f"{Path(root)}/", "")
        text = re.sub(re.escape(str(Path(root))) + r"(?![\w.-])", ".", text)  # the folder itself, not /work/x2

    def temp(match: re.Match) -> str:
        parts = match.group(0).split("/")
        for folder in _OUTPUT_DIRS:  # tables/ and figures/ before the run folder that may hold them
            found = [i for i, part in enumerate(parts[:-1]) if part == folder]
            if found:
                return "/".join(parts[found[-1]:])
        return parts[-1] or parts[-2]

    text = _TEMP.sub(temp, text)
    home = str(Path.home())
    return text.replace(f"{home}/", "~/") if home not in ("/", "") else text


def _terminal(text: str) -> str:
    """Stream text as a terminal leaves it: a carriage return overwrites its line, a backspace its character."""
    previous = None
    while previous != text:
        previous, text = text, _BACKSPACE.sub("", text)
    return _CR.sub("", text)


def clean_outputs(cell, roots: tuple = ()) -> None:
    """A code cell's outputs as a reader should see them (in place): paths scrubbed, consecutive prints of one
    stream joined and carriage returns applied. Streams are joined only when consecutive, so a label printed
    before each displayed table stays above its table (MyST-NB's merge_streams would move every print of a
    cell above its first table; the book's conf.py turns it off).

    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell("...")
    >>> cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="Table 4\\n"),
    ...     nbformat.v4.new_output("display_data", data={"text/plain": "t4"}),
    ...     nbformat.v4.new_output("stream", name="stdout", text="Table 5\\n"),
    ...     nbformat.v4.new_output("stream", name="stdout", text="50%\\r100%\\n")]
    >>> clean_outputs(cell)
    >>> [o.get("text") or o["data"]["text/plain"] for o in cell.outputs]
    ['Table 4\\n', 't4', 'Table 5\\n100%\\n']
    """
    outputs = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            out["text"] = scrub_paths(out.get("text", ""), roots)
            last = outputs[-1] if outputs else None
            if last is not None and last.get("output_type") == "stream" and last.get("name") == out.get("name"):
                last["text"] += out["text"]
                continue
        else:
            for kind in TEXT_TYPES:
                value = out.get("data", {}).get(kind)
                if isinstance(value, str):
                    out["data"][kind] = scrub_paths(value, roots)
                elif isinstance(value, list):
                    out["data"][kind] = [scrub_paths(line, roots) for line in value]
        outputs.append(out)
    for out in outputs:
        if out.get("output_type") == "stream":
            out["text"] = _terminal(out["text"])
    cell.outputs = outputs


def is_bookkeeping(source: str) -> bool:
    """Whether a code cell is the notebook's closing `nb.finish()` (its printout is the run's bookkeeping: call
    summary, cache path, the files it published), whose output the book hides.

    >>> is_bookkeeping("nb.finish()"), is_bookkeeping("summary = nb.finish()\\n"), is_bookkeeping("nb.save(t)")
    (True, True, False)
    """
    return re.search(r"(?m)^\s*(?:\w+\s*=\s*)?nb\.finish\(\)\s*$", source) is not None


def parameters_source(source: str, roots: tuple = ()) -> str:
    """The injected parameters as a reader would type them: a shipped profile by its name, any other path
    relative to the checkout.

    >>> parameters_source('# Parameters\\nprofile = "' + str(REPO_ROOT) + '/nli_lib/resources/profiles/offline.yaml"\\n'
    ...                   'quick = True\\n')
    '# Parameters\\nprofile = "offline"\\nquick = True\\n'
    """
    shipped = re.compile(r"""(["'])[^"'\n]*/nli_lib/resources/profiles/([\w.-]+)\.ya?ml\1""")
    return scrub_paths(shipped.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(1)}", source), roots)


def heading_text(line: str) -> str:
    """A Markdown heading's text as the page shows it (no `#`, backticks, link targets or emphasis marks).

    >>> heading_text("## Table 3 with `models=` and [links](x.md) **now**")
    'Table 3 with models= and links now'
    """
    text = re.sub(r"^#+\s*", "", line.strip())
    text = re.sub(r"`([^`]*)`|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or m.group(2) or "", text)
    return re.sub(r"(\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w))", "", text).strip()


def section_above(cells, index: int) -> str:
    """The heading a reader sees above cell `index`: the last Markdown heading of the cells up to it.

    >>> import nbformat
    >>> cells = [nbformat.v4.new_markdown_cell("# Title\\n\\ntext"), nbformat.v4.new_code_cell("x"),
    ...          nbformat.v4.new_markdown_cell("## Results\\n### Table 4\\nmore"), nbformat.v4.new_code_cell("y")]
    >>> section_above(cells, 1), section_above(cells, 3)
    ('Title', 'Table 4')
    """
    for cell in reversed(list(cells)[: index + 1]):
        if cell.cell_type != "markdown":
            continue
        fenced = re.sub(r"(?ms)^(```|~~~).*?^\1", "", cell.source)
        headings = [line for line in fenced.splitlines() if re.match(r"#{1,6}\s", line)]
        if headings:
            return heading_text(headings[-1])
    return ""


def _cell_text(value) -> str:
    """One table cell as the page shows it: numbers rounded to what a reader compares, blanks for missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))
        return f"{value:.3f}" if abs(value) < 1_000 else f"{value:,.1f}"
    return str(value).replace("\n", " ")


def table_html(csv: Path, max_rows: int = 20) -> str:
    """A committed CSV table as an HTML block for a Markdown cell, numbers rounded; a table longer than
    `max_rows` is folded, opening to its first `max_rows` rows.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("model,acc\\nA <b>,0.912345\\nB,\\n")
    >>> block = table_html(path, max_rows=1)
    >>> block[block.index("<tbody>"):block.index("</tbody>")]
    '<tbody><tr><td>A &lt;b&gt;</td><td>0.912</td></tr>'
    >>> block[block.index("<summary"):block.index("</summary>")]
    '<summary class="saved-table-rows">2 rows: show the first 1 (the CSV below holds them all)'
    >>> "<details>" in table_html(path)
    False
    """
    df = pd.read_csv(csv, keep_default_na=False, na_values=[""], low_memory=False)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(_cell_text(v))}</td>" for v in row) + "</tr>"
                   for row in df.head(max_rows).itertuples(index=False))
    table = f'<table class="dataframe"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
    if len(df) > max_rows:  # a long listing stays folded: the page reads on to its summary
        table = (f'<details><summary class="saved-table-rows">{len(df):,} rows: show the first {max_rows} (the '
                 f"CSV below holds them all)</summary>{table}</details>")
    return f'<div class="saved-table">{table}</div>'



def plural(n: int, word: str) -> str:
    """'1 figure', '2 tables'.

    >>> plural(1, "figure"), plural(0, "table")
    ('1 figure', '0 tables')
    """
    return f"{n} {word}{'' if n == 1 else 's'}"


def anchor(*parts: str) -> str:
    """An HTML id for a saved output's block (what the browser test looks up).

    >>> anchor("21_phrasis_coherence", "table", "table-4")
    'saved-21-phrasis-coherence-table-table-4'
    """
    return "saved-" + re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def committed_state() -> dict:
    """The commit the committed results are read at: {'commit': short hash or None (no git checkout), 'date':
    its commit date, 'changed': the tables/ and figures/ folders with uncommitted changes}."""
    head = _git("log", "-1", "--format=%h %cs")
    commit, _, date = (head or "").partition(" ")
    status = _git("status", "--porcelain", "--untracked-files=all", "--", "tables", "figures") or ""
    changed = sorted({"/".join(line[3:].strip().strip('"').split("/")[:2]) for line in status.splitlines()
                      if line[3:].startswith(("tables/", "figures/"))})
    return {"commit": commit or None, "date": date or None, "changed": changed}
