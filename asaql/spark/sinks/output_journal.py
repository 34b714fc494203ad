"""Exactly-once appends to a file (a `.jsonl` output, the errors file) across kills.

Spark commits a micro-batch after its foreachBatch function returns, so a run killed between
the two replays that micro-batch on restart: an append made by the killed attempt would be made
twice. Each append is therefore journaled in the checkpoint (streaming query, batch id, byte
range), after the bytes are written; at restart the appends of micro-batches Spark did not
commit — and any bytes past the last journaled append — are cut from the file, keeping the
committed appends other streaming queries made after them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable

from asaql.spark.sinks.locks import PortableLock

# committed(query index) → the last batch id Spark committed for it, -1 when none
Committed = Callable[[int], int]
_COPY_BLOCK = 4 << 20


def last_committed_batch(checkpoint: str) -> Committed:
    """Reads Spark's commit log of streaming query `source-{index}` of an asaql checkpoint."""
    def committed(index: int) -> int:
        folder = Path(checkpoint) / f"source-{index}" / "commits"
        ids = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] \
            if folder.is_dir() else []
        return max(ids, default=-1)

    return committed


class JournaledFile:
    """A file appended to once per (streaming query, micro-batch), exactly once."""

    def __init__(self, path: str, journal: str, fresh: bool, committed: Committed,
                 create: bool = True):
        self.path = Path(path)
        self.journal = Path(journal)
        self.lock = PortableLock()
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        if fresh:
            self.journal.write_text("")
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text("")
            self.truncate_first = not create  # created at the first append, then appended to
        else:
            self.truncate_first = False
            self._recover(committed)

    def append(self, text: str, query: int, batch_id: int) -> None:
        data = text.encode("utf-8")
        self._append(lambda handle: handle.write(data), query, batch_id)

    def append_files(self, parts: list[Path], query: int, batch_id: int,
                     head: bytes = b"") -> None:
        """`head`, then the bytes of `parts` (files Spark's executors wrote), in order, as one
        append: copied in large blocks, never decoded."""
        def copy(handle) -> None:
            handle.write(head)
            for part in parts:
                with open(part, "rb") as source:
                    shutil.copyfileobj(source, handle, _COPY_BLOCK)

        self._append(copy, query, batch_id)

    def append_written(self, write: Callable[[str], object], query: int, batch_id: int) -> None:
        """As `append`, with the bytes appended to the file's path by `write(path)`, another
        writer than this handle (the driver's JVM merging part files), as one append."""
        def written(handle) -> None:
            handle.flush()
            write(str(self.path))

        self._append(written, query, batch_id)

    def _append(self, write, query: int, batch_id: int) -> None:
        with self.lock:
            if self.truncate_first:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_bytes(b"")
                self.truncate_first = False
            with open(self.path, "ab") as handle:
                start = handle.tell()
                write(handle)
                handle.flush()
                end = os.fstat(handle.fileno()).st_size
            entry = {"query": query, "batch": batch_id, "start": start, "end": end}
            with open(self.journal, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")

    def _recover(self, committed: Committed) -> None:
        entries = _read_entries(self.journal)
        if not self.path.exists():  # removed by hand: start it again
            self.journal.write_text("")
            self.truncate_first = True
            return
        size = self.path.stat().st_size
        known_end = entries[-1]["end"] if entries else 0
        last_batch = {query: committed(query) for query in {e["query"] for e in entries}}
        stale = [e for e in entries if e["batch"] > last_batch[e["query"]]]
        if not stale and size <= known_end:
            return
        cut = min((e["start"] for e in stale), default=min(known_end, size))
        kept = [e for e in entries if e["start"] >= cut and e not in stale]
        with open(self.path, "rb") as handle:
            handle.seek(cut)
            tail = handle.read()
        rewritten, position = [], cut
        for entry in kept:  # committed appends another streaming query made after the cut
            length = entry["end"] - entry["start"]
            rewritten.append((tail[entry["start"] - cut:entry["end"] - cut],
                              {**entry, "start": position, "end": position + length}))
            position += length
        with open(self.path, "r+b") as handle:
            handle.truncate(cut)
            handle.seek(cut)
            for data, _ in rewritten:
                handle.write(data)
        before = [e for e in entries if e["start"] < cut]
        temporary = self.journal.with_name(self.journal.name + ".tmp")
        temporary.write_text("".join(json.dumps(e) + "\n"
                                     for e in before + [entry for _, entry in rewritten]))
        os.replace(temporary, self.journal)


def _read_entries(journal: Path) -> list[dict]:
    """The journal's entries; a last line cut short by a kill is no entry."""
    if not journal.exists():
        return []
    entries = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            break
    return entries
