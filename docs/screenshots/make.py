"""The README's pictures of a job, made as a user makes them: `asaql explain --format html` of
the toll app, `asaql run --ui` of the IoT sample while it runs, and its `--report` after
Ctrl-C; each opened in headless Chromium (Debian's `chromium`) and saved as a small PNG here.

    python docs/screenshots/make.py
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SAMPLES = ROOT / "samples"
CHROMIUM = os.environ.get("ASAQL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
VIEW = {"width": 1180, "height": 760}


def asaql(*arguments: str, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "asaql.cli", *arguments],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)


def shoot(page, name: str) -> None:
    path = HERE / f"{name}.png"
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, **VIEW})
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="asaql-screenshots-"))
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport=VIEW)
            # 1. the job diagram
            explain = asaql("explain", str(SAMPLES / "toll_app" / "query.sql"), "--reference",
                            f"Registration={SAMPLES / 'toll_app/reference/Registration.csv'}",
                            "--format", "html")
            (work / "job.html").write_text(explain.communicate()[0])
            page.goto((work / "job.html").as_uri())
            page.click('g.node[aria-label="WITH step Trips"]')
            shoot(page, "explain")
            # 2. the live page, while the run follows its input
            inbox = work / "inbox"
            inbox.mkdir()
            lines = (SAMPLES / "iot_devices" / "input.jsonl").read_text().splitlines()
            for number in range(8):  # eight files, one per micro-batch: the charts have a history
                part = inbox / f"part-{number}.jsonl"
                chunk = lines[number * 38:(number + 1) * 38]
                part.write_text("".join(line + "\n" for line in chunk))
                # Spark's file source admits files in modification-time order (milliseconds)
                os.utime(part, (1_700_000_000 + number, 1_700_000_000 + number))
            run = asaql("run", str(SAMPLES / "iot_devices" / "query.sql"), "--input", str(inbox),
                        "--output", f"alerts={work / 'alerts.jsonl'}", "--late", "5s", "--ooo",
                        "2s", "--follow", "--max-files-per-trigger", "1", "--ui", "127.0.0.1:0",
                        "--report",
                        str(work / "report.html"), "--errors", str(work / "errors.jsonl"),
                        cwd=work)
            url = None
            for line in run.stderr:
                found = re.search(r"live page at (\S+)", line)
                if found:
                    url = found.group(1)
                    break
            page.goto(url)
            page.wait_for_function("""document.querySelector(
                '#totals tr[data-metric="Read Events"] td.value')?.textContent === '304'""",
                                   timeout=180_000)
            page.evaluate("window.scrollTo(0, 0)")  # the job's health first, as a user sees it
            shoot(page, "live")
            # 3. the report, written when Ctrl-C ends the run
            run.send_signal(signal.SIGINT)
            run.communicate(timeout=120)
            page.goto((work / "report.html").as_uri())
            page.wait_for_function("Number(document.body.dataset.updates) >= 1")
            page.evaluate("document.getElementById('metrics').scrollIntoView()")
            page.screenshot(path=str(HERE / "report.png"), clip={
                "x": 0, "y": page.evaluate("document.getElementById('metrics').offsetTop"),
                **VIEW}, full_page=True)
            print(f"docs/screenshots/report.png: {(HERE / 'report.png').stat().st_size // 1024} KB")
            browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
