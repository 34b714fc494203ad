"""Line and column of an offset in a query text, and lark input that starts mid-text.

`asaql check` parses the statements or WITH steps after an error on their own, as a slice of
the text, so positions are those of the whole text and the text before is not parsed again.
"""

from __future__ import annotations

from bisect import bisect_right

from lark import TextSlice


class LineIndex:
    """The offsets where lines start: an offset's line and column in O(log lines)."""

    def __init__(self, text: str):
        starts, at = [0], text.find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = text.find("\n", at + 1)
        self.text = text
        self.starts = starts

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of `offset`."""
        line = self.line_of(offset)
        return line, offset - self.starts[line - 1] + 1

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based (line, column), clamped to the text."""
        line = min(max(line, 1), len(self.starts))
        return min(len(self.text), self.starts[line - 1] + max(column, 1) - 1)

    def slice(self, start: int, end: int) -> TextSlice:
        """lark input for text[start:end] with the positions of the whole text (lark counts
        the lines before `start` with str.count, at C speed)."""
        return TextSlice(self.text, start, end)
