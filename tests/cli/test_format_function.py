"""FORMAT through the real `asaql run` on the shared session: the rounding and notation cases
where Java's formatting differs from .NET's (which asaql follows), and the error for a format
that does not fit the value's type, known only when the query is planned."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from asaql.cli import cli


def run(tmp: Path, query: str, events: list[dict]):
    (tmp / "q.sql").write_text(query)
    source, out = tmp / "in.jsonl", tmp / "out.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events))
    result = CliRunner().invoke(cli, ["run", str(tmp / "q.sql"), "--input", f"input={source}",
                                      "--output", f"out={out}"])
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result, rows


def test_rounding_and_notation_follow_dotnet(spark, tmp_path):
    query = ("SELECT k, FORMAT(x, 'F2') AS f2, FORMAT(x, 'N0') AS n0, FORMAT(x, 'G') AS g, "
             "FORMAT(x, '0.00') AS custom, FORMAT(k * 7, '000-00-0000') AS ssn "
             "INTO out FROM input")
    events = [{"k": 1, "x": 0.125}, {"k": 2, "x": 2.5}, {"k": 3, "x": 1e20},
              {"k": 4, "x": 0.00001234}, {"k": 5, "x": -0.125}]
    result, rows = run(tmp_path, query, events)
    assert result.exit_code == 0, result.output
    got = {r["k"]: (r["f2"], r["n0"], r["g"], r["custom"], r["ssn"]) for r in rows}
    # half away from zero (Java rounds half to even: 0.12, 2); G: 15 digits, E+XX past them
    assert got[1] == ("0.13", "0", "0.125", "0.13", "000-00-0007")
    assert got[2] == ("2.50", "3", "2.5", "2.50", "000-00-0014")
    assert got[3][2] == "1E+20"
    assert got[4][2] == "1.234E-05"
    assert got[5][:2] == ("-0.13", "0")  # .NET Framework drops the sign of a rounded zero


def test_a_format_that_does_not_fit_the_type_is_located(spark, tmp_path):
    result, _ = run(tmp_path, "SELECT\n  FORMAT(CAST(x AS bigint), 'yyyy-MM') AS y INTO out "
                              "FROM input", [{"x": 1}])
    assert result.exit_code != 0
    assert "2:29" in result.output and "holds numbers" in result.output
    assert "Traceback" not in result.output
