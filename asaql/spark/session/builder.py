"""The SparkSession asaql runs on: small, quiet, UTC."""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import re
import sys

from pyspark.sql import SparkSession

from asaql.jvm.engine import engine_jar
from asaql.spark.failures import launch_reason, route_python_logs
from asaql.spark.jvm_functions import session_settings
from asaql.spark.session import class_archive
from asaql.spark.session.jvm_view import remember_lookups
from asaql.spark.session.shipping import ship_to_executors

# A `.jsonl` output's lines meet in one task after a shuffle (sink.py, write_file); when a
# micro-batch gives no line, this rule replaces the plan by an empty relation and drops the
# metrics observed on it, and reading the observation fails. prepare_for_run sets it on the
# session a run uses.
WRITER_CONF = ("spark.sql.adaptive.optimizer.excludedRules",
               "org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation")

SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # ASA datetimes are UTC; naive strings are read as UTC.
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.noDataMicroBatches.enabled": "false",
    # Conversions that fail give NULL instead of failing the whole stream (ANSI mode would).
    "spark.sql.ansi.enabled": "false",
    "spark.driver.memory": "2g",
    # A Parquet folder output's datetimes: UTC instants in µs, as every reader takes them
    # (the default, INT96, is a legacy type readers see as zone-less nanoseconds).
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # PySpark's DataFrame debugging records each column function's Python call site in the JVM:
    # ~10 py4j round trips a call (57% of a one-event run's) and an import of IPython when it
    # is installed. asaql's errors name the statement themselves (failures.py).
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # The native step caches each micro-batch's policy'd rows for its passes (stats, windows,
    # the writer): compressing the cache (dictionary and run-length statistics gathered per
    # column per row) cost more than the window function it caches (1M events: 4.6 → 2.5 s).
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    # The optimizer's constraint propagation grows with every alias of every CASE over a wide
    # row: corpus query 260 (a step joined with its own input, 25 columns, three CASEs) spent
    # minutes in it before its first micro-batch (found by tests/corpus/test_corpus_engines.py).
    # It only infers filters asaql does not need (its rows are filtered where they are made).
    "spark.sql.constraintPropagation.enabled": "false",
    # A filter that is never true (`WHERE 1 = 0`, a field no event has) would be pruned with
    # everything under it, the step's observed counts too: the writer's job then runs an empty
    # plan of its own and the run's counts never arrive (Spark's Observation gets an empty row).
    "spark.sql.optimizer.excludedRules": "org.apache.spark.sql.catalyst.optimizer.PruneFilters",
    # Whole-stage code generation makes one Java method of a stage; HotSpot leaves methods of
    # more than 8,000 bytes of bytecode to its interpreter (DontCompileHugeMethods). The
    # native step's one pass (read, parse, policy, counts, lines) is such a method: interpreted,
    # 1,000,000 events took 4.0–4.4 s of CPU per task, compiled 2.3–2.6 s. Spark's own advice
    # is the other way round (spark.sql.codegen.hugeMethodLimit=8000: no code generation).
    "spark.driver.extraJavaOptions": "-XX:-DontCompileHugeMethods",
    "spark.executor.extraJavaOptions": "-XX:-DontCompileHugeMethods",
    # A window's partial aggregates with an exact sum (ExactSum, an object buffer) take Spark's
    # object hash aggregate, which turns to sorting its rows after 128 groups in a task: a
    # micro-batch's (key, window, group)s are thousands, and the sort took 8% of the one pass.
    # 65,536 groups of small buffers stay a few MiB per task; past them Spark still sorts.
    "spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "65536",
    # Spark makes its (empty) table warehouse at start, by default in the current folder: a
    # run must leave nothing there that the user did not ask for (asaql keeps no tables).
    "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(), "asaql-spark-warehouse"),
}


# The settings of SESSION_CONF a Spark Connect client may set (the others are fixed when the
# server starts: its UI, its driver's memory).
RUNTIME_CONF = ("spark.sql.session.timeZone", "spark.sql.execution.arrow.pyspark.enabled",
                "spark.sql.streaming.noDataMicroBatches.enabled", "spark.sql.ansi.enabled",
                "spark.sql.parquet.outputTimestampType",
                "spark.sql.inMemoryColumnarStorage.compressed",
                "spark.sql.constraintPropagation.enabled", "spark.sql.optimizer.excludedRules")


def build_session(master: str | None = None, spark_log: str | None = None,
                  remote: str | None = None, jars: tuple[str, ...] = ()) -> SparkSession:
    """Get or create the session; the JVM's own console output goes to `spark_log` if given.
    `remote` (sc://HOST:PORT): a Spark Connect session instead (connect.py); with neither a
    master nor a remote, SPARK_REMOTE (PySpark's variable) chooses Connect too. `jars`: more
    jars for the driver and executors (a database output's JDBC driver)."""
    if remote is None and master is None:
        remote = os.environ.get("SPARK_REMOTE") or None
    if remote is not None:
        from asaql.spark.session.connect import connect_session

        if spark_log is not None:
            route_python_logs(spark_log)
        spark = connect_session(remote)
        for key in RUNTIME_CONF:
            spark.conf.set(key, SESSION_CONF[key])
        return spark
    # An explicit master wins over SPARK_REMOTE (PySpark refuses both).
    os.environ.pop("SPARK_REMOTE", None)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need our pandas/pyarrow
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # stay on loopback
    builder = SparkSession.builder.appName("asaql")
    # Under spark-submit (its JVM is already up) the master and --conf are spark-submit's.
    submitted = master is None and "PYSPARK_GATEWAY_PORT" in os.environ
    if master or not (submitted or SparkSession.getActiveSession()):
        builder = builder.master(master or "local[2]")
    settings = {**SESSION_CONF, **({} if submitted else _parallelism(master or "local[2]"))}
    archive = "" if submitted else class_archive.driver_options()
    if archive:  # the driver's JVM starts from its class archive (class_archive.py)
        settings["spark.driver.extraJavaOptions"] += " " + archive
    elif not submitted:  # made once, after this run, for the runs after it
        atexit.unregister(class_archive.make_later)  # once, however many sessions
        atexit.register(class_archive.make_later)
    # the JVM engine's jar and functions (asaql/jvm/engine.py): built at first use; a run whose
    # jar cannot be built says so and reads with the Python steps (jvm_functions.py)
    settings.update(session_settings(engine_jar()))
    if jars:
        settings["spark.jars"] = ",".join(
            [*filter(None, [settings.get("spark.jars")]), *jars])
    for key, value in settings.items():
        builder = builder.config(key, value)
    if spark_log is not None:
        route_python_logs(spark_log)
    start = os.path.getsize(spark_log) if spark_log and os.path.exists(spark_log) else 0
    try:
        with _jvm_output_to(spark_log):
            spark = builder.getOrCreate()
    except Exception as error:  # what the launcher said, for the message (failures.py)
        error.asaql_launch_reason = launch_reason(spark_log, start) if spark_log else None
        raise
    spark.sparkContext.setLogLevel("ERROR")
    remember_lookups(spark.sparkContext)  # py4j's lookups once per class and method (jvm_view.py)
    if submitted and not spark.sparkContext.getConf().contains("spark.sql.shuffle.partitions"):
        partitions = _parallelism(spark.sparkContext.master)["spark.sql.shuffle.partitions"]
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
    ship_to_executors(spark)  # a cluster's executors may not have asaql installed
    return spark


def prepare_for_run(spark) -> None:
    """What a run needs of any session, asaql's or the caller's: asaql's code on a cluster's
    executors (not on Connect: the server's functions carry it) and WRITER_CONF."""
    from asaql.spark.session.connect import is_connect

    if not is_connect(spark):
        ship_to_executors(spark)
    spark.conf.set(*WRITER_CONF)


def _parallelism(master: str) -> dict:
    """Shuffle partitions = the cores of a local master (8 on a cluster). Each one holds a state
    store that every micro-batch loads and commits: 200, Spark's default, made streaming 9×
    slower on 2 cores (SPARK-NOTES), and 4 on local[2] cost 0.3 s a micro-batch more than 2.
    The value is frozen in the checkpoint at the first run."""
    match = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]|local", master)
    if match is None:
        count = 8
    elif master == "local":
        count = 1
    else:
        count = os.cpu_count() or 2 if match.group(1) == "*" else int(match.group(1))
    return {"spark.sql.shuffle.partitions": str(count), "spark.default.parallelism": str(count)}


@contextlib.contextmanager
def _jvm_output_to(path: str | None):
    """The JVM and the Python workers it spawns inherit our fds 1 and 2 at launch: point them at
    a log file meanwhile, so nothing Spark prints can mix with rows written to stdout."""
    if path is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
