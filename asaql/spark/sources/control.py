"""asaql's control records: files in a folder of the checkpoint, read by the same file source as
the input. The end-of-input record is written before a finite run starts, with a modification
time after every input file's, so that it comes in the last micro-batch (the file source admits
files in modification-time order): there the arrival clock runs out and every window closes.
With --follow, tick records carry the estimated arrival clock of an idle input (ASA journals its
estimate for replay; these files are that journal)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from asaql.runtime import columns as C

CONTROL_FOLDER = "asaql-control"
CONTROL_PREFIX = "asaql-control-"
CONTROL_FIELD = "asaql_control"


def control_folder(checkpoint: str) -> Path:
    folder = Path(checkpoint) / CONTROL_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _next_name(folder: Path, what: str) -> Path:
    number = len(list(folder.glob(f"{CONTROL_PREFIX}*.jsonl"))) + 1
    return folder / f"{CONTROL_PREFIX}{number:06d}-{what}.jsonl"


def _write(path: Path, value: str, mtime: float) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({CONTROL_FIELD: value}) + "\n", encoding="utf-8")
    os.utime(temporary, (mtime, mtime))
    temporary.rename(path)  # the file source never sees a half-written file


def write_end_of_input(folder: Path, inputs: list[Path]) -> Path:
    """The end record, newer than every file of the input and every earlier control record."""
    files = [f for f in inputs if f.is_file()] + list(folder.glob(f"{CONTROL_PREFIX}*.jsonl"))
    newest = max((f.stat().st_mtime for f in files), default=0.0)
    path = _next_name(folder, "end")
    _write(path, C.CONTROL_END, newest + 1.0)
    return path


def write_tick(folder: Path, clock_us: int, mtime: float) -> Path:
    path = _next_name(folder, "tick")
    _write(path, f"{C.CONTROL_TICK}:{clock_us}", mtime)
    return path
