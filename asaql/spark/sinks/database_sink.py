"""An output that is a database table (asaql/outputs/database.py), exactly once.

Each micro-batch's rows are written by Spark's executors, in parallel, through Spark's own JDBC
data source into a stage table beside the output table (one per statement and run); then the
driver moves them into the table and records the micro-batch in a bookkeeping table,
`asaql_batches`, in one transaction. A micro-batch replayed after a kill finds itself recorded
and writes nothing again; one killed before its transaction left nothing in the table. Rows the
table refuses (a value too long, a NULL into NOT NULL, a number out of range, a key already
there) follow `--output-error-policy`: `drop` sets each aside in the errors file with the
database's reason (found by halving the micro-batch's rows until the refused ones are alone);
`retry`, ASA's default, writes nothing of the micro-batch and stops the run with the reason
(docs/databases.md)."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from pathlib import Path

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import ConfigurationError
from asaql.outputs.database import DatabaseTable
from asaql.spark.sinks.database_tables import (
    BOOKKEEPING, TableColumn, bookkeeping_ddl, check_columns, insert_select, quoted,
    stage_name, table_columns,
)
from asaql.spark.lowering.datetime_functions import format_asa_datetime
from asaql.spark.sinks.line_sink import entry_rows
from asaql.spark.operators.outputs import JSON_COLUMN

ROW_ID = "_asaql_row"  # a stage row's id: the refused rows are found by halving ranges of it
RETRY_SECONDS = 120  # how long a connection that fails is tried again before the run stops
_TRANSIENT_STATES = ("08", "53", "57P", "40001", "40P01")


class DatabaseOutputError(RuntimeError):
    """Raised by a micro-batch whose rows a database output could not take; its text is the
    one line the command shows (asaql/spark/failures.py)."""


class DatabaseSink:
    collects = False  # Spark's executors write the rows
    spark_file = False

    def __init__(self, spark, alias: str, table: DatabaseTable, checkpoint: str, fresh: bool,
                 errors, policy: str = "retry"):
        if getattr(spark, "_jvm", None) is None:
            raise ConfigurationError(f"output '{alias}' ({table}): a database output is written "
                                     "from Spark's own JVM: run without --remote (Spark Connect)")
        self.spark, self.alias, self.table = spark, alias, table
        self.errors, self.policy = errors, policy
        self.lock = threading.RLock()
        self.run = _run_id(Path(checkpoint) / "journals" / f"database-{alias}.json", fresh)
        self._connection = None
        self._rejected: dict[tuple, int] = {}
        self._stages: set[str] = set()
        with self.lock:
            self.columns: list[TableColumn] = table_columns(self._connect(), table, alias)
            self._execute(bookkeeping_ddl(table), exists_ok=not table.postgresql)

    # -- the query's columns against the table's -------------------------------------------

    def describe(self, fields) -> None:
        """At start: the SELECT's columns must be the table's (ASA writes to a table that
        exists and matches); a mismatch is one line."""
        check_columns(self.alias, self.table, self.columns, fields or [])

    # -- a micro-batch -----------------------------------------------------------------------

    def write(self, batch: DataFrame, lines, batch_id: int, query: int = 0,
              statement: int = 0, defer: list | None = None) -> int:
        key = (query, statement, batch_id)
        done = self._recorded(key)
        if done is not None:  # replayed after a kill: in the table already
            # the pass still runs (into Spark's no-op sink): what is observed on it (the
            # writer's counts, the fused step's statistics) comes from it
            entry_rows(batch, [(0, lines)]).write.format("noop") \
                .mode("overwrite").save()
            rows, refused = done
            publish = lambda: self._set_aside(key, refused)  # noqa: E731
        else:
            rows, publish = self._stage(batch, lines, key)
        if defer is None:
            publish()
        else:
            defer.append(publish)
        return rows

    def take_rejected(self, query: int, statement: int, batch_id: int) -> int:
        """Rows of the micro-batch the table refused (set aside under `drop`)."""
        return self._rejected.pop((query, statement, batch_id), 0)

    def _stage(self, batch: DataFrame, lines, key: tuple):
        query, statement, batch_id = key
        fields = list(lines.fields or [])
        matched = check_columns(self.alias, self.table, self.columns, fields)
        schema = T.StructType([T.StructField(f.name, _stage_type(f.dataType, column))
                               for f, column in matched])
        observation = Observation(f"asaql_db_{id(self)}_{batch_id}_{query}_{statement}")
        # a table's statements are lowered to structs of typed columns (execute.py), not text
        selected = entry_rows(batch, [(0, lines)]).select(F.col(JSON_COLUMN).alias("line"))
        values = [_typed_value(F.col("line").getField(f.name), f.dataType, schema[i].dataType)
                  for i, f in enumerate(fields)]
        typed = selected.select(*[value.alias(f"c{i}") for i, value in enumerate(values)],
                                F.monotonically_increasing_id().alias(ROW_ID))
        counted = typed.observe(observation, F.count(F.lit(1)).alias("rows"))
        stage = stage_name(self.table, self.run, query, statement)
        self._with_retries(lambda: counted.write.mode("overwrite").option("truncate", "true")
                           .jdbc(_write_url(self.table), stage,
                                 properties=self.table.properties()))
        self._stages.add(stage)
        rows = observation.get.get("rows") or 0
        columns = [column for _, column in matched]
        names = [f.name for f, _ in matched]

        def publish() -> None:
            refused = self._with_retries(lambda: self._commit(key, stage, columns, names, rows))
            self._set_aside(key, refused)

        return rows, publish

    def _commit(self, key: tuple, stage: str, columns: list[TableColumn], names: list[str],
                rows: int) -> list:
        """Moves the stage's rows into the table and records the micro-batch, in one
        transaction; → the rows refused (under `drop`)."""
        with self.lock:
            connection = self._connect()
            done = self._recorded(key)
            if done is not None:  # a retried commit that had gone through
                return done[1]
            statement = connection.createStatement()
            move = insert_select(self.table, stage, columns)
            refused: list = []
            try:
                if rows:
                    statement.executeUpdate(move)
            except Exception as error:  # noqa: BLE001 (a py4j error carrying SQLException)
                connection.rollback()
                state, reason = _sql_state(error), self.table.redact(_sql_message(error))
                if _transient(state) or self.policy != "drop" or not _refused(state):
                    raise self._failure(key, state, reason) from None
                refused = self._halving(connection, move, stage, names)
            self._record(connection, key, rows - len(refused), refused)
            connection.commit()
            return refused

    def _halving(self, connection, move: str, stage: str, names: list[str]) -> list:
        """The stage's rows in ranges of their ids, each tried under a savepoint: a range the
        table refuses is halved until the refused rows are alone; → [(row, reason)]."""
        statement = connection.createStatement()
        result = statement.executeQuery(f"SELECT MIN({ROW_ID}), MAX({ROW_ID}) FROM "
                                        f"{quoted(self.table, stage)}")
        result.next()
        low, high = result.getLong(1), result.getLong(2)
        pending, refused = [(low, high)], []
        while pending:
            first, last = pending.pop()
            savepoint = connection.setSavepoint()
            try:
                statement.executeUpdate(f"{move} WHERE {ROW_ID} BETWEEN {first} AND {last}")
                connection.releaseSavepoint(savepoint)
                continue
            except Exception as error:  # noqa: BLE001
                connection.rollback(savepoint)
                reason = self.table.redact(_sql_message(error))
            if first == last:
                refused.append((self._stage_row(statement, stage, names, first), reason))
                continue
            middle = first + (last - first) // 2
            pending.extend([(middle + 1, last), (first, middle)])
        return refused

    def _stage_row(self, statement, stage: str, names: list[str], row_id: int) -> dict:
        """A refused row as the query wrote it: its columns' names, datetimes as ASA's text."""
        result = statement.executeQuery(f"SELECT * FROM {quoted(self.table, stage)} "
                                        f"WHERE {ROW_ID} = {row_id}")
        if not result.next():
            return {}
        values = {}
        for index, name in enumerate(names):
            value = result.getObject(index + 1)
            if value is not None and not isinstance(value, (bool, int, float, str)):
                text = str(value.toString())  # a java.sql.Timestamp: the UTC time
                value = text.replace(" ", "T") + "Z" if re.fullmatch(
                    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?", text) else text
            values[name] = value
        return values

    def _set_aside(self, key: tuple, refused: list) -> None:
        query, statement, batch_id = key
        self._rejected[key] = len(refused)
        if refused:
            self.errors.write_entries([{
                "output": self.alias, "table": self.table.table, "reason": reason,
                "row": row, "kind": "output error"} for row, reason in refused],
                query, batch_id)

    # -- bookkeeping -------------------------------------------------------------------------

    def _recorded(self, key: tuple) -> tuple[int, list] | None:
        """(rows, refused) of a micro-batch the table has, None when it has not."""
        query, statement, batch_id = key
        with self.lock:
            statement_ = self._connect().prepareStatement(
                f"SELECT row_count, refused FROM {quoted(self.table, BOOKKEEPING)} "
                "WHERE run = ? AND query = ? AND statement = ? AND batch = ?")
            statement_.setString(1, self.run)
            statement_.setInt(2, query)
            statement_.setInt(3, statement)
            statement_.setLong(4, batch_id)
            result = statement_.executeQuery()
            found = (result.getLong(1), json.loads(result.getString(2) or "[]")) \
                if result.next() else None
            self._connection.commit()
        if found is None:
            return None
        rows, refused = found
        return rows + len(refused), [tuple(r) for r in refused]

    def _record(self, connection, key: tuple, rows: int, refused: list) -> None:
        query, statement, batch_id = key
        insert = connection.prepareStatement(
            f"INSERT INTO {quoted(self.table, BOOKKEEPING)} (run, output_table, query, "
            "statement, batch, row_count, refused, committed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        insert.setString(1, self.run)
        insert.setString(2, self.table.table)
        insert.setInt(3, query)
        insert.setInt(4, statement)
        insert.setLong(5, batch_id)
        insert.setLong(6, rows)
        insert.setString(7, json.dumps(refused, default=str) if refused else None)
        insert.setString(8, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        insert.executeUpdate()

    # -- connections -------------------------------------------------------------------------

    def _connect(self):
        """The driver's connection (made the way Spark's JDBC source makes its own: its
        dialect and driver registry); made again after a failure."""
        if self._connection is not None:
            try:
                if self._connection.isValid(5):
                    return self._connection
            except Exception:  # noqa: BLE001
                pass
            self._connection = None
        jvm = self.spark._jvm
        options = {"url": self.table.url, "dbtable": self.table.table,
                   **self.table.properties()}
        try:
            jdbc = jvm.org.apache.spark.sql.execution.datasources.jdbc.JDBCOptions(
                jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(options))
            connection = jvm.org.apache.spark.sql.jdbc.JdbcDialects.get(self.table.url) \
                .createConnectionFactory(jdbc).apply(-1)
        except Exception as error:  # noqa: BLE001
            raise ConfigurationError(
                f"output '{self.alias}': cannot connect to {self.table}: "
                f"{self.table.redact(_sql_message(error))}{_driver_hint(error, self.table)}") \
                from None
        connection.setAutoCommit(False)
        if self.table.postgresql:  # datetimes are UTC instants (the stage's are UTC times)
            statement = connection.createStatement()
            statement.execute("SET TIME ZONE 'UTC'")
            connection.commit()
        self._connection = connection
        return connection

    def _execute(self, sql: str, exists_ok: bool = False) -> None:
        connection = self._connect()
        try:
            connection.createStatement().execute(sql)
            connection.commit()
        except Exception as error:  # noqa: BLE001
            connection.rollback()
            if exists_ok and "already" in _sql_message(error).lower():
                return  # a database without CREATE TABLE IF NOT EXISTS
            raise ConfigurationError(f"output '{self.alias}': {self.table}: "
                                     f"{self.table.redact(_sql_message(error))}") from None

    def _with_retries(self, attempt):
        """`attempt()`, tried again while the database cannot be reached, for RETRY_SECONDS."""
        started, pause = time.monotonic(), 1.0
        while True:
            try:
                return attempt()
            except DatabaseOutputError as error:
                if not getattr(error, "transient", False) or \
                        time.monotonic() - started > RETRY_SECONDS:
                    raise
            except Exception as error:  # noqa: BLE001 (Spark's job failed)
                text = self.table.redact(_sql_message(error))
                if not _transient_text(text):
                    raise  # not the database's: Spark's own failure, as any output's
                if time.monotonic() - started > RETRY_SECONDS:
                    raise DatabaseOutputError(f"output '{self.alias}' ({self.table}): the "
                                              f"database could not be reached: {text}") from None
            with self.lock:
                self._connection = None
            time.sleep(pause)
            pause = min(pause * 2, 15.0)

    def _failure(self, key: tuple, state: str | None, reason: str) -> DatabaseOutputError:
        query, statement, batch_id = key
        if _transient(state):
            error = DatabaseOutputError(f"output '{self.alias}' ({self.table}): the database "
                                        f"could not be reached: {reason}")
            error.transient = True
            return error
        return DatabaseOutputError(
            f"output '{self.alias}': {self.table} refused a row of micro-batch {batch_id} "
            f"({reason}); nothing of that micro-batch was written. With "
            "--output-error-policy retry (ASA's default) the run stops here: change the table "
            "or the query, then run again with the same --checkpoint to write it; with "
            "--output-error-policy drop such rows go to the errors file")

    def close(self) -> None:
        """The stage tables go at the end of a run (a killed run's are reused by its restart)."""
        with self.lock:
            if self._connection is None:
                return
            try:
                for stage in self._stages:
                    self._connection.createStatement().execute(
                        f"DROP TABLE IF EXISTS {quoted(self.table, stage)}")
                self._connection.commit()
                self._connection.close()
            except Exception:  # noqa: BLE001 (the database went away: the stages stay)
                pass
            self._connection = None


def _stage_type(data_type: T.DataType, column: TableColumn) -> T.DataType:
    """A stage column's type: the query's where the table's column takes it as it is, else the
    JSON text of the value (records and arrays, and any value going into a text column)."""
    if column.kind == "text" or column.kind == "other" or isinstance(
            data_type, (T.StructType, T.ArrayType, T.MapType, T.VariantType, T.NullType)):
        return T.StringType()
    if isinstance(data_type, T.TimestampType):
        return T.TimestampType()  # written as the UTC time without a zone (_typed_value)
    return data_type


def _typed_value(value, data_type: T.DataType, stage_type: T.DataType):
    """A typed column as the stage takes it: the text a JSON line would have (records and
    arrays as JSON, datetimes as ASA writes them) where the stage's column is text."""
    if isinstance(stage_type, T.StringType) and not isinstance(data_type, T.StringType):
        if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType, T.VariantType)):
            return F.to_json(value)
        if isinstance(data_type, (T.TimestampType, T.TimestampNTZType)):
            return format_asa_datetime(value)
        return value.cast(T.StringType())
    if isinstance(data_type, T.TimestampType):  # UTC (the session's zone) without a zone
        return value.cast(T.TimestampNTZType())
    return value


def _write_url(table: DatabaseTable) -> str:
    """PostgreSQL's driver sends a batch of inserts as multi-row statements when asked (its
    `reWriteBatchedInserts`): the stage's rows go in several times faster."""
    if not table.postgresql or "rewritebatchedinserts" in table.url.lower():
        return table.url
    return table.url + ("&" if "?" in table.url else "?") + "reWriteBatchedInserts=true"


def _run_id(path: Path, fresh: bool) -> str:
    """This checkpoint's name in the bookkeeping table: new with the checkpoint, kept across
    restarts (a batch id alone would clash with another job's, or a fresh run's)."""
    if not fresh and path.exists():
        try:
            return json.loads(path.read_text(encoding="utf-8"))["run"]
        except (ValueError, KeyError):
            pass
    run = uuid.uuid4().hex
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"run": run}), encoding="utf-8")
    return run


def _sql_state(error: BaseException) -> str | None:
    java = getattr(error, "java_exception", None)
    while java is not None:
        try:
            state = java.getSQLState() if hasattr(java, "getSQLState") else None
        except Exception:  # noqa: BLE001 (not an SQLException)
            state = None
        if state:
            return str(state)
        java = java.getCause()
    return None


def _sql_message(error: BaseException) -> str:
    java = getattr(error, "java_exception", None)
    if java is not None:
        deepest = java
        while deepest.getCause() is not None:
            deepest = deepest.getCause()
        text = str(deepest.getMessage() or deepest.toString())
    else:
        text = str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:500]


def _transient(state: str | None) -> bool:
    return state is not None and state.startswith(_TRANSIENT_STATES)


def _transient_text(text: str) -> bool:
    """A failure to reach the database, as Spark's job failure tells it (no SQL state)."""
    return re.search(r"(?i)connection( to \S+)? refused|connection reset|could not connect|"
                     r"connection attempt failed|terminating connection|i/o error", text) \
        is not None


def _refused(state: str | None) -> bool:
    """SQL's classes of a value or a row the table will not take: data exception (22) and
    integrity constraint violation (23)."""
    return state is not None and state.startswith(("22", "23"))


def _driver_hint(error: BaseException, table: DatabaseTable) -> str:
    text = _sql_message(error) + str(getattr(error, "java_exception", ""))
    if "ClassNotFoundException" in text or "No suitable driver" in text:
        return (f" (no JDBC driver for {table.subprotocol}: give its jar with --jars; for "
                "PostgreSQL, Debian's libpostgresql-jdbc-java installs /usr/share/java/"
                "postgresql.jar, which asaql finds itself)")
    return ""
