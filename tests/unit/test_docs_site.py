"""The front door and the reference: the README stays a newcomer's page (at most 250 lines, its
links to docs/ alive), and the docs site builds with `mkdocs build --strict` (a broken link,
anchor or nav entry fails it) into a site that works from its files (tests/pages/
test_docs_site_offline.py opens it in Chromium; tests/docs/test_code_blocks.py runs its code)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
    # the two set-up commands, and the pictures of the job
    assert "pip install -e . && asaql run samples/iot_devices/query.sql" in text
    assert "bash .ci/run" in text
    assert all(f"docs/screenshots/{name}.png" in text for name in ("explain", "live", "report"))


def test_the_docs_site_builds_strictly(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir",
         str(tmp_path / "site"), "--config-file", str(ROOT / "mkdocs.yml")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    site = tmp_path / "site"
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    # one .html file per page (use_directory_urls: false), so that links work from file://
    for page in ("index.html", "getting-started.html", "speed.html", "pages.html",
                 "language.html"):
        assert page in files
    assert not any(name.endswith("/index.html") for name in files), sorted(files)
    # offline: the search index as a script, the worker shim from the site, no web fonts
    assert "search/search_index.js" in files
    assert "assets/javascripts/iframe-worker-shim.js" in files
    index = (site / "index.html").read_text()
    assert "unpkg.com" not in index and "fonts.googleapis.com" not in index


def prose(text: str) -> str:
    """A page's text outside its code blocks."""
    return re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)


def test_long_pages_have_sections_a_table_of_contents_shows():
    """No wall of bullets under one heading: a page of more than 1,000 words has a `##`
    section for every 700 words or fewer (the site's table of contents lists them)."""
    walls = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text()
        words = len(prose(text).split())
        sections = len(re.findall(r"^##+ \S", prose(text), flags=re.M))
        if words > 1000 and words / (sections + 1) > 700:
            walls.append(f"{page.name}: {words} words, {sections} sections")
    assert not walls, walls


def test_run_page_starts_with_what_a_user_does_first():
    """docs/run.md opens with running a query over a file (its output, the summary); the
    internal switches (--engine, --step) come last, under Advanced."""
    text = prose((ROOT / "docs" / "run.md").read_text())
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[0] == "Run a query over a file"
    assert headings[-1].startswith("Advanced")
    advanced = text.index("## " + headings[-1])
    assert text.index("--engine") > advanced and text.index("--step") > advanced
