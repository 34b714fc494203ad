"""The real-world corpus as a differential test of the JVM engine (issue 26): each query run on
events synthesized from the fields it reads (tests/corpus_events.py: three partitions, late,
early and out-of-order events, malformed lines, reference tables whose keys meet the events')
gives the same output files and the same errors file (their lines; the order of lines that
streaming queries side by side append is theirs) through `--engine jvm` (the JVM engine's
reader, and the native step's exact sums) and `--engine python` (the Python steps).

Both read one file per micro-batch (each input is two files): so the JVM engine takes its
one-pass paths (issue 35) wherever they cover a step — a pass-through's counts settled on the
writer's pass, one windowed statement's partials merged in the pass that reads the file — with
each key's seeds carried from the micro-batch before, and its two-pass way where the one pass
refuses them. The report counts the micro-batches each one-pass path took.

A query whose run fails must fail the same way through both. The queries are a fixed sample
of the accepted ones, spread over the corpus by a hash of their file names, and the ones that
found a bug (FOUND):
ASAQL_CORPUS_ENGINE_QUERIES (default 8; "all" runs every accepted query, a few seconds
each); ASAQL_CORPUS_ENGINE_REPORT=FILE writes what each run gave, one JSON line per query."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from asa_corpus import CORPUS, check_errors, corpus_queries, fields_read
from corpus_events import timestamp_fields, write_reference, write_stream

pytestmark = pytest.mark.skipif(not (CORPUS / "index.json").is_file(),
                                reason=f"the ASA query corpus is not at {CORPUS}")

SAMPLE = os.environ.get("ASAQL_CORPUS_ENGINE_QUERIES", "8")
# queries that found a bug here, always run: 260 (a step joined with its input) hung in Spark's
# constraint propagation and compared a bit with a number
FOUND = ("260.asaql",)
# queries the windows' one pass covers (one windowed statement of COUNT, AVG, …), always run
ONE_PASS = ("004.asaql", "012.asaql", "194.asaql")
REPORT = os.environ.get("ASAQL_CORPUS_ENGINE_REPORT")  # a file: one JSON line per query


def _sample() -> list:
    if not (CORPUS / "index.json").is_file():
        return []
    queries = [q for q in corpus_queries() if q.valid]
    queries.sort(key=lambda q: hashlib.sha1(q.file.encode()).hexdigest())
    if SAMPLE == "all":
        return queries
    return queries[:int(SAMPLE)] + [q for q in queries[int(SAMPLE):]
                                    if q.file in FOUND + ONE_PASS]


def _run(spark, compiled, work: Path, inputs: dict, references: dict, functions: dict,
         engine: str):
    from asaql.run.runner import RunOptions, run

    out = work / engine
    out.mkdir()
    options = RunOptions(inputs=inputs, references=references, functions=functions,
                         outputs={name: str(out / f"{name}.jsonl")
                                  for name in compiled.output_names},
                         errors_path=str(out / "errors.jsonl"), checkpoint=str(out / "ck"),
                         engine=engine, on_data_error="drop",  # random values: compared
                         max_files_per_trigger=1)
    try:
        run(compiled, options, spark=spark)
    except Exception as error:  # noqa: BLE001 — compared between the engines
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
    # each file's lines as a sorted list: a query's inputs run as streaming queries side by
    # side, and the errors file (or an output two of them write) takes their appends in the
    # order they finish (found on corpus query 232: two inputs' malformed lines swapped)
    return {path.name: sorted(path.read_text(encoding="utf-8").splitlines())
            for path in sorted(out.glob("*.jsonl"))}


@pytest.mark.slow
@pytest.mark.parametrize("query", _sample(), ids=lambda q: q.file)
def test_a_corpus_query_gives_the_same_rows_through_both_engines(spark, query, tmp_path,
                                                                 monkeypatch):
    from asa_corpus import _function_files
    from asaql.compiler.pipeline import compile_query
    from asaql.spark.jvm_functions import engine_problem

    assert engine_problem(spark) is None
    if check_errors(query):
        pytest.skip(f"{query.file} is not accepted yet (tests/corpus/test_asa_corpus.py)")
    compiled = compile_query(query.text, references=query.references)
    functions = _function_files(compiled, tmp_path / "Functions")
    compiled = compiled.with_functions(functions)
    fields = fields_read(compiled)
    kinds = dict.fromkeys(timestamp_fields(compiled.statements), "datetime")
    seed = int(hashlib.sha1(query.file.encode()).hexdigest()[:8], 16)
    inputs, references = {}, {}
    for number, alias in enumerate(compiled.input_names):
        folder = tmp_path / "inputs" / f"input-{number}"
        write_stream(folder, fields.get(alias.lower(), {}), kinds, seed + number)
        inputs[alias] = str(folder)
    for number, alias in enumerate(compiled.reference_names):
        path = tmp_path / "inputs" / f"reference-{number}.json"
        write_reference(path, fields.get(alias.lower(), {}), kinds, seed + 100 + number)
        references[alias] = str(path)
    one_pass = _one_pass_counter(monkeypatch)
    jvm = _run(spark, compiled, tmp_path, inputs, references, functions, "jvm")
    python = _run(spark, compiled, tmp_path, inputs, references, functions, "python")
    if REPORT:  # one line per query: what its run gave (a survey of the corpus on such events)
        summary = jvm.get("error") or {name: len(lines) for name, lines in jvm.items()}
        with open(REPORT, "a", encoding="utf-8") as report:
            report.write(json.dumps({"file": query.file, "jvm": summary, "one_pass": one_pass,
                                     "same": jvm == python}) + "\n")
    assert jvm == python


def _one_pass_counter(monkeypatch) -> dict:
    """The micro-batches the native step ran in one pass: a pass-through's settled on the
    writer's pass, one windowed statement's; and those a one pass refused."""
    from asaql.spark.operators.native_step import NativeStep

    taken = {"pass-through": 0, "windows": 0, "refused": 0}
    settle, window = NativeStep.settle, NativeStep._fused_window

    def settled(step):
        counts = settle(step)
        taken["pass-through" if counts is not None else "refused"] += 1
        return counts

    def windowed(step, *args):
        stepped = window(step, *args)
        taken["windows" if stepped is not None else "refused"] += 1
        return stepped

    monkeypatch.setattr(NativeStep, "settle", settled)
    monkeypatch.setattr(NativeStep, "_fused_window", windowed)
    return taken
