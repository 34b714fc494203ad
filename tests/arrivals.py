"""A file arriving in a folder a streaming run follows: written beside it, then renamed in, so
Spark's file listing never sees it half written (it would take the empty file as read)."""

from __future__ import annotations

import os
from pathlib import Path


def arrive(path: Path, text: str) -> None:
    staged = path.parent.parent / f".{path.parent.name}.{path.name}.arriving"
    staged.write_text(text)
    os.replace(staged, path)
