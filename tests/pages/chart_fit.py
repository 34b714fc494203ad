"""What the page tests check of a run's page as drawn in Chromium: every chart's title, axes,
tick labels and legend inside its box, the toolbar off the title, the health panel in the
first screen; measured with the elements' bounding boxes, as a screenshot shows them."""

from __future__ import annotations

import time

# each drawn chart: the parts of it outside its box, a title the toolbar covers, an ellipsis
_OUTSIDE = """() => [...document.querySelectorAll('.chart:not(.empty)')].map((div) => {
  const box = div.getBoundingClientRect();
  // a label plotly hides (no box: it would not fit) is not drawn, so not cut either
  const inside = (r) => (r.width === 0 && r.height === 0) || (r.left >= box.left - 1
    && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1);
  const parts = [...div.querySelectorAll('.gtitle, .xtick text, .ytick text, .y2tick text, '
    + '.xtitle, .ytitle, .y2title, .legend .bg, .legend .legendtext')];
  const title = div.querySelector('.gtitle')?.getBoundingClientRect();
  const bar = div.querySelector('.modebar')?.getBoundingClientRect();
  const overlap = (a, b) => a && b && b.width > 0 && a.left < b.right && b.left < a.right
    && a.top < b.bottom && b.top < a.bottom;
  return {id: div.id, drawn: !!div.querySelector('.main-svg'),
          outside: parts.filter((e) => !inside(e.getBoundingClientRect()))
            .map((e) => `${e.getAttribute('class')} '${e.textContent}'`),
          cut: parts.filter((e) => e.textContent.includes('…')).map((e) => e.textContent),
          toolbarOverTitle: !!overlap(title, bar),
          title: div.querySelector('.gtitle')?.textContent || ''};
})"""


def charts_fit(page, seconds: float = 5) -> dict[str, dict]:
    """Chart id → how it was measured; asserts each is drawn and fits. A live page redraws
    every second (plotly lays a chart out twice to fit its margins): measured again for a few
    seconds before a misfit counts."""
    deadline = time.monotonic() + seconds
    while True:
        charts = {c["id"]: c for c in page.evaluate(_OUTSIDE)}
        wrong = [c for c in charts.values() if not c["drawn"] or c["outside"] or c["cut"]
                 or c["toolbarOverTitle"]]
        if not wrong or time.monotonic() > deadline:
            break
        page.wait_for_timeout(250)
    assert not wrong, wrong
    return charts


def in_first_screen(page, selector: str) -> bool:
    """The element is wholly inside the viewport, the page not scrolled."""
    return page.evaluate("""(selector) => {
        const r = document.querySelector(selector).getBoundingClientRect();
        return window.scrollY === 0 && r.height > 0 && r.top >= 0 && r.left >= 0
          && r.bottom <= window.innerHeight && r.right <= window.innerWidth; }""", selector)


def health_in_first_screen(page) -> None:
    """In/out rates, the counts, each partition's watermark and what holds it back, the late
    and malformed counts: visible at 1400×1000 without scrolling."""
    page.evaluate("window.scrollTo(0, 0)")
    for selector in ("#health", "#rates", "#totals", "#watermarks thead", "#late-count",
                     "#malformed-count"):
        assert in_first_screen(page, selector), selector
    if page.locator("#holding-back").inner_text():
        assert in_first_screen(page, "#holding-back")
        assert in_first_screen(page, "#watermarks tr.holding")


def legend(page, chart: str) -> list[str]:
    return page.evaluate(f"[...document.querySelectorAll('#{chart} .legendtext')]"
                         ".map(e => e.textContent)")


def values(page, chart: str) -> list:
    """The numbers a chart draws: up the side over time, along the bottom (horizontal bars) at
    one moment."""
    return page.evaluate(f"""document.getElementById('{chart}').data
        .flatMap(t => t.orientation === 'h' ? t.x : t.y)""")
