"""One JSON-lines record read in plain Python, by the rules the Spark reader applies
(asaql/spark/sources/records.py): for `asaql check`'s samples and the field order of an input. No
pyspark here, so `check` stays fast."""

from __future__ import annotations

import json

# Deeper records are malformed: Json.NET, which ASA's JSON deserializer is built on, refuses
# documents nested deeper than 64 levels by default, and nothing real comes near it.
MAX_DEPTH = 64


class _Outermost:
    """An object_pairs_hook: json calls it innermost object first, the outermost last, whose
    keys are kept to be checked (the top level only, like the Spark reader's check)."""

    def __init__(self):
        self.keys: list[str] = []

    def __call__(self, pairs: list) -> dict:
        self.keys = [key for key, _ in pairs]
        return dict(pairs)


def parse_record(line: str) -> dict | None:
    """The record on a line, or None when the Spark reader would set it aside as malformed (or
    the line is blank). A byte-order mark before it is ignored."""
    text = line.lstrip("\ufeff").strip()
    if not text.startswith("{"):
        return None
    outermost = _Outermost()
    try:
        record = json.loads(text, object_pairs_hook=outermost)
    except (ValueError, RecursionError):  # RecursionError: nested beyond Python's own limit
        return None
    lowered = {key.lower() for key in outermost.keys}
    if not isinstance(record, dict) or len(lowered) != len(outermost.keys) \
            or _depth(record) > MAX_DEPTH:
        return None
    return record


def json_file_records(path, limit: int):
    """Up to `limit` well-formed records of a JSON file, as the Spark reader finds them: one
    per line, an array's objects one by one, and a whole file that is one (pretty-printed)
    array (ASA's "array" JSON format)."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        head = handle.read(4096)
        if head.lstrip().startswith("["):
            head += handle.read(_WHOLE_ARRAY_BYTES)
        if head.lstrip().startswith("[") and len(head) <= _WHOLE_ARRAY_BYTES:
            try:
                whole = json.loads(head)
            except (ValueError, RecursionError):
                whole = None
            if isinstance(whole, list):  # else JSON lines of arrays, or malformed
                yield from _objects_of(whole, limit)
                return
        handle.seek(0)
        count = 0
        for line in handle:
            found = [parse_record(line)] if not line.lstrip("\ufeff").lstrip().startswith("[") \
                else list(_array_line(line))
            for record in found:
                if record is not None:
                    count += 1
                    if count > limit:
                        return
                    yield record


_WHOLE_ARRAY_BYTES = 64 << 20  # a bigger file that is one array: its lines are sampled


def _array_line(line: str):
    try:
        elements = json.loads(line.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return
    if isinstance(elements, list):
        yield from _objects_of(elements, len(elements))


def _objects_of(elements: list, limit: int):
    for element in elements[:limit]:
        if isinstance(element, dict):
            yield parse_record(json.dumps(element))


def _depth(value, level: int = 1) -> int:
    stack = [(value, level)]
    deepest = 0
    while stack:
        item, at = stack.pop()
        deepest = max(deepest, at)
        if deepest > MAX_DEPTH:
            return deepest
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) \
            else ()
        stack.extend((child, at + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
