"""The tables of a database output (database_sink.py): the output table's columns read from
the driver's metadata and held against the query's, and the SQL that moves a stage's rows into
it and keeps the bookkeeping. Statements are plain SQL with the driver's identifier quote;
casts are PostgreSQL's (other databases convert on insert by themselves)."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import types as T

from asaql.errors import ConfigurationError
from asaql.outputs.database import DatabaseTable

BOOKKEEPING = "asaql_batches"  # one row per micro-batch written, per run, query and statement

# java.sql.Types → what a column holds
_KINDS = {
    "numeric": (-6, 5, 4, -5, 6, 7, 8, 2, 3),
    "text": (1, 12, -1, -15, -9, -16, 2005, 2011),
    "time": (91, 92, 93, 2013, 2014),
    "bool": (-7, 16),
}
# The query's value → the kinds of column that take it (a text value goes anywhere: the
# database converts it, and refuses the rows it cannot)
_TAKES = {
    "number": ("numeric", "text", "bool", "other"),
    "bit": ("bool", "numeric", "text", "other"),
    "datetime": ("time", "text", "other"),
    "record or array": ("text", "other"),
}
# PostgreSQL's names for a column's type that are not types a value can be cast to
_PG_CASTS = {"serial": "int4", "bigserial": "int8", "smallserial": "int2"}
_TEXT_TYPES = {"postgresql": "text", "jtds:sqlserver": "nvarchar(max)",
               "sqlserver": "nvarchar(max)", "mysql": "longtext", "mariadb": "longtext"}


@dataclass(frozen=True)
class TableColumn:
    name: str  # as the database has it
    type_name: str
    kind: str  # numeric, text, time, bool, other
    nullable: bool
    has_default: bool
    quoted: str  # the name as a statement says it


def table_columns(connection, table: DatabaseTable, alias: str) -> list[TableColumn]:
    """The output table's columns, in order; the table must exist (ASA writes to a table
    that exists)."""
    metadata = connection.getMetaData()
    quote = (metadata.getIdentifierQuoteString() or '"').strip() or '"'
    escape = metadata.getSearchStringEscape() or ""
    schema, _, name = table.table.rpartition(".")
    for candidate in dict.fromkeys((name, name.lower(), name.upper())):
        pattern = candidate.replace("_", escape + "_") if escape else candidate
        result = metadata.getColumns(None, schema or None, pattern, "%")
        found = []
        while result.next():
            if result.getString("TABLE_NAME") != candidate:
                continue
            sql_type, type_name = result.getInt("DATA_TYPE"), result.getString("TYPE_NAME")
            column = result.getString("COLUMN_NAME")
            found.append(TableColumn(
                column, type_name, _kind(sql_type), result.getInt("NULLABLE") != 0,
                result.getString("COLUMN_DEF") is not None
                or (result.getString("IS_AUTOINCREMENT") or "").upper() == "YES",
                quote + column.replace(quote, quote * 2) + quote))
        result.close()
        if found:
            connection.commit()
            return found
    connection.commit()
    raise ConfigurationError(f"output '{alias}': {table} does not exist: create it first "
                             "(as in ASA, the table must exist and have the query's columns)")


def check_columns(alias: str, table: DatabaseTable, columns: list[TableColumn],
                  fields: list[T.StructField]) -> list[tuple[T.StructField, TableColumn]]:
    """Each of the SELECT's columns with the table's column of its name (the exact name, else
    one that differs in case only); a column the table lacks, a value its column cannot take
    or a NOT NULL column without a default that the query leaves out is one line."""
    exact = {c.name: c for c in columns}
    folded = {c.name.lower(): c for c in columns}
    written = ", ".join(f.name for f in fields)
    matched = []
    for f in fields:
        column = exact.get(f.name) or folded.get(f.name.lower())
        if column is None:
            raise ConfigurationError(
                f"output '{alias}': table {table.table} has no column {f.name}; the query "
                f"writes {written}; the table has {', '.join(c.name for c in columns)}")
        kind = _value_kind(f.dataType)
        if kind is not None and column.kind not in _TAKES[kind]:
            raise ConfigurationError(
                f"output '{alias}': column {column.name} of table {table.table} is "
                f"{column.type_name}, but the query writes a {kind} there ({f.name})")
        matched.append((f, column))
    used = {column.name for _, column in matched}
    for column in columns:
        if column.name not in used and not column.nullable and not column.has_default:
            raise ConfigurationError(
                f"output '{alias}': column {column.name} of table {table.table} is NOT NULL "
                f"without a default, and the query does not write it (it writes {written})")
    return matched


def insert_select(table: DatabaseTable, stage: str, columns: list[TableColumn]) -> str:
    """Moves the stage's rows (columns c0, c1, … in the order of `columns`) into the table."""
    values = ", ".join(_cast(f"c{i}", column, table) for i, column in enumerate(columns))
    return (f"INSERT INTO {table.table} ({', '.join(c.quoted for c in columns)}) "
            f"SELECT {values} FROM {quoted(table, stage)}")


def bookkeeping_ddl(table: DatabaseTable) -> str:
    text = _TEXT_TYPES.get(table.subprotocol, "varchar(4000)")
    guard = "IF NOT EXISTS " if table.postgresql else ""
    return (f"CREATE TABLE {guard}{quoted(table, BOOKKEEPING)} (run varchar(64) NOT NULL, "
            "output_table varchar(256) NOT NULL, query integer NOT NULL, statement integer NOT "
            f"NULL, batch bigint NOT NULL, row_count bigint NOT NULL, refused {text}, "
            "committed varchar(32), PRIMARY KEY (run, query, statement, batch))")


def stage_name(table: DatabaseTable, run: str, query: int, statement: int) -> str:
    return f"asaql_stage_{run[:12]}_{query}_{statement}"


def quoted(table: DatabaseTable, name: str) -> str:
    """`name` in the output table's schema."""
    schema, _, _ = table.table.rpartition(".")
    return f"{schema}.{name}" if schema else name


def _cast(stage_column: str, column: TableColumn, table: DatabaseTable) -> str:
    if not table.postgresql or column.type_name.startswith("_"):
        return stage_column
    type_name = _PG_CASTS.get(column.type_name, column.type_name)
    return f'CAST({stage_column} AS "{type_name}")' if not type_name.isidentifier() \
        or type_name != type_name.lower() else f"CAST({stage_column} AS {type_name})"


def _kind(sql_type: int) -> str:
    return next((kind for kind, types in _KINDS.items() if sql_type in types), "other")


def _value_kind(data_type: T.DataType) -> str | None:
    """What the query writes, as the messages name it; None: text (any column may take it)."""
    if isinstance(data_type, (T.StringType, T.NullType, T.VariantType)):
        return None
    if isinstance(data_type, T.BooleanType):
        return "bit"
    if isinstance(data_type, T.NumericType):
        return "number"
    if isinstance(data_type, (T.TimestampType, T.TimestampNTZType, T.DateType)):
        return "datetime"
    return "record or array"
