"""The front door and the reference: the README stays a newcomer's page (at most 250 lines, its
links to docs/ alive), and the docs site builds with `mkdocs build --strict` (a broken link,
anchor or nav entry fails it)."""

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
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob(
        "index.html")}
    for page in ("index.html", "speed/index.html", "pages/index.html", "language/index.html"):
        assert page in pages
