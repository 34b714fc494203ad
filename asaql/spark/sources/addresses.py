"""Where a record was read, as the errors file and the messages name it: a file as the user
named the input it belongs to (a path given relative stays relative, an absolute one absolute),
or a topic's partition and offset; and the index of one event among a line's several."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote

from asaql.inputs.position import element_of, line_of
from asaql.spark.sources.kafka_source import KAFKA_FILE_PREFIX


@dataclass(frozen=True)
class FileNames:
    """Names the files Spark read (`file:` URIs) as the user gave their inputs: below an input
    given as `data/in` a file is `data/in/part-1.jsonl`, below `/srv/in` it is
    `/srv/in/part-1.jsonl`. A file below no given input (a stage's) is named relative to the
    current folder when it is below it, else absolutely. Made where the run is started: the
    absolute forms are that process's (a Connect server's current folder is another)."""

    roots: tuple[tuple[str, str], ...] = ()  # (absolute path, as given), the longest first

    @classmethod
    def of(cls, given) -> "FileNames":
        """`given`: the inputs' and references' paths as the user typed them (topics and
        other non-paths are left out)."""
        paths = {str(p) for p in given if isinstance(p, str) and p and "://" not in p}
        return cls(tuple(sorted(((os.path.abspath(p), p) for p in paths),
                                key=lambda pair: -len(pair[0]))))

    def __call__(self, uri: str) -> str:
        path = unquote(uri[len("file:"):]) if uri.startswith("file:") else uri
        if path.startswith("//"):  # file:///a → /a
            path = "/" + path.lstrip("/")
        for absolute, given in self.roots:
            if path == absolute:
                return given
            if path.startswith(absolute.rstrip(os.sep) + os.sep):
                return os.path.join(given, path[len(absolute.rstrip(os.sep)) + 1:])
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive (Windows)
            return path
        return path if relative.startswith("..") else relative


def record_address(file: str, position: int, names: FileNames = FileNames()) -> dict:
    """Where a record was read, for the errors file: file and line, or topic, partition and
    offset; and the index of the event in the line's array or the message's records when it
    is one of several (asaql/inputs/position.py)."""
    line, element = line_of(position), element_of(position)
    index = {} if element is None else {"index": element}
    if file.startswith(KAFKA_FILE_PREFIX):
        topic, _, partition = file[len(KAFKA_FILE_PREFIX):].rpartition(":")
        return {"topic": topic, "partition": int(partition), "offset": line, **index}
    return {"file": names(file), "line": line, **index}


def describe_position(file: str, position: int, names: FileNames = FileNames()) -> str:
    """file:line (or kafka:topic:partition:offset), [index] for one event of several."""
    element = element_of(position)
    where = f"{file if file.startswith(KAFKA_FILE_PREFIX) else names(file)}:{line_of(position)}"
    return where if element is None else f"{where}[{element}]"
