"""A streaming query's file sources resume where its offset log says, one file per micro-batch.

Spark's file source logs the files each of its offsets admits (`sources/<n>/<offset>`) before
the query's offset log (`offsets/<batch>`) names that offset; it restores what it has seen from
its own log alone. A kill between the two writes leaves an entry no micro-batch planned: on
restart the source lists the next file as a further offset and the next micro-batch spans both,
two files with --max-files-per-trigger 1 — their events ordered together by arrival time and
windows closed a micro-batch early, unlike the uninterrupted run. So before a query starts on
its checkpoint, entries beyond the planned offset leave its sources' logs: their files are
admitted again, as they would have been."""

from __future__ import annotations

import json
import os
from pathlib import Path


def has_committed(checkpoint: str | Path, of_queries: bool = False) -> bool:
    """Whether the streaming query checkpointed at `checkpoint` has committed a micro-batch;
    `of_queries`: whether any query checkpointed in its folders has (a run's checkpoint holds
    one query per source group)."""
    return any(Path(checkpoint).glob("*/commits/*" if of_queries else "commits/*"))


def forget_unplanned_files(query: str | Path) -> list[Path]:
    """Takes the entries no micro-batch planned out of the file sources' logs of the streaming
    query checkpointed at `query`; → the log files removed or rewritten."""
    folder = Path(query)
    planned = _planned_offsets(folder / "offsets")
    changed = []
    for log in sorted((folder / "sources").glob("*")) if (folder / "sources").is_dir() else []:
        if not log.name.isdigit() or not _lists_files(log):
            continue
        offset = planned.get(int(log.name)) if planned is not None else -1
        if offset is None:  # not a file source's offset (a topic's): its own business
            continue
        changed += _forget_after(log, offset)
    return changed


def micro_batch_files(query: str | Path, batch_id: int) -> list[str] | None:
    """The files micro-batch `batch_id` of the query checkpointed at `query` reads, from its
    file sources' logs (the entries of the offsets after the micro-batch before it, up to its
    own); None when a source is not a file source (a topic) or a log cannot be read."""
    entries = micro_batch_entries(query, batch_id)
    return None if entries is None else [path for path, _ in entries]


def micro_batch_entries(query: str | Path, batch_id: int) -> list[tuple[str, int]] | None:
    """As micro_batch_files, each file with the modification time (ms) the source listed."""
    folder = Path(query)
    try:
        now = _source_offsets(folder / "offsets" / str(batch_id))
        before = _source_offsets(folder / "offsets" / str(batch_id - 1)) \
            if batch_id > 0 else {}
        files = []
        for number, offset in now.items():
            if offset is None:
                return None
            first = (before.get(number) if before.get(number) is not None else -1) + 1
            files += _entries(folder / "sources" / str(number), first, offset)
        return files
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _source_offsets(batch: Path) -> dict[int, int | None]:
    lines = batch.read_text(encoding="utf-8").splitlines()[2:]  # version, metadata, sources
    return {number: _log_offset(line) for number, line in enumerate(lines)}


def _entries(log: Path, first: int, last: int) -> list[tuple[str, int]]:
    """The paths a file source's log admits at offsets `first` to `last` (delta files, or a
    compaction file holding them), with their modification times."""
    found: dict[str, int] = {}
    numbered = [(int(entry.name.removesuffix(".compact")), entry) for entry in log.iterdir()
                if entry.name.removesuffix(".compact").isdigit()]
    for number, entry in sorted(numbered):
        if number < first:
            continue
        for line in entry.read_text(encoding="utf-8").splitlines()[1:]:
            if line.strip():
                value = json.loads(line)
                if first <= value["batchId"] <= last:
                    found[value["path"]] = value.get("timestamp", 0)
    return list(found.items())


def _lists_files(log: Path) -> bool:
    """Whether `log` is a file source's: entries of files (a topic's source keeps others)."""
    for entry in log.iterdir():
        lines = entry.read_text(encoding="utf-8").splitlines()[1:2] \
            if entry.name.removesuffix(".compact").isdigit() else []
        if lines:  # an entry's first record
            try:
                return {"path", "batchId"} <= json.loads(lines[0]).keys()
            except (ValueError, AttributeError):
                return False
    return False


def _planned_offsets(offsets: Path) -> dict[int, int | None] | None:
    """Source number → the file source offset the latest micro-batch planned (None when the
    source's offset is not a file source's); None when no micro-batch was planned yet."""
    batches = [p for p in offsets.iterdir() if p.name.isdigit()] if offsets.is_dir() else []
    if not batches:
        return None
    latest = max(batches, key=lambda p: int(p.name))
    return _source_offsets(latest)


def _log_offset(line: str) -> int | None:
    if line.strip() == "-":  # the source had no offset yet
        return -1
    try:
        value = json.loads(line)
    except ValueError:
        return None
    offset = value.get("logOffset") if isinstance(value, dict) and len(value) == 1 else None
    return offset if isinstance(offset, int) else None


def _forget_after(log: Path, offset: int) -> list[Path]:
    """Removes the entries after `offset` from a file source's log: a delta file goes; a
    compaction file (`<n>.compact`, every earlier entry too, whose delta files Spark may have
    deleted) keeps its entries up to `offset`."""
    changed = []
    for entry in sorted(log.iterdir()):
        number = entry.name.removesuffix(".compact")
        if not number.isdigit() or int(number) <= offset:
            continue
        if entry.name.endswith(".compact"):
            _keep_up_to(entry, offset)
        else:
            entry.unlink()
        _checksum(entry).unlink(missing_ok=True)  # Hadoop would reject the changed file
        changed.append(entry)
    return changed


def _keep_up_to(compact: Path, offset: int) -> None:
    version, *entries = compact.read_text(encoding="utf-8").splitlines()
    kept = [line for line in entries if line.strip() and json.loads(line)["batchId"] <= offset]
    temporary = compact.with_name(f".{compact.name}.asaql.tmp")
    temporary.write_text("\n".join([version, *kept]), encoding="utf-8")
    os.replace(temporary, compact)


def _checksum(entry: Path) -> Path:
    return entry.with_name(f".{entry.name}.crc")
