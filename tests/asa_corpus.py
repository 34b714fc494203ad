"""The real-world ASA queries of ../shared/asa-corpus/ (never copied into the project): each
one checked as `asaql check` does, and lowered to its Spark plan over empty inputs whose schema
holds the fields the query reads."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(os.environ.get("ASAQL_CORPUS",
                             Path(__file__).resolve().parents[2] / "shared" / "asa-corpus"))


@dataclass(frozen=True)
class CorpusQuery:
    file: str
    text: str
    valid: bool
    references: tuple[str, ...]


def corpus_queries() -> list[CorpusQuery]:
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    return [CorpusQuery(e["file"], (CORPUS / "queries" / e["file"]).read_text(encoding="utf-8"),
                        e["valid_asa"], tuple(e["reference"])) for e in index]


def check_errors(query: CorpusQuery) -> list:
    """`asaql check`'s errors for the query (its reference inputs named as such)."""
    from asaql.compiler.check import check_query

    return check_query(query.text, references=dict.fromkeys(query.references)).errors


def plan_problem(spark, query: CorpusQuery, inputs_folder: Path) -> str | None:
    """Lower the query as `asaql run` would, over empty inputs; None when it plans, else the
    first line of the error. `inputs_folder`: where the empty input folders are (shared by
    the queries: nothing writes there). A reference table is one row in memory (no file to
    read, no Spark job), its declared columns converted as a file's are."""
    from asaql.compiler.pipeline import compile_query
    from asaql.run.runner import RunOptions
    from asaql.spark.execute import spark_plans as plans

    compiled = compile_query(query.text, references=query.references)
    fields = fields_read(compiled)

    def record(tree: dict) -> dict:
        return {branch[""]: record(branch) if len(branch) > 1 else "x"
                for key, branch in tree.items() if key}

    with tempfile.TemporaryDirectory(prefix="asaql-corpus-") as work:
        functions = _function_files(compiled, Path(work) / "Functions")
        compiled = compiled.with_functions(functions)  # as `asaql run --functions` does
        inputs, tables, schemas = {}, {}, {}
        for number, alias in enumerate(compiled.input_names):
            # an empty folder: no files, so no Spark job looks for partitions in them
            folder = inputs_folder / f"input-{number}"
            folder.mkdir(exist_ok=True)
            inputs[alias] = str(folder)
            schemas[alias] = _struct_of(record(fields.get(alias.lower(), {})))
        for alias in compiled.reference_names:
            row = record(fields.get(alias.lower(), {})) or {"x": "x"}
            # a CREATE TABLE column gets a value of its type (a reference row that does not
            # convert stops the run)
            declared = compiled.plan.declared_columns(alias)
            row.update({name: _SAMPLE_VALUES.get(kind, "x") for name, kind in declared})
            tables[alias] = _reference_table(spark, alias, row, declared)
        try:
            plans(compiled, RunOptions(inputs=inputs, outputs={}, references={},
                                       functions=functions), spark, schemas, tables)
        except Exception as error:  # noqa: BLE001 — the test reports what Spark said
            return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return None


def fields_read(compiled) -> dict[str, dict]:
    """Per input (lower case), the tree of the fields the query reads: each level maps a
    lower-case name to its branch, whose "" entry is the name as the query spells it."""
    from asaql.compiler.check import _fields_read

    fields: dict[str, dict] = {}
    for statement in compiled.statements:
        for node, source in _fields_read(statement):
            level = fields.setdefault(source.lower(), {})
            for part in node.path:
                level = level.setdefault(part.lower(), {"": part})
    return fields


def _reference_table(spark, alias: str, row: dict, declared):
    """The table of the one `row`, typed as Spark's JSON inference types it in a file."""
    from asaql.spark.sources.reference import reference_table

    frame = spark.createDataFrame([row], _struct_of(row))
    return reference_table(alias, f"<{alias} in memory>", frame, declared)


def _struct_of(row: dict):
    from pyspark.sql import types as T

    def kind(value) -> T.DataType:
        if isinstance(value, dict):
            return _struct_of(value)
        if isinstance(value, list):
            return T.ArrayType(kind(value[0]) if value else T.StringType())
        return {bool: T.BooleanType(), int: T.LongType(), float: T.DoubleType()}.get(
            type(value), T.StringType())

    return T.StructType([T.StructField(name, kind(value)) for name, value in row.items()])


_SAMPLE_VALUES = {"bigint": 1, "float": 1.5, "datetime": "2021-01-01T00:00:00Z", "bit": True,
                  "record": {"x": "x"}, "array": ["x"]}

# The corpus holds the queries, not their projects' Functions/ folders: a query's JavaScript
# functions are given as the smallest valid ones (their code does not run while planning).
_UDF = "function main() { return null; }\n"
_UDA = ("function main() {\n  this.init = function () { return null; };\n"
        "  this.accumulate = function (state, value, timestamp) { return state; };\n"
        "  this.computeResult = function (state) { return state; };\n}\n")


def _function_files(compiled, folder: Path) -> dict:
    from asaql.javascript.definitions import read_functions
    from asaql.compiler.job_functions import called_functions

    called = called_functions(compiled)
    if not called:
        return {}
    folder.mkdir()
    for key, spelled in called.items():
        name = spelled.split(".", 1)[1]
        aggregate = key.startswith("uda.")
        (folder / f"{name}.js").write_text(_UDA if aggregate else _UDF)
        (folder / f"{name}.js.json").write_text(json.dumps(
            {"Name": name, "Type": "Aggregate" if aggregate else "Scalar", "OutputType": "any",
             "ScriptType": "JSFunction"}))
    return read_functions(str(folder))
