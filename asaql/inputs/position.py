"""Where a record sits in its input, as one sortable number (the LINE column).

A line of a file or a message of a topic can hold several events: a JSON array (one event per
element), a CSV or Avro message (one per row). Each event keeps a stable address and tiebreak:
the line (or offset) in the high bits, the element's index + 1 in the low ELEMENT_BITS (0 for a
record that is the whole line), so events sort by line, then by element, and a replayed
micro-batch gives every event the same number.
"""

from __future__ import annotations

ELEMENT_BITS = 20
MAX_ELEMENTS = (1 << ELEMENT_BITS) - 1  # elements of one line or message: more are set aside
_LOW = (1 << ELEMENT_BITS) - 1


def position(line: int, element: int | None = None) -> int:
    return (line << ELEMENT_BITS) | (0 if element is None else element + 1)


def line_of(position_: int) -> int:
    """The line of a file (1-based) or the offset of a message."""
    return position_ >> ELEMENT_BITS


def element_of(position_: int) -> int | None:
    """The index of the event in its line's array or message (0-based); None for a whole line."""
    low = position_ & _LOW
    return None if low == 0 else low - 1
