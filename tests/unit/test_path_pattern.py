"""ASA's Blob output path patterns: {date}, {time} in the output's formats, {datetime:…}, and
the errors that name what is wrong."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from asaql.errors import ConfigurationError
from asaql.inputs.path_pattern import parse_path_pattern

AT = datetime(2024, 3, 1, 8, 5, 9)


@pytest.mark.parametrize("text, date, time, folder", [
    ("{date}/{time}", None, None, "2024/03/01/08"),
    ("logs/{date}/{time}", "YYYY-MM-DD", "HH", "logs/2024-03-01/08"),
    ("{date}/{time}", "DD/MM/YYYY", "HH-mm", "01/03/2024/08-05"),
    ("y={datetime:yyyy}/m={datetime:MM}/d={datetime:dd}/{datetime:HH}", None, None,
     "y=2024/m=03/d=01/08"),
    ("it's/{date}", "MM/dd/yyyy", None, "it's/03/01/2024"),
])
def test_a_pattern_names_the_folder_of_a_time(text, date, time, folder):
    assert AT.strftime(parse_path_pattern(text, date, time).python_format()) == folder


def test_the_spark_pattern_quotes_the_literal_text():
    assert parse_path_pattern("it's/{date}/{time}").spark_format() == "'it''s/'yyyy/MM/dd'/'HH"


@pytest.mark.parametrize("text, date, time, message", [
    ("{client_id}/{date}", None, None, "{client_id} partitions the files by a column"),
    ("{datetime:yy}", None, None, "{datetime:yy} is not one of ASA's specifiers"),
    ("{date}", "yyyy.MM.dd", None, "date format 'yyyy.MM.dd' is not one of ASA's"),
    ("{time}", None, "hh", "time format 'hh' is not one of ASA's"),
    ("../{date}", None, None, "its folders must stay inside the output's folder"),
    ("{date", None, None, "a brace outside a token"),
])
def test_a_bad_pattern_says_what_is_wrong(text, date, time, message):
    with pytest.raises(ConfigurationError) as info:
        parse_path_pattern(text, date, time)
    assert message in str(info.value)


def test_an_input_pattern_reads_partition_folders_and_the_time_its_folders_name():
    pattern = parse_path_pattern("/cluster1/logs/{date}/{time}/{partition}/", for_input=True)
    assert pattern.glob() == "cluster1/logs/[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/[0-9][0-9]/*"
    assert pattern.time_of("cluster1/logs/2024/03/01/08/7") == datetime(2024, 3, 1, 8,
                                                                        tzinfo=timezone.utc)
    assert pattern.time_of("cluster1/logs/2024/13/01/08/7") is None  # no such month
    assert pattern.time_of("cluster1/logs/2024/03/01/08") is None  # no partition folder
    with pytest.raises(ConfigurationError):
        parse_path_pattern("{date}/{partition}")  # an output's {partition} is a column


def test_an_empty_pattern_is_an_error_and_specifiers_side_by_side_stay_apart():
    with pytest.raises(ConfigurationError, match="is empty"):
        parse_path_pattern(" / ")
    assert parse_path_pattern("{datetime:M}{datetime:dd}").spark_format() == "M''dd"
