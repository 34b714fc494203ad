"""Small modules with one job each: no module of asaql/ grows past the brief's 450 lines."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "asaql"
MOST_LINES = 450


def test_no_module_is_over_the_line_limit():
    sizes = {str(path.relative_to(PACKAGE.parent)): len(path.read_text().splitlines())
             for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 100  # the walk found the package
    over = {name: lines for name, lines in sizes.items() if lines > MOST_LINES}
    assert not over, f"modules over {MOST_LINES} lines (split them by job): {over}"
