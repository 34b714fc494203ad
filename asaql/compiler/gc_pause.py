"""Garbage collection paused while a query is compiled or checked.

Parsing and analysing a query makes millions of small objects that all live until the end
(the parse tree, the AST, the bound statements, the plan). Python's collector, counting
allocations, walks them again and again: on the dense 1 MB query of benchmarks/check_speed.py
`check` took 11.3 s of CPU with collection on, 7.1 s with the youngest generation's threshold
raised to 100,000, and 5.9 s with collection paused. Those objects hold no reference cycles
worth collecting while the work runs (the clean 1 MB query leaves 5 cyclic objects; the broken
one ~510,000, from the parser's error recovery, freed by the first collection after the pause),
and the peak memory is the same with collection on or paused (212 MB and 93 MB). So collection
is paused for the duration, and comes back as it was: the next collection takes what cyclic
garbage the work left.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No automatic collection inside the block; nested blocks and a caller that had already
    disabled collection keep theirs (collection is process-wide: other threads pause too)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
