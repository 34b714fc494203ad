"""Every path a run writes (outputs, --errors, --metrics, --checkpoint) checked before Spark
starts, so that a path that cannot be written is one clear line (exit 2), not a failure deep in
a micro-batch. No pyspark here."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from asaql.errors import ConfigurationError
from asaql.inputs.files import INPUT_SUFFIXES
from asaql.outputs.formats import output_format

# Kernel and device file systems: nothing a run writes belongs there (a file may look writable
# to root and still fail, or write to a device).
SPECIAL_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


@dataclass(frozen=True)
class Destination:
    what: str  # how the message names it: "output 'trips'", "--errors"
    path: str
    folder: bool  # a folder (of part files, or the checkpoint) rather than one file


def output_destinations(outputs: dict[str, str | None], errors_path: str | None,
                        metrics_path: str | None, checkpoint: str | None) -> list[Destination]:
    """What a run writes: `.jsonl`, `.csv`, `.json` and `.parquet` outputs are files, any other
    output path a folder."""
    found = [Destination(f"output '{alias}'", path, output_format(path) is None)
             for alias, path in outputs.items() if path is not None]
    if errors_path:
        found.append(Destination("--errors", errors_path, False))
    if metrics_path:
        found.append(Destination("--metrics", metrics_path, False))
    if checkpoint:
        found.append(Destination("--checkpoint", checkpoint, True))
    return found


FOLDER_FORMATS = ("json", "csv", "parquet")  # a folder output's part files (--output-format)


def check_output_formats(formats: dict[str, str], outputs: dict) -> None:
    """--output-format ALIAS=json|csv|parquet names a folder output (a file's format is its
    extension; a topic's messages are JSON)."""
    for alias, fmt in formats.items():
        if fmt not in FOLDER_FORMATS:
            raise ConfigurationError(f"--output-format {alias}={fmt}: a folder's format is "
                                     f"{', '.join(FOLDER_FORMATS)}")
        target = outputs.get(alias)
        if not isinstance(target, str) or output_format(target) is not None:
            raise ConfigurationError(f"--output-format {alias}: output '{alias}' is not a "
                                     "folder (a file's format follows its extension: .jsonl, "
                                     ".csv, .json, .parquet)")


def check_path_patterns(patterns: dict, outputs: dict) -> None:
    """A path pattern lays out a folder output's part files in subfolders."""
    for alias in patterns:
        target = outputs.get(alias)
        if not isinstance(target, str) or output_format(target) is not None:
            raise ConfigurationError(f"--output-path-pattern {alias}: output '{alias}' is not a "
                                     "folder: a path pattern lays out a folder's part files")


def check_destinations(destinations: list[Destination], inputs: dict[str, str]) -> None:
    """Raises ConfigurationError for the first destination that cannot be written, or that two
    destinations share, or that a run would read back as input."""
    for destination in destinations:
        _check_writable(destination)
    seen: dict[Path, Destination] = {}
    for destination in destinations:
        key = _absolute(destination.path)
        if key in seen:
            raise ConfigurationError(f"{seen[key].what} and {destination.what} are both "
                                     f"written to {destination.path}: give each its own path")
        seen[key] = destination
    for destination in destinations:
        target = _absolute(destination.path)
        for alias, path in inputs.items():
            source = _absolute(path)
            # a file written into an input folder would be read back as input
            read_back = source.is_dir() and target.parent == source \
                and target.suffix in INPUT_SUFFIXES
            if target == source or read_back:
                raise ConfigurationError(f"{destination.what} ({destination.path}) would be "
                                         f"read as input '{alias}' ({path}): a run must not "
                                         "write where it reads")


def _check_writable(destination: Destination) -> None:
    what, path = destination.what, destination.path
    kind = "folder" if destination.folder else "file"
    real = Path(os.path.realpath(path))
    for special in SPECIAL_FOLDERS:
        if real == special or special in real.parents:
            raise ConfigurationError(f"{what}: {path} is in {special}, a system folder; "
                                     "choose a path in an ordinary folder")
    target = Path(path)
    if target.exists():
        if destination.folder and not target.is_dir():
            raise ConfigurationError(f"{what}: {path} is a file, but a {kind} is needed here"
                                     + _output_hint(destination))
        if not destination.folder and target.is_dir():
            raise ConfigurationError(f"{what}: {path} is a folder, but a {kind} is needed here"
                                     + _output_hint(destination))
        if not destination.folder and not target.is_file():
            raise ConfigurationError(f"{what}: {path} is not a regular file")
        access = os.W_OK | (os.X_OK if destination.folder else 0)
        if not os.access(target, access):
            raise ConfigurationError(f"{what}: {path} is not writable")
        return
    ancestor = _nearest_existing(target)
    if not ancestor.is_dir():
        raise ConfigurationError(f"{what}: cannot create {path}: {ancestor} is a file, "
                                 "not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ConfigurationError(f"{what}: cannot create {path}: the folder {ancestor} "
                                 "is not writable")


def _output_hint(destination: Destination) -> str:
    if not destination.what.startswith("output"):
        return ""
    return (" (a PATH ending in .jsonl is one JSON-lines file, any other PATH a folder of "
            "part files)")


def _nearest_existing(path: Path) -> Path:
    current = path.absolute()
    while not current.exists() and current != current.parent:
        # a dangling symbolic link exists as a name: report it rather than climb past it
        if current.is_symlink():
            return current
        current = current.parent
    return current


def _absolute(path: str) -> Path:
    return Path(os.path.realpath(path))
