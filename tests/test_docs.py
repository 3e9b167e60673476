"""The documents for users: the README is a short front page, reference lives under docs/, and every relative link
between them (and to the repository's files) resolves, headings included.

Generated blocks each have one home: the scorecard summary and gallery in README.md (notebook 90), the scorecard
in REPRODUCTION.md (notebook 90), the benchmark table in benchmarks/README.md (benchmarks/report.py) and the
profile key table in docs/profiles.md (scripts/profile_keys.py).
"""
from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README_MAX_LINES = 250

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
DIARY = re.compile(r"\b(Zen \d|Skylake|Ice Lake|Sapphire Rapids|(first|second|third|fourth|fifth|sixth|seventh|"
                   r"eighth|ninth|tenth|eleventh|twelfth|\w+teenth|\w+tieth|twenty-\w+) session)\b")  # a measurement diary


def pages() -> list[Path]:
    """The user documents whose links must resolve."""
    found = [REPO / "README.md", REPO / "REPRODUCTION.md", REPO / "CHANGELOG.md", REPO / "benchmarks" / "README.md"]
    return found + sorted((REPO / "docs").glob("*.md"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading (MyST's `myst_heading_anchors` makes the same one in the book).

    >>> slug("Running the notebooks: `run_all.sh`"), slug("LLM endpoints for the papers' models")
    ('running-the-notebooks-run_allsh', 'llm-endpoints-for-the-papers-models')
    """
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file (repeated headings get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text())):
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    """Relative link targets of a Markdown file (code blocks and code spans are not links)."""
    text = INLINE_CODE.sub("", FENCE.sub("", path.read_text()))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def broken_links(path: Path) -> list[str]:
    """Links of `path` to a file that does not exist, or to a heading its target does not have."""
    problems = []
    for target in links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{path.relative_to(REPO)}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{path.relative_to(REPO)}: {target}: no heading with that anchor in {dest.name}")
    return problems


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Its part\n")
    page = tmp_path / "README.md"
    page.write_text("# Front\n[ok](docs/a.md#its-part) [self](#front) `[code](nowhere.md)` ![img](docs/a.md)\n"
                    "[gone](docs/b.md) [bad anchor](docs/a.md#missing) [web](https://example.org/x.md)\n"
                    "```\n[fenced](nowhere.md)\n```\n")
    assert broken_links(page) == ["README.md: docs/b.md: no such file",
                                  "README.md: docs/a.md#missing: no heading with that anchor in a.md"]


def test_readme_is_a_short_front_page_that_links_every_docs_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    linked = {t.partition("#")[0] for t in links(REPO / "README.md")}
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"docs/{page.name}" in linked, f"README.md does not link {page.relative_to(REPO)}"
    assert "benchmarks/README.md" in linked


def test_each_generated_block_has_one_home():
    from nli_lib import bench, scorecard

    spec = importlib.util.spec_from_file_location("profile_keys", REPO / "scripts" / "profile_keys.py")
    profile_keys = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(profile_keys)
    homes = {scorecard.SUMMARY_START: REPO / scorecard.README, scorecard.GALLERY_START: REPO / scorecard.README,
             scorecard.START: REPO / scorecard.REPRODUCTION, bench.README_START: REPO / "benchmarks" / "README.md",
             profile_keys.START: profile_keys.PAGE}
    candidates = pages() + [REPO / "book" / "intro.md", REPO / "book" / "about.md"]
    for marker, home in homes.items():
        holders = [p.relative_to(REPO).as_posix() for p in candidates if marker in p.read_text()]
        assert holders == [home.relative_to(REPO).as_posix()], (marker, holders)


def changelog_problems(text: str) -> list[str]:
    """What keeps a changelog from the Keep-a-Changelog shape this project uses: `## [Unreleased]` first, then
    dated sections (`## YYYY-MM-DD`, newest first), each with only Added / Changed / Fixed subsections of one-line
    entries, and no measurement diary (CPU generations, sessions)."""
    problems, sections = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            sections.append(line[3:])
            if line != "## [Unreleased]" and not re.fullmatch(r"## \d{4}-\d{2}-\d{2}", line):
                problems.append(f"line {number}: section {line!r} is neither [Unreleased] nor a date")
        elif line.startswith("### ") and line[4:] not in ("Added", "Changed", "Fixed"):
            problems.append(f"line {number}: subsection {line!r} (only Added, Changed, Fixed)")
        elif sections and line.strip() and not line.startswith(("- ", "#")):
            problems.append(f"line {number}: not a one-line entry: {line[:60]!r}")
        if DIARY.search(line):
            problems.append(f"line {number}: a measurement diary: {line[:60]!r}")
    if sections[:1] != ["[Unreleased]"]:
        problems.append("the first section is not ## [Unreleased]")
    dates = sections[1:]
    if dates != sorted(dates, reverse=True):
        problems.append(f"dated sections are not newest first: {dates}")
    return problems


def test_changelog_lists_changes_one_line_each():
    text = (REPO / "CHANGELOG.md").read_text()
    assert changelog_problems(text) == []
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## ", 1)[0]
    assert [line for line in unreleased.splitlines() if line.startswith("### ")] == \
        ["### Added", "### Changed", "### Fixed"]


def test_changelog_check_catches_a_diary_and_a_wrapped_entry():
    bad = ("# Changelog\n\n## [Unreleased]\n\n### Added\n\n## 2026-11-29\n\n### Changed (second session)\n"
           "- Faster int8 on the Zen 4,\n  wrapped onto a second line.\n\n## 2026-11-30\n\n### Fixed\n- ok.\n")
    problems = changelog_problems(bad)
    assert any("subsection" in p for p in problems) and any("not a one-line entry" in p for p in problems)
    assert any("diary" in p for p in problems) and any("newest first" in p for p in problems)
