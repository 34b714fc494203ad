"""Where a database output is (asaql/outputs/database.py): the location's forms, the password
from the environment or libpq's password file and never from the location, and a project's SQL
Database and PostgreSQL outputs."""

from __future__ import annotations

import json

import pytest

from asaql.errors import ConfigurationError
from asaql.outputs.database import database_table, is_database_location, pgpass_lookup


def test_a_libpq_uri_names_the_table_as_the_last_part_of_its_path():
    table = database_table("postgresql://asa@db.example:6543/iot/public.alerts?sslmode=require",
                           environ={"PGPASSWORD": "s3cret"})
    assert (table.url, table.table, table.user, table.driver) == (
        "jdbc:postgresql://db.example:6543/iot?sslmode=require", "public.alerts", "asa",
        "org.postgresql.Driver")
    assert table.properties()["password"] == "s3cret"
    assert "s3cret" not in str(table) + repr(table)
    assert str(table) == "table public.alerts in postgresql database iot at asa@db.example:6543"
    assert database_table("postgres://h/db/t", environ={}).url == "jdbc:postgresql://h:5432/db"


def test_a_jdbc_url_gives_its_table_and_user_parameters_and_keeps_the_rest():
    table = database_table("jdbc:postgresql://h:5432/db?user=u&table=alerts&ssl=false",
                           environ={})
    assert (table.url, table.table, table.user) == ("jdbc:postgresql://h:5432/db?ssl=false",
                                                    "alerts", "u")
    jtds = database_table("jdbc:jtds:sqlserver://srv:1433/db;user=u;table=t",
                          environ={"ASAQL_DB_PASSWORD": "pw"})
    assert (jtds.url, jtds.database, jtds.driver, jtds.password) == (
        "jdbc:jtds:sqlserver://srv:1433/db", "db", "net.sourceforge.jtds.jdbc.Driver", "pw")
    sqlserver = database_table("jdbc:sqlserver://srv:1433;databaseName=db;table=t;encrypt=true",
                               environ={})
    assert (sqlserver.url, sqlserver.database) == (
        "jdbc:sqlserver://srv:1433;databaseName=db;encrypt=true", "db")


@pytest.mark.parametrize("location", [
    "postgresql://asa:hunter2@h/db/t", "jdbc:postgresql://h/db?password=hunter2&table=t",
    "jdbc:jtds:sqlserver://h/db;password=hunter2;table=t"])
def test_a_location_holding_its_password_is_refused_without_repeating_it(location):
    with pytest.raises(ConfigurationError) as refused:
        database_table(location, environ={})
    assert "must not hold its password" in refused.value.message
    assert "hunter2" not in refused.value.message


@pytest.mark.parametrize("location, why", [
    ("postgresql://h/db", "the table as the last part"),
    ("jdbc:postgresql://h/db", "name the table"),
    ("postgresql://h/db/t;drop", "not a plain name"),
    ("postgresql://h:port/db/t", "port"),
])
def test_a_location_without_a_plain_table_is_one_line(location, why):
    with pytest.raises(ConfigurationError, match=why):
        database_table(location, environ={})


def test_the_password_file_is_read_as_libpq_reads_it(tmp_path):
    passfile = tmp_path / "pgpass"
    passfile.write_text("# comment\nother:5432:*:*:no\nlocalhost:5433:iot:asa:first\n"
                        "*:*:*:asa:any\\:colon\n")
    assert pgpass_lookup(passfile, "127.0.0.1", "5433", "iot", "asa") == "first"
    assert pgpass_lookup(passfile, "db", "5432", "x", "asa") == "any:colon"
    assert pgpass_lookup(passfile, "db", "5432", "x", "bob") is None
    table = database_table("postgresql://asa@localhost:5433/iot/t",
                           environ={"PGPASSFILE": str(passfile)})
    assert table.password == "first"
    assert database_table("postgresql://asa@localhost:5433/iot/t",
                          environ={"PGPASSFILE": str(passfile), "PGPASSWORD": "env"}
                          ).password == "env"


def test_locations_are_told_apart():
    assert is_database_location("postgresql://h/db/t") and is_database_location("jdbc:x:y")
    assert not is_database_location("out/alerts.jsonl")
    assert not is_database_location("kafka://h:9092/t")


def test_a_project_sql_database_or_postgresql_output_binds_to_its_table(tmp_path):
    from asaql.project.bindings import Bindings, _output
    from asaql.project.files import ConfigFile

    def bound(data: dict, environ: dict):
        path = tmp_path / "Output_alerts.json"
        path.write_text(json.dumps(data))
        found = Bindings()
        _output(None, ConfigFile(path, data), "alerts", None, environ, found)
        return found.outputs["alerts"]

    sql = bound({"DataSourceType": "SQL Database", "SQLDatabaseProperties": {
        "Server": "srv.database.windows.net", "Database": "db", "Table": "alerts",
        "User": "asa", "Password": None}}, {"ASAQL_DB_PASSWORD": "pw"})
    assert (sql.url, sql.table, sql.user, sql.password) == (
        "jdbc:jtds:sqlserver://srv.database.windows.net:1433/db", "alerts", "asa", "pw")
    pg = bound({"DataSourceType": "PostgreSQL", "PostgreSQLProperties": {
        "Server": "127.0.0.1,6000", "Database": "iot", "Table": "alerts", "User": "asa"}},
        {"PGPASSWORD": "x"})
    assert (pg.url, pg.password) == ("jdbc:postgresql://127.0.0.1:6000/iot", "x")
    with pytest.raises(Exception, match="Password"):
        bound({"DataSourceType": "PostgreSQL", "PostgreSQLProperties": {
            "Server": "h", "Database": "d", "Table": "t", "Password": "leaked"}}, {})
