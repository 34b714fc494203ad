"""A failure inside Spark, Java or py4j as one clear message: what failed, in which statement of
the query, what to do, and the log file that holds the whole story (Spark's own log, our
traceback appended). Imports no pyspark: the exceptions are told apart by name, so `asaql
check` never loads Spark to report an error.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import traceback
from dataclasses import dataclass

# PySpark loggers that write JSON records to stderr when an exception with a query context is
# raised (pyspark/errors/exceptions/base.py), and py4j's own.
_PYTHON_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger", "py4j")


@dataclass(frozen=True)
class SparkFailure:
    what: str  # what failed, in the user's terms
    todo: str  # what to do about it
    detail: str  # Spark's or Python's own one-line reason


def route_python_logs(log_path: str) -> None:
    """Send the records of PySpark's and py4j's Python loggers to the log file, never to
    stderr (the JVM's own output is redirected at its launch: session/builder.py)."""
    handler = logging.FileHandler(log_path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in _PYTHON_LOGGERS:
        if name != "py4j":  # create them as PySpark does, so it finds them configured
            from pyspark.logger import PySparkLogger

            logger = PySparkLogger.getLogger(name)
        else:
            logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
            old.close()
        logging.Logger.addHandler(logger, handler)  # PySparkLogger.addHandler forces JSON
        logger.propagate = False


def is_spark_failure(error: BaseException) -> bool:
    """Raised by Spark, the JVM or py4j (not by asaql's own code)."""
    module = type(error).__module__ or ""
    return module.startswith(("pyspark", "py4j")) or _gateway_missing(error)


def describe(error: BaseException) -> SparkFailure:
    """The failure, told apart by its error condition and class."""
    text = str(error)
    name = type(error).__name__
    detail = reason(text) or name
    if "JAVA_GATEWAY_EXITED" in text or _gateway_missing(error):
        detail = getattr(error, "asaql_launch_reason", None) or detail
        return SparkFailure(
            "Spark could not start: its Java process exited before it was ready",
            "check that Java 17 is installed (`java -version`; JAVA_HOME, when set, must point "
            "at it) and that --master is a valid Spark master URL", detail)
    if "Py4JNetworkError" in name or "Answer from Java side is empty" in text \
            or "Connection refused" in text and "py4j" in (type(error).__module__ or ""):
        return SparkFailure("the connection to Spark's Java process was lost (it stopped or "
                            "ran out of memory)", _MEMORY_TODO, detail)
    if "OutOfMemoryError" in text or "Java heap space" in text:
        return SparkFailure("Spark ran out of memory", _MEMORY_TODO, detail)
    database = _DATABASE_OUTPUT.findall(text)
    if database:  # a database output said why (asaql/spark/sinks/database_sink.py)
        return SparkFailure("writing a database output failed", "the reason above says what "
                            "to change; a run again with the same --checkpoint resumes at the "
                            "micro-batch that was not written (nothing is written twice)",
                            database[-1].strip())
    if "CHECKPOINT" in text or "checkpoint" in detail.lower() or "HDFSMetadataLog" in text:
        return SparkFailure(
            "the checkpoint cannot be used", "restore the checkpoint folder, or run with a new "
            "--checkpoint folder (the query then starts again from the beginning of the input)",
            detail)
    kafka = re.findall(r"^asaql\.(?:errors\.ConfigurationError|kafka\.client\.KafkaReadError): "
                       r"(.+)$", text, re.M)
    if kafka:  # asaql's Kafka source said why, from inside Spark
        return SparkFailure(
            "reading a Kafka input failed", "check that the broker is running and reachable "
            "from here; then run again with the same --checkpoint: the run resumes where it "
            "stopped, nothing is lost or written twice", kafka[-1].strip()[:400])
    if name == "PythonException" or "Python worker" in text:
        return SparkFailure(
            "a Python worker of Spark failed", "check that the Python Spark runs its workers "
            "with (PYSPARK_PYTHON, when set) has asaql's packages installed; otherwise this is a "
            "bug in asaql: please report it with the log", detail)
    if name == "AnalysisException":
        return SparkFailure("Spark refused the plan asaql made of the query",
                            "this is a bug in asaql: please report it with the query and the log",
                            detail)
    return SparkFailure("the run failed inside Spark",
                        "see the log for Spark's account; if the input and the options are "
                        "right, this is a bug in asaql: please report it with the log", detail)


_MEMORY_TODO = ("read the input in smaller micro-batches (--max-files-per-trigger N), or run on a "
                "Spark master with more memory (--master)")


def render(error: BaseException, log_path: str, statements: list[str] = ()) -> str:
    """`error: …` lines for stderr."""
    failure = describe(error)
    lines = [f"error: {failure.what}: {failure.detail}"]
    for where in statements:
        lines.append(f"  in the statement at {where}")
    lines.append(f"what to do: {failure.todo}")
    lines.append(f"full log: {log_path}")
    return "\n".join(lines)


_DATABASE_OUTPUT = re.compile(r"^asaql\.spark\.[\w.]*DatabaseOutputError: (.+)$", re.M)
_DATA_ERROR_STOP = re.compile(r"^asaql\.spark\.[\w.]*DataErrorStop: (\{.*\})$", re.M)
_WHERE_IN_QUERY = re.compile(r" \(line (\d+), column (\d+)\)$")


def data_error_stop(error: BaseException) -> dict | None:
    """The data error that stopped the run (`--on-data-error stop`), as its errors-file entry
    with `count` (the micro-batch's data errors): from Spark's message, which carries the
    writer's DataErrorStop (asaql/spark/sinks/sink.py) locally and from a Connect server alike."""
    found = _DATA_ERROR_STOP.findall(str(error))
    try:
        return json.loads(found[-1]) if found else None
    except ValueError:
        return None


def entry_address(entry: dict) -> str:
    """Where an errors-file entry's event was read: `file:line`, or its topic's place."""
    if "file" in entry:
        return f"{entry['file']}:{entry.get('line')}"
    return (f"topic {entry.get('topic')} partition {entry.get('partition')} offset "
            f"{entry.get('offset')}")


def stop_error(entry: dict, errors_path: str, checkpoint: str | None):
    """The DataError a run stopped at (`data_error_stop`'s entry): at the expression's line and
    column, naming the event, saying what to do."""
    from asaql.errors import DataError, Span

    reason = str(entry.get("reason") or "a data error")
    where = _WHERE_IN_QUERY.search(reason)
    span = None
    if where is not None:
        span = Span.point(int(where.group(1)), int(where.group(2)))
        reason = reason[:where.start()]
    address = entry_address(entry)
    more = int(entry.get("count") or 1) - 1
    also = f" (and {more} more in its micro-batch)" if more > 0 else ""
    resume = ("run again with the same --checkpoint: it resumes at that micro-batch, nothing "
              "lost, nothing written twice" if checkpoint else
              "with a --checkpoint a run resumes at the micro-batch that stopped")
    hint = (f"TRY_CAST gives NULL where a value does not convert; or run with --on-data-error "
            f"drop to set such rows aside and go on (this micro-batch's are in {errors_path}); "
            f"{resume}")
    return DataError(f"{reason}: the event at {address}{also} stopped the run, as a data error "
                     "stops an ASA job; none of its micro-batch was written", span, hint)


def append_to_log(error: BaseException, log_path: str) -> None:
    """The Python traceback and Spark's whole message (its JVM stack included) go to the log."""
    try:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write("\n==== asaql: the run failed ====\n")
            log.write("".join(traceback.format_exception(error)))
    except OSError:
        pass


def failed_statements(error: BaseException, compiled, filename: str) -> list[str]:
    """`query.sql:LINE:COL (SELECT … INTO out)` for each statement of the streaming query that
    failed, when Spark's message names it (its query name ends with the group's index)."""
    match = re.search(r"asaql_\w*?_(\d+)_[0-9a-f]{8}\b", str(error))
    if match is None or compiled is None:
        return []
    try:
        from asaql.spark.operators.relations import group_by_source

        group = list(group_by_source(compiled.plan))[int(match.group(1))]
        outputs = {write.output for write in group.writes}
    except Exception:  # the message names no group asaql knows: say nothing rather than guess
        return []
    text_lines = compiled.text.splitlines()
    found = []
    for statement in compiled.statements:
        span = getattr(statement, "span", None)
        if statement.output in outputs and span is not None:
            line = text_lines[span.line - 1].strip() if span.line <= len(text_lines) else ""
            found.append(f"{filename}:{span.line}:{span.column} ({line[:60]})")
    return found


def launch_reason(log_path: str, start: int) -> str | None:
    """The launcher's last complaint in what it wrote to the log from `start` on (a bad master
    URL, JAVA_HOME pointing nowhere, no java on the PATH)."""
    try:
        with open(log_path, "rb") as log:
            log.seek(start)
            written = log.read(1_000_000).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    telling = [line.strip() for line in written
               if re.search(r"Exception|Error|JAVA_HOME|not found|No such file", line)
               and not line.lstrip().startswith("at ")]
    if not telling:
        return None
    return re.sub(r"^Exception in thread \S+ ", "", telling[-1])[:400]


def reason(text: str) -> str:
    """The innermost reason in Spark's message: a Python exception's last line when there is
    one, else the first line of the outermost error, without the query's plan dump."""
    python = re.findall(r"^((?:\w+\.)*\w+(?:Error|Exception): .+)$", text, re.M)
    if python:  # asaql's own errors say the reason in words: their class name is noise
        return re.sub(r"^asaql\.[\w.]+: ", "", python[-1].strip())
    causes = re.findall(r"^Caused by: [\w.$]+: (.+)$", text, re.M)  # a Java chain: the root
    first = causes[-1] if causes else text.strip().splitlines()[0] if text.strip() else ""
    first = re.sub(r"\s*SQLSTATE: \w+", "", first)
    first = re.sub(r"Query \[id = [^\]]+\] terminated with exception: ", "", first)
    return first[:400]


def _gateway_missing(error: BaseException) -> bool:
    """No `java` to launch, or spark-submit missing: the launcher's own OSError."""
    return isinstance(error, (FileNotFoundError, PermissionError)) and any(
        "java" in str(part) or "spark-submit" in str(part)
        for part in (getattr(error, "filename", ""), str(error)))


def default_spark_log() -> str:
    """The log file Spark's own output and every failure's full stack go to. Lives here, not in
    session/builder.py, so the CLI can name it without importing pyspark."""
    return os.path.join(tempfile.gettempdir(), "asaql-spark.log")
