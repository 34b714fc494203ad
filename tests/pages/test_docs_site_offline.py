"""The docs site works opened from its files (`mkdocs build`, then file://, no server, no
network), in a real headless Chromium: every nav link lands on its page (not on a folder's
listing), and search finds a word and leads to the page that has it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `mkdocs build` makes it (strict: a warning fails the build)."""
    folder = tmp_path_factory.mktemp("docs-site") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir",
         str(folder), "--config-file", str(ROOT / "mkdocs.yml")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


def nav_pages() -> set[str]:
    """The .html file of each page in mkdocs.yml's nav."""
    def pages(entries):
        for entry in entries:
            for value in entry.values():
                yield from pages(value) if isinstance(value, list) else [value]
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    return {page.removesuffix(".md") + ".html" for page in pages(nav)}


def local_file(url: str) -> Path:
    parts = urlsplit(url)
    assert parts.scheme == "file", url
    return Path(url2pathname(parts.path))


def test_every_nav_link_lands_on_its_page(site, offline_page, screenshots):
    page, failed = offline_page
    page.goto((site / "index.html").as_uri())
    links = page.evaluate("""[...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]
        .map(a => ({href: a.href, text: a.textContent.trim()}))""")
    hrefs = sorted({link["href"].split("#")[0] for link in links})
    assert {href.rsplit("/", 1)[-1] for href in hrefs} == nav_pages(), links
    for href in hrefs:
        assert href.endswith(".html"), f"{href}: a folder, which file:// shows as a listing"
        assert local_file(href).is_file(), href
    # follow them as a reader does, from page to page: each lands on a page with its title
    for href in hrefs:
        page.goto(href, wait_until="domcontentloaded")
        assert page.locator("article h1").count() == 1, href
        assert "Index of" not in page.title(), href
    page.goto((site / "index.html").as_uri())
    page.locator("nav.md-nav--primary a.md-nav__link", has_text="Getting started").first.click()
    page.wait_for_load_state()
    assert page.url.endswith("/getting-started.html")
    assert page.locator("article h1").inner_text().strip().rstrip("¶") == "Getting started"
    page.screenshot(path=str(screenshots / "docs-offline-getting-started.png"))
    # nothing fetched from the network, no file missing, no script error (a file that is there
    # but was still loading when the next page was opened, a favicon, does not count)
    failed = [url for url in failed if not (url.startswith("file:") and local_file(url).is_file())]
    assert not failed, failed


def test_search_finds_a_word_offline(site, offline_page, screenshots):
    page, failed = offline_page
    page.goto((site / "index.html").as_uri())
    page.locator("input.md-search__input").click()  # in the header at 1400 px
    page.keyboard.type("watermark")  # keys, as a reader types: search listens to them
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=20_000)
    meta = page.locator(".md-search-result__meta").inner_text()
    assert "matching" in meta.lower(), meta
    page.screenshot(path=str(screenshots / "docs-offline-search.png"))
    first = page.locator(".md-search-result__link").first
    target = first.get_attribute("href")
    first.click()
    page.wait_for_load_state()
    assert ".html" in page.url and local_file(page.url.split("#")[0]).is_file(), (target, page.url)
    assert "watermark" in page.locator("article").inner_text().lower()
    assert not failed, failed
