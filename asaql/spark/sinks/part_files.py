"""A folder output's part files: Spark writes a micro-batch's rows to a staging folder, then
each part is renamed into the output folder under a name of its own (the micro-batch, query,
statement and number), so a replayed micro-batch replaces what an interrupted attempt
published and a reader never sees half a file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote

from asaql.spark.sinks.folder_formats import has_rows

PATH_COLUMN = "asaql_path"  # an output row's subfolder (its path pattern)
STAGING_FOLDER = "_asaql_staging"  # Spark's readers skip names starting with _ or .


def publish_part_files(staging: Path, folder: Path, prefix: str, suffix: str = ".txt",
                       keep: bool = True) -> None:
    """Moves a micro-batch's non-empty part files from its staging folder into the output
    folder under names of its own; each file appears whole (a rename, which replaces the part
    of the same name an interrupted attempt published). `keep=False`: none (no rows)."""
    parts = sorted(p for p in staging.glob("part-*") if has_rows(p)) if keep else []
    for number, part in enumerate(parts):
        os.replace(part, folder / f"{prefix}{number:05d}{suffix}")
    # An interrupted attempt published parts 0, 1, … in order: drop those beyond this one's
    # (found by name, not by listing a folder that grows with every micro-batch).
    number = len(parts)
    while (old := folder / f"{prefix}{number:05d}{suffix}").exists():
        old.unlink()
        number += 1
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.parent.rmdir()  # unless another statement's staging folder is in it
    except OSError:
        pass


def publish_by_path(staging: Path, folder: Path, prefix: str, suffix: str, keep: bool) -> None:
    """publish_part_files for an output with a path pattern: Spark wrote one staging folder per
    path (`PATH_COLUMN=<escaped path>`); each one's parts go to that subfolder."""
    for written in sorted(staging.glob(f"{PATH_COLUMN}=*")) if keep else []:
        target = folder / unquote(written.name.split("=", 1)[1])
        target.mkdir(parents=True, exist_ok=True)
        publish_part_files(written, target, prefix, suffix)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.parent.rmdir()
    except OSError:
        pass


def clear_part_files(folder: str) -> None:
    """A fresh run rewrites a folder output: the part files of an earlier run go (in the
    subfolders of a path pattern too)."""
    path = Path(folder)
    if not path.is_dir():
        return
    for old in (*path.rglob("part-*"), *path.rglob(".part-*.crc"), path / "_SUCCESS"):
        if old.is_file():
            old.unlink()
    shutil.rmtree(path / STAGING_FOLDER, ignore_errors=True)
