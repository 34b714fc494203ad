"""The checkpoint's manifest: which asaql state layout and which query wrote a checkpoint, so
that a restart on a checkpoint of another query, or of an asaql whose state layout changed, is
refused with a clear message instead of silently misreading its state. No pyspark here."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from asaql.errors import ConfigurationError
from asaql.outputs.formats import output_format

MANIFEST_FILE = "asaql-checkpoint.json"
# Bump whenever what asaql keeps in a checkpoint changes meaning: the columns or keys of the
# state of its stateful operators, the folders of stages and controls, the output journals.
LAYOUT_VERSION = 2
# Version 1: what asaql 0.1.0 wrote, before the manifest existed.

_COMMENT_OR_SPACE = re.compile(r"('(?:[^']|'')*')|(\[[^\]]*\])|--[^\n\r]*|/\*.*?\*/|\s+",
                               re.DOTALL)


def query_fingerprint(text: str) -> str:
    """The query text with comments dropped and whitespace collapsed (string literals and
    bracketed names kept as written), hashed: a reformatted query keeps its checkpoint."""
    def keep(match: re.Match) -> str:
        return match.group(1) or match.group(2) or " "

    normalized = _COMMENT_OR_SPACE.sub(keep, text.lstrip("\ufeff")).strip()
    normalized = re.sub(r" +", " ", normalized)
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:16]


def describe_run(query_text: str, policy, inputs: dict[str, str],
                 outputs: dict[str, str | None], output_formats: dict[str, str] | None = None
                 ) -> dict:
    """What changes the meaning of a checkpoint's state and output journals. A folder output's
    part-file format (`--output-format`, JSON lines unless given) is part of it: a restart in
    another format would leave one folder of two formats."""
    formats = output_formats or {}
    return {
        "layout": LAYOUT_VERSION,
        "query": query_fingerprint(query_text),
        "policy": policy.describe(),
        "inputs": sorted(inputs),
        "outputs": {alias: (None if path is None else os.path.abspath(path)
                            if isinstance(path, str) else str(path))
                    for alias, path in sorted(outputs.items())},
        "outputFormats": {alias: formats.get(alias, "json") for alias, path in
                          sorted(outputs.items()) if isinstance(path, str)
                          and not output_format(path)},
    }


def verify_checkpoint(folder: str, expected: dict) -> None:
    """Refuses (ConfigurationError) a checkpoint that another query or layout wrote; an absent
    or empty folder is a fresh checkpoint."""
    path = Path(folder)
    if not path.is_dir() or not any(path.iterdir()):
        return
    advice = "use a new --checkpoint or delete it"
    manifest = path / MANIFEST_FILE
    if not manifest.is_file():
        if any(path.glob("source-*")) or (path / "asaql-settings.json").exists():
            raise ConfigurationError(f"checkpoint {folder} was written by an older asaql "
                                     "(no manifest), whose state this version cannot read "
                                     f"safely: {advice}")
        raise ConfigurationError(f"checkpoint {folder} is not an empty folder nor an asaql "
                                 f"checkpoint: {advice}")
    try:
        found = json.loads(manifest.read_text(encoding="utf-8"))
        layout = int(found["layout"])
    except (ValueError, KeyError, TypeError, OSError):
        raise ConfigurationError(f"checkpoint {folder}: its manifest {MANIFEST_FILE} is "
                                 f"unreadable: {advice}") from None
    if layout != LAYOUT_VERSION:
        which = "an older" if layout < LAYOUT_VERSION else "a newer"
        raise ConfigurationError(f"checkpoint {folder} was written by {which} asaql (state "
                                 f"layout {layout}; this asaql reads layout {LAYOUT_VERSION}): "
                                 f"{advice}")
    # a manifest written before the output formats were part of it is not compared on them
    keys = ("query", "policy", "inputs", "outputs") + (
        ("outputFormats",) if "outputFormats" in found else ())
    differences = [_difference(key, found.get(key), expected[key])
                   for key in keys if found.get(key) != expected[key]]
    if differences:
        raise ConfigurationError(f"checkpoint {folder} was written by a different query "
                                 f"({'; '.join(differences)}): {advice}")


def write_manifest(folder: str, expected: dict) -> None:
    """On the first start (written aside, then renamed: a kill leaves it whole or absent)."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    if (path / MANIFEST_FILE).exists():
        return
    temporary = path / f".{MANIFEST_FILE}.tmp"
    temporary.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, path / MANIFEST_FILE)


def _difference(key: str, found, expected) -> str:
    if key == "query":
        return "its query text differs"
    if key == "policy":
        return f"its policy was {found}, now {expected}"
    if key == "inputs":
        return f"its inputs were {', '.join(found or []) or 'none'}, now {', '.join(expected)}"
    was = found or {}
    changed = sorted(a for a in set(was) | set(expected) if was.get(a) != expected.get(a))
    if key == "outputFormats":
        return "its output formats differ (" + ", ".join(
            f"{a} was {was.get(a) or 'not a folder'}, now {expected.get(a) or 'not a folder'}"
            for a in changed) + ")"
    return f"its outputs differ ({', '.join(changed)})"
