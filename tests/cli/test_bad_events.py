"""One bad event never stops a run, and every event is accounted for: a folder of good events
mixed with every kind of bad record a new user meets, run once through the real `asaql run`
(in-process, on the shared session), then one assertion per kind; the same records in one
`.jsonl` file, as reference data and as a `check` sample. Events whose values the query cannot
convert (data errors) are accepted events whose rows are set aside: the runs here drop them
(`--on-data-error drop`; by default they stop the run, as ASA's do: test_data_error_stop.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

ACCEPTED, MALFORMED, DROPPED = "accepted", "malformed", "dropped"
DATA_ERROR = "data error"  # an accepted event whose row the query's conversion refused


@dataclass(frozen=True)
class Kind:
    name: str
    line: bytes  # the record as written (a {id} placeholder for its id, {t} for its time)
    outcome: str
    reason: str = ""  # a malformed record's reason (a part of it)
    file: str = "mixed.jsonl"  # where it is written
    prefix: bytes = b""  # bytes before the line (a byte-order mark)
    ending: bytes = b"\n"


def _record(fields: str = "", time: str = '"{t}"') -> bytes:
    return ('{"id": "{id}", "EventTime": ' + time + ', "EventEnqueuedUtcTime": "{t}", '
            '"PartitionId": 0, "v": 1' + fields + "}").encode()


DEEP = b'{"d": ' * 200 + b"1" + b"}" * 200
KINDS = [
    Kind("duplicate_key", b'{"id": "{id}", "k": "k0", "k": "k1"}', MALFORMED, "duplicate key 'k'"),
    Kind("duplicate_key_other_case", _record(', "V": 2'), MALFORMED, "duplicate key 'v'"),
    Kind("nested_200_deep", _record(', "deep": ' + DEEP.decode()), MALFORMED,
         "nested deeper than 64 levels"),
    Kind("nested_64_deep", _record(', "deep": ' + '{"d": ' * 62 + "1" + "}" * 62), ACCEPTED),
    Kind("bom_before_first_record", _record(), ACCEPTED, file="bom.jsonl",
         prefix=b"\xef\xbb\xbf"),
    Kind("invalid_utf8_after_the_object", _record() + b"\xff", MALFORMED,
         "invalid UTF-8 outside a string"),
    Kind("invalid_utf8_between_fields", b'{"id": "{id}", \xfe "v": 1}', MALFORMED,
         "invalid UTF-8 outside a string"),
    Kind("invalid_utf8_inside_a_string", _record(', "s": "a\xffb"'), ACCEPTED),
    Kind("array", b"[1]", MALFORMED, "not a JSON object"),  # an array's element
    Kind("number", b"42", MALFORMED, "not a JSON object"),
    Kind("string", b'"{id}"', MALFORMED, "not a JSON object"),
    Kind("null", b"null", MALFORMED, "not a JSON object"),
    Kind("truncated", b'{"id": "{id}", "v": ', MALFORMED, "malformed JSON"),
    Kind("trailing_comma", b'{"id": "{id}", "v": 1,}', MALFORMED, "malformed JSON"),
    Kind("text_after_the_object", _record() + b" and more", MALFORMED,
         "text after the JSON object"),
    Kind("nul_after_the_object", _record() + b"\x00", MALFORMED, "text after the JSON object"),
    Kind("nul_inside_a_string", _record(', "s": "a\x00b"'), MALFORMED, "control character"),
    Kind("only_nul_bytes", b"\x00\x00\x00", MALFORMED, "not a JSON object"),
    Kind("bad_EventEnqueuedUtcTime",
         b'{"id": "{id}", "EventTime": "{t}", "EventEnqueuedUtcTime": "yesterday"}', MALFORMED,
         "EventEnqueuedUtcTime 'yesterday' is not a datetime"),
    Kind("PartitionId_not_a_number", _record(', "PartitionId": "abc"').replace(
        b'"PartitionId": 0, ', b""), MALFORMED, "PartitionId 'abc' is not a partition number"),
    Kind("PartitionId_fraction", _record().replace(b'"PartitionId": 0', b'"PartitionId": 1.5'),
         MALFORMED, "PartitionId '1.5' is not a partition number"),
    Kind("PartitionId_negative", _record().replace(b'"PartitionId": 0', b'"PartitionId": -1'),
         MALFORMED, "PartitionId '-1' is not a partition number"),
    Kind("PartitionId_huge", _record().replace(b'"PartitionId": 0',
                                               b'"PartitionId": 99999999999999999999999'),
         MALFORMED, "is not a partition number"),
    Kind("TIMESTAMP_BY_not_a_datetime", _record(time='"soon"'), MALFORMED,
         "the TIMESTAMP BY value 'soon' is not a datetime"),
    Kind("TIMESTAMP_BY_missing", b'{"id": "{id}", "EventEnqueuedUtcTime": "{t}", "v": 1}',
         MALFORMED, "the TIMESTAMP BY value is NULL"),
    Kind("type_widened_by_another_record", _record(', "w": "text"'), ACCEPTED),
    Kind("nested_duplicate_key_last_wins", _record(', "n": {"x": 1, "x": 2}'), ACCEPTED),
    Kind("huge_line", _record(', "big": "' + "x" * 300_000 + '"'), ACCEPTED),
    Kind("crlf_line_end", _record(), ACCEPTED, file="crlf.jsonl", ending=b"\r\n"),
    Kind("second_file_with_json_suffix", _record(), ACCEPTED, file="more.json"),
    Kind("early_event_dropped_by_policy", _record(time='"2021-01-01T01:00:00Z"'), DROPPED),
    Kind("cast_fails", _record(', "c": "x1"'), DATA_ERROR, "CAST of 'x1' AS bigint failed"),
    Kind("implicit_conversion_refused", _record().replace(b'"v": 1', b'"v": "abc"'), DATA_ERROR,
         "the value \"abc\" is not a float as arithmetic '+' needs"),
]


@dataclass(frozen=True)
class Placed:
    kind: Kind
    id: str
    file: str
    line: int


def write_mixed_input(folder: Path, good: int = 40) -> list[Placed]:
    """Good events with every kind of bad one between them, in a few files (and an empty file,
    a blank line and a file that is not an input); → where each kind went."""
    folder.mkdir(parents=True, exist_ok=True)
    contents: dict[str, bytearray] = {}
    lines: dict[str, int] = {}
    placed = []
    second = 0

    def add(kind: Kind, ident: str) -> None:
        nonlocal second
        second += 1
        t = f"2021-01-01T00:{second // 60:02d}:{second % 60:02d}Z"
        body = contents.setdefault(kind.file, bytearray(kind.prefix))
        body += kind.line.replace(b"{id}", ident.encode()).replace(b"{t}", t.encode())
        body += kind.ending
        lines[kind.file] = lines.get(kind.file, 0) + 1
        placed.append(Placed(kind, ident, kind.file, lines[kind.file]))

    good_kind = Kind("good", _record(', "w": 1'), ACCEPTED)
    for number, kind in enumerate(KINDS):
        add(good_kind, f"good-{number}")
        add(kind, kind.name)
    for number in range(len(KINDS), good):
        add(good_kind, f"good-{number}")
    for name, body in contents.items():
        (folder / name).write_bytes(bytes(body) + (b"\n" if name == "mixed.jsonl" else b""))
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "notes.txt").write_text("not an input: never read\n")
    return placed


@dataclass(frozen=True)
class Run:
    placed: list[Placed]
    exit_code: int
    stderr: str
    output: list[dict]
    errors: list[dict]
    metrics: list[dict]


def run_over(spark, folder: Path, input_path: Path, placed: list[Placed]) -> Run:
    query = folder.parent / "query.sql"
    query.write_text("SELECT id, v, v + 1 AS w, CAST(c AS bigint) AS n INTO out\n"
                     "FROM input TIMESTAMP BY EventTime")
    out, errors, metrics = (folder.parent / name for name in
                            ("out.jsonl", "errors.jsonl", "metrics.jsonl"))
    result = CliRunner().invoke(cli, [
        "run", str(query), "--input", f"input={input_path}", "--output", f"out={out}",
        "--errors", str(errors), "--metrics", str(metrics), "--on-data-error", "drop"])
    read = (lambda p: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]
            if p.exists() else [])
    return Run(placed, result.exit_code, result.stderr + result.output, read(out),
               read(errors), read(metrics))


@pytest.fixture(scope="module")
def folder_run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_events")
    placed = write_mixed_input(root / "input")
    return run_over(spark, root / "input", root / "input", placed)


def test_the_run_over_a_folder_of_mixed_records_succeeds(folder_run):
    assert folder_run.exit_code == 0, folder_run.stderr


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_each_kind_of_record_has_its_outcome(folder_run, kind):
    place = next(p for p in folder_run.placed if p.kind == kind)
    written = [row["id"] for row in folder_run.output]
    set_aside = [e for e in folder_run.errors
                 if Path(e["file"]).name == place.file and e["line"] == place.line]
    if kind.outcome == ACCEPTED:
        assert any(i is not None and i.startswith(kind.name) for i in written)
        assert set_aside == []
    elif kind.outcome == DROPPED:
        assert kind.name not in written and set_aside == []
    else:
        assert kind.name not in written
        assert len(set_aside) == 1, f"{kind.name} not set aside at {place.file}:{place.line}"
        assert kind.reason in set_aside[0]["reason"]
        assert set_aside[0]["record"]
        assert set_aside[0].get("kind") == (DATA_ERROR if kind.outcome == DATA_ERROR else None)


def test_every_good_event_is_written_once(folder_run):
    good = sorted(p.id for p in folder_run.placed if p.kind.name == "good")
    assert sorted(r["id"] for r in folder_run.output if r["id"].startswith("good-")) == good


def _expected_counts(placed: list[Placed]) -> tuple[int, int, int, int, int]:
    """read, accepted (a data error's event among them), dropped, malformed, data errors"""
    outcome = [p.kind.outcome for p in placed]
    return (len(placed), outcome.count(ACCEPTED) + outcome.count(DATA_ERROR),
            outcome.count(DROPPED), outcome.count(MALFORMED), outcome.count(DATA_ERROR))


def test_read_is_accepted_plus_dropped_plus_malformed_in_the_summary_and_the_metrics(folder_run):
    read, accepted, dropped, malformed, failed = _expected_counts(folder_run.placed)
    assert f"{read} events read = {accepted} accepted + {dropped} dropped + {malformed} " \
        "malformed" in folder_run.stderr
    assert f", {malformed} malformed, {failed} data errors (set aside in" in folder_run.stderr
    assert len(folder_run.errors) == malformed + failed
    totals = {name: sum(line[name] for line in folder_run.metrics)
              for name in ("Read Events", "Accepted Events", "Dropped Events",
                           "Malformed Events", "Runtime Errors")}
    assert totals == {"Read Events": read, "Accepted Events": accepted,
                      "Dropped Events": dropped, "Malformed Events": malformed,
                      "Runtime Errors": failed}


def test_a_single_file_input_accounts_for_every_event_too(spark, tmp_path):
    placed = [p for p in write_mixed_input(tmp_path / "input") if p.file == "mixed.jsonl"]
    run = run_over(spark, tmp_path / "input", tmp_path / "input" / "mixed.jsonl", placed)
    assert run.exit_code == 0, run.stderr
    read, accepted, dropped, malformed, _ = _expected_counts(placed)
    assert f"{read} events read = {accepted} accepted + {dropped} dropped + {malformed} " \
        "malformed" in run.stderr
    assert sorted(e["line"] for e in run.errors) == \
        sorted(p.line for p in placed if p.kind.outcome in (MALFORMED, DATA_ERROR))


def run_reference_join(tmp_path, reference_name: str, reference: bytes, events: str):
    """`SELECT e.id, r.name` of events joined to a reference file written as given bytes."""
    (tmp_path / "events.jsonl").write_text(events)
    (tmp_path / reference_name).write_bytes(reference)
    query = tmp_path / "q.sql"
    query.write_text("SELECT e.id, r.name INTO out FROM input e JOIN Ref r ON e.k = r.k")
    return CliRunner().invoke(cli, [
        "run", str(query), "--input", f"input={tmp_path / 'events.jsonl'}",
        "--reference", f"Ref={tmp_path / reference_name}",
        "--output", f"out={tmp_path / 'out.jsonl'}"])


def test_a_malformed_reference_record_stops_the_run_with_its_file_line_and_reason(spark,
                                                                                  tmp_path):
    result = run_reference_join(
        tmp_path, "ref.jsonl",
        b'\xef\xbb\xbf{"k": "a", "name": "A"}\n{"k": "b", "name": "B", "name": "C"}\n',
        '{"id": 1, "k": "a"}\n')
    assert result.exit_code == 2, result.output
    assert "ref.jsonl:2: duplicate key 'name'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_reference_file_with_a_byte_order_mark_is_read_whole(spark, tmp_path):
    result = run_reference_join(
        tmp_path, "ref.jsonl",
        b'\xef\xbb\xbf{"k": "a", "name": "A"}\r\n{"k": "b", "name": "B"}\r\n',
        '{"id": 1, "k": "a"}\n{"id": 2, "k": "b"}\n')
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["name"]) for r in rows) == [(1, "A"), (2, "B")]


def test_check_reads_a_sample_of_mixed_records_and_skips_the_malformed(tmp_path):
    write_mixed_input(tmp_path / "input")
    query = tmp_path / "q.sql"
    query.write_text("SELECT id, v, w, k, d INTO out FROM input")
    result = CliRunner().invoke(cli, ["check", str(query), "--input",
                                      f"input={tmp_path / 'input'}"])
    assert result.exit_code == 0, result.output  # k and d are only in malformed records
    assert "Traceback" not in result.output
    missing = [line for line in result.output.splitlines() if "warning: no event of" in line]
    assert any("'k'" in line or " k " in line or "k'" in line for line in missing), result.output
    assert not any("'id'" in line or "'v'" in line for line in missing), result.output


def test_a_csv_reference_row_with_an_extra_value_stops_the_run_naming_it(spark, tmp_path):
    result = run_reference_join(tmp_path, "ref.csv", b"\xef\xbb\xbfk,name\r\na,A\r\nb,B,extra\r\n",
                                '{"id": 1, "k": "a"}\n')
    assert result.exit_code == 2, result.output
    assert "Malformed CSV record: b,B,extra" in result.stderr
    assert "Traceback" not in result.stderr and "collectToPython" not in result.stderr


def test_a_reference_file_that_is_a_json_array_gives_its_objects_as_rows(spark, tmp_path):
    table = json.dumps([{"k": "a", "name": "A"}, {"k": "b", "name": "B"}], indent=2)
    result = run_reference_join(tmp_path, "ref.json", table.encode(),
                                '{"id": 1, "k": "a"}\n{"id": 2, "k": "b"}\n')
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["name"]) for r in rows) == [(1, "A"), (2, "B")]
    (tmp_path / "bad").mkdir()
    bad = run_reference_join(tmp_path / "bad", "ref.json", b'[{"k": "a"}, 7]', '{"id": 1}\n')
    assert bad.exit_code == 2 and "ref.json:1[1]: not a JSON object" in bad.stderr
