"""Events for a real-world query, synthesized from the fields it reads (tests/asa_corpus.py finds
them): per input two JSON-lines files over three partitions, with late, early and out-of-order
events and a few malformed lines; per reference input a JSON file whose join keys meet the
events'. A field's kind follows its name (a stable hash; names that say time or date, and the
fields TIMESTAMP BY reads, are datetimes), so two runs of one query read the same files."""

from __future__ import annotations

import hashlib
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from asaql.analysis.statements import BoundStatement

BASE = datetime(2021, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
KINDS = ("int", "double", "text", "flag")
TEXTS = ("a", "b", "c", "d")
# seconds from an event's arrival to its own time: mostly on time, some late (beyond 5 s),
# early (beyond 300 s) and a little behind the ones before (out of order)
SKEWS = (0, 0, 0, -1, -2, 1, -8, -30, 400)
MALFORMED = ('{"broken": ', 'not json at all')


def _kind(name: str) -> str:
    lowered = name.lower()
    if any(word in lowered for word in ("time", "date", "stamp")):
        return "datetime"
    return KINDS[hashlib.sha1(lowered.encode()).digest()[0] % len(KINDS)]


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _value(kind: str, chance: random.Random, arrival: datetime):
    if kind == "datetime":
        return _iso(arrival + timedelta(seconds=chance.choice(SKEWS)))
    if kind == "int":
        return chance.randrange(6)
    if kind == "double":
        return chance.choice((0.1, 0.2, 1e16, -1e16, 2.5, chance.randrange(100) / 7))
    if kind == "flag":
        return chance.random() < 0.5
    return chance.choice(TEXTS)


def _record(tree: dict, kinds: dict, chance: random.Random, arrival: datetime) -> dict:
    out = {}
    for key, branch in tree.items():
        if not key:
            continue
        name = branch[""]
        if len(branch) > 1:  # a record: its own fields
            out[name] = _record(branch, kinds, chance, arrival)
        else:
            out[name] = _value(kinds.get(key) or _kind(name), chance, arrival)
    return out


def timestamp_fields(statements) -> set[str]:
    """The lower-case names of the fields a TIMESTAMP BY reads (their values are datetimes)."""
    from asaql.analysis.bound import AliasField, Field
    from asaql.compiler.names import walk as _walk

    parts = [s.timestamp_by for s in statements if isinstance(s, BoundStatement)]
    parts += [getattr(j, "timestamp_by", None) for s in statements
              if isinstance(s, BoundStatement) for j in s.laterals]
    return {str(node.path[-1]).lower() for node in _walk([p for p in parts if p is not None])
            if isinstance(node, (Field, AliasField)) and node.path}


def write_stream(folder: Path, tree: dict, kinds: dict, seed: int, events: int = 60) -> None:
    """Two files of events in arrival order, three partitions, a malformed line in each."""
    chance = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for number in range(events):
        arrival = BASE + timedelta(milliseconds=700 * number + chance.randrange(300))
        record = _record(tree, kinds, chance, arrival)
        record["EventEnqueuedUtcTime"] = _iso(arrival)
        record["PartitionId"] = chance.randrange(3)
        lines.append(json.dumps(record))
    half = len(lines) // 2
    for index, part in enumerate((lines[:half], lines[half:])):
        part = list(part)
        part.insert(chance.randrange(len(part) + 1), MALFORMED[index])
        (folder / f"part-{index}.json").write_text("\n".join(part) + "\n", encoding="utf-8")


def write_reference(path: Path, tree: dict, kinds: dict, seed: int, rows: int = 8) -> None:
    chance = random.Random(seed)
    records = [_record(tree, kinds, chance, BASE) or {"x": "a"} for _ in range(rows)]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
