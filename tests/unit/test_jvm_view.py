"""The driver's JVM view that remembers classes and static methods (asaql/spark/session/
jvm_view.py), on the shared session: PySpark's functions give the same columns with one round
trip each instead of three; field values, packages and missing members are asked for each
time."""

from __future__ import annotations

import py4j.clientserver
import pytest
from py4j.protocol import Py4JError
from pyspark import SparkContext
from pyspark.sql import functions as F

from asaql.spark.session.jvm_view import RememberingView, remember_lookups


@pytest.fixture
def commands(monkeypatch):
    """The py4j commands sent from here on, by their first letter (r: a lookup, c: a call)."""
    sent: list[str] = []
    send = py4j.clientserver.ClientServerConnection.send_command

    def recorded(self, command):
        sent.append(command[0])
        return send(self, command)

    monkeypatch.setattr(py4j.clientserver.ClientServerConnection, "send_command", recorded)
    return sent


def test_the_session_remembers_and_functions_give_the_same_columns(spark, commands):
    assert isinstance(SparkContext._jvm, RememberingView)
    remember_lookups(spark.sparkContext)  # idempotent: still the one view
    assert isinstance(SparkContext._jvm, RememberingView)

    def made():
        return F.when(F.col("n") > F.lit(1), F.concat(F.col("s"), F.lit("!"))) \
            .otherwise(F.lit("-"))

    made()  # each class and method found once
    commands.clear()
    column = made()
    assert commands and "r" not in commands  # no lookup: only the calls
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "n int, s string") \
        .select(column.alias("v")).collect()
    assert [row.v for row in rows] == ["-", "b!"]


def test_field_values_packages_and_missing_members_are_asked_each_time(spark, commands):
    jvm = SparkContext._jvm
    integer = getattr(jvm, "java.lang.Integer")
    assert integer.MAX_VALUE == 2**31 - 1
    commands.clear()
    assert integer.MAX_VALUE == 2**31 - 1
    assert commands == ["r"]  # a field's value: asked again
    assert "MAX_VALUE" not in integer._members
    for _ in range(2):
        commands.clear()
        with pytest.raises(Py4JError):
            integer.noSuchMethod
        assert commands == ["r"]
    assert "noSuchMethod" not in integer._members
    assert "org.example" not in jvm._classes and getattr(jvm, "org.example") is not None


def test_a_static_class_by_its_dotted_name_is_walked_once_and_a_missing_one_is_none(
        spark, commands):
    from asaql.spark.session.jvm_view import static_class

    found = static_class(spark, "java.lang.Integer")
    assert found is not None and found.parseInt("42") == 42
    commands.clear()
    again = static_class(spark, "java.lang.Integer")
    assert again is found and commands == []  # kept: no round trip to find it
    assert again.parseInt("7") == 7 and commands == ["c"]  # the method is kept too
    assert static_class(spark, "org.example.NoSuchClass") is None
    assert static_class(spark, "org.example.NoSuchClass") is None  # not kept: asked again
