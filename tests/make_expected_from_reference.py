"""Compute a pass-through case's `expected.jsonl` with the reference policy (no Spark).

    python tests/make_expected_from_reference.py samples/iot_devices            # write expected.jsonl
    python tests/make_expected_from_reference.py --check tests/golden/cases/seed_003_adjust

Only one query shape is understood, the one the policy cases and the iot_devices sample use:

    SELECT col, ..., System.Timestamp() AS alias, ...
    INTO output FROM input TIMESTAMP BY col [OVER col, ...] [WHERE col <op> number]

The seed cases' expected files were transcribed from the ASA documents by hand; `--check` is the
cross-check that the reference agrees with them. Other cases are written with it.
"""

from __future__ import annotations

import argparse
import json
import operator
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import reference_policy as ref

_UNITS_US = {"ms": 1_000, "s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
_OPERATORS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
              "=": operator.eq, "<>": operator.ne, "!=": operator.ne}
_QUERY = re.compile(
    r"SELECT\s+(?P<items>.+?)\s+INTO\s+(?P<output>\w+)\s+FROM\s+(?P<input>\w+)"
    r"\s+TIMESTAMP\s+BY\s+(?P<timestamp_by>\w+)"
    r"(?:\s+OVER\s+(?P<over>\w+(?:\s*,\s*\w+)*))?"
    r"(?:\s+WHERE\s+(?P<column>\w+)\s*(?P<op>>=|<=|<>|!=|=|>|<)\s*(?P<number>-?\d+(?:\.\d+)?))?"
    r"\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_TIMESTAMP_ITEM = re.compile(r"System\.Timestamp\(\)\s+AS\s+(\w+)$", re.IGNORECASE)
_COLUMN_ITEM = re.compile(r"(\w+)(?:\s+AS\s+(\w+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class PassThrough:
    items: tuple[tuple[str, str | None], ...]  # (output name, payload column or None for System.Timestamp)
    output: str
    timestamp_by: str
    over: tuple[str, ...]
    where: tuple[str, str, float] | None

    def keeps(self, payload: dict) -> bool:
        if self.where is None:
            return True
        column, op, number = self.where
        return payload.get(column) is not None and _OPERATORS[op](payload[column], number)

    def row(self, outcome: ref.Outcome) -> dict:
        timestamp = ref.format_asa_datetime(outcome.system_timestamp_us)
        return {name: (timestamp if column is None else outcome.event.payload.get(column))
                for name, column in self.items}


def parse_pass_through(query: str) -> PassThrough:
    text = "\n".join(line.split("--", 1)[0] for line in query.splitlines()).strip()
    match = _QUERY.match(text)
    if not match:
        raise ValueError("not a pass-through query this script understands")
    items = []
    for item in (part.strip() for part in match["items"].split(",")):
        if timestamp := _TIMESTAMP_ITEM.match(item):
            items.append((timestamp[1], None))
        elif column := _COLUMN_ITEM.match(item):
            items.append((column[2] or column[1], column[1]))
        else:
            raise ValueError(f"unsupported select item {item!r}")
    over = tuple(c.strip() for c in match["over"].split(",")) if match["over"] else ()
    where = (match["column"], match["op"], float(match["number"])) if match["column"] else None
    return PassThrough(tuple(items), match["output"], match["timestamp_by"], over, where)


def parse_duration_us(text: str) -> int | None:
    """`15s`, `10m`, `1m30s`, `500ms`, `0`; `none` -> None (the early policy disabled)."""
    text = str(text).strip().lower()
    if text == "none":
        return None
    if text == "0":
        return 0
    parts = re.findall(r"(\d+)(ms|s|m|h|d)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"bad duration {text!r}")
    return sum(int(n) * _UNITS_US[u] for n, u in parts)


def case_settings(case_dir: Path) -> dict:
    toml_path = case_dir / "case.toml"
    settings = tomllib.loads(toml_path.read_text(encoding="utf-8")) if toml_path.exists() else {}
    return {
        "late_us": parse_duration_us(settings.get("late", "5s")),
        "ooo_us": parse_duration_us(settings.get("ooo", "0s")),
        "early_us": parse_duration_us(settings.get("early", "5m")),
        "action": settings.get("action", "adjust"),
    }


def reference_outcomes(case_dir: Path) -> tuple[PassThrough, list[ref.Outcome]]:
    query = parse_pass_through((case_dir / "query.sql").read_text(encoding="utf-8"))
    events = ref.read_events(ref.input_files(case_dir), timestamp_by=query.timestamp_by, over=query.over)
    return query, ref.apply_policy(events, **case_settings(case_dir))


def expected_rows(case_dir: Path) -> list[dict]:
    """The output rows, ordered by System.Timestamp, then arrival order."""
    query, outcomes = reference_outcomes(case_dir)
    kept = [o for o in outcomes if not o.dropped and query.keeps(o.event.payload)]
    kept.sort(key=lambda o: (o.system_timestamp_us, ref.arrival_order(o.event)))
    return [query.row(o) for o in kept]


def counts(outcomes: list[ref.Outcome]) -> dict[str, int]:
    return {
        "input": len(outcomes),
        "early": sum(o.early for o in outcomes),
        "late": sum(o.late for o in outcomes),
        "out_of_order": sum(o.out_of_order for o in outcomes),
        "adjusted": sum(not o.dropped and o.system_timestamp_us != o.event.event_time_us for o in outcomes),
        "dropped": sum(o.dropped for o in outcomes),
    }


def to_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("case_dirs", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="compare with expected.jsonl, write nothing")
    args = parser.parse_args(argv)
    failed = 0
    for case_dir in args.case_dirs:
        query, outcomes = reference_outcomes(case_dir)
        rows = expected_rows(case_dir)
        summary = ", ".join(f"{k} {v}" for k, v in counts(outcomes).items())
        target = case_dir / "expected.jsonl"
        if args.check:
            on_file = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines() if line]
            same = sorted(map(json.dumps, on_file)) == sorted(map(json.dumps, rows))
            failed += not same
            print(f"{'ok  ' if same else 'DIFF'} {case_dir}: {summary}; output {len(rows)}")
        else:
            target.write_text(to_jsonl(rows), encoding="utf-8")
            print(f"wrote {target}: {summary}; output {len(rows)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
