"""The client's side of a run through Spark Connect: a foreachBatch function runs on the server
(BatchWriter.for_server) and appends one JSON line per micro-batch to a report file of the
checkpoint: its counters, the rows it wrote, and its stdout rows. The client reads the new
lines while it waits for the queries, prints the rows and adds the counts, as the classic
driver does in the function itself. The checkpoint must be a folder both see."""

from __future__ import annotations

import json
import os
from typing import TextIO


class ReportReader:
    def __init__(self, path: str, writer, stdout: TextIO):
        self.path, self.writer, self.stdout = path, writer, stdout
        self.offset = 0
        self.applied: set[int] = set()  # batch ids: a micro-batch the server retried counts once
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()  # this run's reports only

    def pump(self) -> None:
        """Apply the complete lines appended since the last call."""
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        complete = data[:data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.decode("utf-8").splitlines():
            record = json.loads(line)
            if record["batch"] in self.applied:
                continue
            self.applied.add(record["batch"])
            if record["stdout"]:
                self.stdout.write(record["stdout"])
                self.stdout.flush()
            self.writer.apply(record["batch"], record["seen"], record["written"],
                              record["failed"])
