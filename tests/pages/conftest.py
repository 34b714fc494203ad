"""A real headless Chromium for the page tests (Debian's `chromium`, installed by .ci/run),
driven by Playwright; screenshots go to a temporary folder kept as the run's artifacts."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("ASAQL_CHROMIUM") or shutil.which("chromium") \
    or shutil.which("chromium-browser") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """One browser per test module, stopped after it (a second to start): Playwright's sync
    API keeps an asyncio loop running in the main thread while it lives, which other tests
    should not inherit."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's chromium package "
                    "(.ci/run does) or set ASAQL_CHROMIUM")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM,
                                              args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture
def offline_page(browser):
    """A page with no network: a self-contained file must not need one."""
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    failed = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("pageerror", lambda error: failed.append(f"script error: {error}"))
    yield page, failed
    context.close()


@pytest.fixture(scope="session")
def screenshots():
    """Where the tests' screenshots go (CI keeps this folder as an artifact)."""
    folder = Path(os.environ.get("ASAQL_SCREENSHOTS")
                  or tempfile.mkdtemp(prefix="asaql-screenshots-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
