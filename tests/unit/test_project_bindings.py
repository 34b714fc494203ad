"""A VS Code ASA project's files → asaql's inputs and outputs (asaql/project/), without Spark:
the query and job configuration from asaproj.json, Event Hub and IoT Hub inputs and outputs as
Kafka endpoints with their key from the environment, Blob inputs from their local stand-ins,
Blob outputs as local folders in their serialization, the command line winning; and each file
or field that cannot be mapped named in one line."""

from __future__ import annotations

import json

import pytest

from asa_project import (JOB_CONFIG, local_input, output, reference_input, stream_input,
                         write_project)
from asaql.compiler.pipeline import compile_query
from asaql.project.jobconfig import policy_options
from asaql.kafka.endpoints import KafkaTopic
from asaql.project.bindings import Bindings, bind_project
from asaql.project.files import ProjectError, read_project

QUERY = """SELECT * INTO Archive FROM Readings
SELECT deviceId, COUNT(*) AS n INTO Alerts FROM Readings GROUP BY deviceId, TumblingWindow(second, 10)
"""


def bind(project_folder, given: Bindings | None = None, environ=None, kafka_config=None,
         local=False) -> Bindings:
    project = read_project(str(project_folder))
    compiled = compile_query(project.query.read_text(), references=project.reference_aliases)
    return bind_project(project, compiled, given or Bindings(), kafka_config, local,
                        environ or {})


@pytest.fixture
def event_hub_project(tmp_path):
    (tmp_path / "data.jsonl").write_text('{"deviceId": 1}\n')
    return write_project(
        tmp_path / "proj", QUERY, job_config=JOB_CONFIG,
        inputs={"Readings.json": stream_input("Readings", ConsumerGroupName="asaql-readers"),
                "local_Readings.json": local_input("Readings", "..\\data.jsonl")},
        outputs={"Archive.json": output("Archive", serialization={"Type": "Parquet"}),
                 "Alerts.json": output("Alerts", "Event Hub", PartitionKey="deviceId",
                                       EventHubName="alerts-hub")})


def test_the_query_and_job_configuration_come_from_asaproj(event_hub_project):
    project = read_project(str(event_hub_project))
    assert project.query == event_hub_project / "Readings.asaql"
    assert policy_options(str(project.job_config)) == {"late": "5s", "ooo": "2s",
                                                       "action": "adjust"}
    assert sorted(project.inputs) == ["Readings"] and list(project.mocks) == ["Readings"]


def test_an_event_hub_is_its_kafka_endpoint_with_the_key_from_the_environment(event_hub_project):
    bound = bind(event_hub_project, environ={"ASAQL_KEY_READINGS": "s3cret",
                                             "ASAQL_KEY_ALERTS": "0ther"})
    topic = bound.inputs["Readings"]
    assert isinstance(topic, KafkaTopic)
    assert str(topic) == "kafka://contoso-ns.servicebus.windows.net:9093/readings-hub"
    settings = topic.client_config()
    assert settings["sasl.username"] == "$ConnectionString"
    assert settings["security.protocol"] == "SASL_SSL"
    assert "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=s3cret;" \
        in settings["sasl.password"]
    assert settings["group.id"] == "asaql-readers"
    assert "s3cret" not in str(topic) + repr(topic) + repr(bound.inputs)  # never shown
    assert str(bound.outputs["Alerts"]).endswith("/alerts-hub")
    assert bound.partition_keys == {"Alerts": "deviceId"}


def test_a_blob_output_is_a_local_folder_in_its_serialization(event_hub_project):
    bound = bind(event_hub_project, environ={"ASAQL_KEY_READINGS": "k", "ASAQL_KEY_ALERTS": "k"})
    assert bound.outputs["Archive"] == str(event_hub_project / "LocalRunOutputs" / "Archive")
    assert bound.output_formats == {"Archive": "parquet"}
    # its PathPattern {date}/{time}, in its DateFormat yyyy/MM/dd and TimeFormat HH
    assert bound.output_path_patterns["Archive"].spark_format() == "yyyy/MM/dd'/'HH"


def test_a_blob_inputs_path_pattern_reads_a_folder_given_for_its_container(tmp_path):
    folder = write_project(tmp_path / "p", "SELECT * INTO out FROM Rows", inputs={
        "Rows.json": stream_input("Rows", "Blob Storage")}, outputs={"out.json": output("out")})
    bound = bind(folder, Bindings(inputs={"Rows": str(tmp_path)}))
    assert bound.input_path_patterns["Rows"].text == "{date}/{time}"  # tests/asa_project.py's


def test_a_blob_outputs_path_pattern_in_its_own_formats_or_its_error(tmp_path):
    folder = write_project(tmp_path / "p", "SELECT * INTO out FROM Rows", outputs={
        "out.json": output("out", PathPattern="logs/{date}", DateFormat="DD-MM-YYYY")})
    bound = bind(folder, Bindings(inputs={"Rows": str(tmp_path)}))
    assert bound.output_path_patterns["out"].spark_format() == "'logs/'dd-MM-yyyy"
    folder = write_project(tmp_path / "q", "SELECT * INTO out FROM Rows", outputs={
        "out.json": output("out", PathPattern="{client_id}/{date}")})
    with pytest.raises(ProjectError) as error:
        bind(folder, Bindings(inputs={"Rows": str(tmp_path)}))
    assert str(error.value).startswith(
        f"{folder / 'Outputs' / 'out.json'}: BlobStorageProperties.PathPattern of output 'out': "
        "the path pattern '{client_id}/{date}': {client_id} partitions the files by a column")


def test_local_takes_the_stand_in_and_the_command_line_wins(event_hub_project, tmp_path):
    given = Bindings(outputs={"Alerts": str(tmp_path / "alerts.jsonl"),
                              "Archive": str(tmp_path / "archive")})
    bound = bind(event_hub_project, given, local=True)
    assert bound.inputs == {"Readings": str(event_hub_project / ".." / "data.jsonl")}
    assert bound.input_formats == {"Readings": "json"}
    assert bound.outputs == {"Alerts": str(tmp_path / "alerts.jsonl"),
                             "Archive": str(tmp_path / "archive")}
    assert bound.output_formats == {"Archive": "parquet"}  # the folder keeps its serialization
    assert bound.partition_keys == {}


def test_the_connection_variable_gives_an_iot_hub_its_endpoint(tmp_path):
    folder = write_project(tmp_path / "p", "SELECT * INTO out FROM Telemetry",
                           inputs={"Telemetry.json": stream_input("Telemetry", "IoT Hub")},
                           outputs={"out.json": output("out")})
    connection = ("Endpoint=sb://ihsuprodam-001.servicebus.windows.net/;SharedAccessKeyName="
                  "service;SharedAccessKey=abc=;EntityPath=contoso-hub")
    bound = bind(folder, environ={"ASAQL_CONNECTION_TELEMETRY": connection})
    assert str(bound.inputs["Telemetry"]) == \
        "kafka://ihsuprodam-001.servicebus.windows.net:9093/contoso-hub"
    with pytest.raises(ProjectError) as error:
        bind(folder)
    message = str(error.value)
    assert message.startswith(f"{folder / 'Inputs' / 'Telemetry.json'}: DataSourceType is IoT Hub")
    assert "ASAQL_CONNECTION_TELEMETRY" in message


def test_blob_inputs_and_reference_data_read_their_local_stand_ins(tmp_path):
    (tmp_path / "p" / "Data").mkdir(parents=True)
    (tmp_path / "p" / "Data" / "in.csv").write_text("a;b\n1;2\n")
    (tmp_path / "p" / "Data" / "ref.jsonl").write_text('{"a": "1"}\n')
    folder = write_project(
        tmp_path / "p", "SELECT i.a INTO out FROM Rows i JOIN Ref r ON i.a = r.a",
        inputs={"Rows.json": stream_input("Rows", "Blob Storage",
                                          {"Type": "Csv", "FieldDelimiter": ";"}),
                "Ref.json": reference_input("Ref"),
                "local_Rows.json": local_input("Rows", "Data\\in.csv", "Csv"),
                "local_Ref.json": local_input("Ref", "Data/ref.jsonl")},
        outputs={"out.json": output("out", serialization={"Format": "Array"})})
    bound = bind(folder)
    assert bound.inputs == {"Rows": str(folder / "Data" / "in.csv")}
    assert bound.input_formats == {"Rows": "csv:semicolon"}
    assert bound.references == {"Ref": str(folder / "Data" / "ref.jsonl")}
    assert bound.outputs == {"out": str(folder / "LocalRunOutputs" / "out.json")}


@pytest.mark.parametrize("serialization, expected", [
    ({"Type": "Json"}, None), ({"Type": "Csv", "FieldDelimiter": ";"}, "csv:semicolon"),
    ({"Type": "Csv", "FieldDelimiter": "tab"}, "csv:tab"), ({"Type": "Avro"}, "avro")])
def test_an_event_hub_input_reads_its_messages_in_its_serialization(tmp_path, serialization,
                                                                     expected):
    folder = tmp_path / "p"
    write_project(folder, "SELECT * INTO out FROM [in]",
                  {"in.json": stream_input("in", serialization=serialization)},
                  {"out.json": output("out")})
    bound = bind(folder, environ={"ASAQL_KEY_IN": "k"})
    assert isinstance(bound.inputs["in"], KafkaTopic)
    assert bound.input_formats == ({} if expected is None else {"in": expected})


# (files, environ) → the file and field the one-line message names
UNMAPPABLE = {
    "table storage output": ({"Outputs/out.json": output("out", "Table Storage")}, {},
                             "Outputs/out.json: DataSourceType is 'Table Storage'"),
    # a SQL Database output binds to its table (test_database_locations.py), unless its
    # password is in the file
    "sql output with its password": ({"Outputs/out.json": {**output("out", "SQL Database"), (
        "SQLDatabaseProperties"): {"Server": "s", "Database": "d", "Table": "t",
                                   "Password": "in the file"}}}, {},
        "Outputs/out.json: SQLDatabaseProperties.Password is set"),
    "power bi output": ({"Outputs/out.json": {**output("out"), "DataSourceType": "Power BI"}},
                        {}, "Outputs/out.json: DataSourceType is 'Power BI'"),
    "cosmos db output": ({"Outputs/out.json": {**output("out"), "DataSourceType": "Cosmos DB"}},
                         {}, "Outputs/out.json: DataSourceType is 'Cosmos DB'"),
    "functions output": ({"Outputs/out.json": {**output("out"),
                                               "DataSourceType": "Azure Function"}},
                         {}, "Outputs/out.json: DataSourceType is 'Azure Function'"),
    "custom deserializer": ({"Inputs/in.json": stream_input(
        "in", serialization={"Type": "CustomClr"})}, {},
        "Inputs/in.json: Serialization.Type is CustomClr"),
    "gzip messages": ({"Inputs/in.json": {**stream_input("in"), "CompresssionType": "GZip"}},
                      {}, "Inputs/in.json: CompressionType is gzip"),
    "service bus input": ({"Inputs/in.json": {**stream_input("in"),
                                              "DataSourceType": "Service Bus Queue"}}, {},
                          "Inputs/in.json: DataSourceType is 'Service Bus Queue'"),
    "missing key": ({}, {}, "Inputs/in.json: EventHubProperties.SharedAccessPolicyKey is empty"),
    "managed identity": ({"Inputs/in.json": stream_input("in", AuthenticationMode="Msi")}, {},
                         "Inputs/in.json: EventHubProperties.AuthenticationMode is Msi"),
    "avro event hub output": ({"Outputs/out.json": output("out", "Event Hub",
                                                          serialization={"Type": "Avro"})},
                              {"ASAQL_KEY_IN": "k", "ASAQL_KEY_OUT": "k"},
                              "Outputs/out.json: Serialization.Type is Avro"),
    "unknown csv delimiter": ({"Inputs/in.json": stream_input(
        "in", serialization={"Type": "Csv", "FieldDelimiter": "#"})}, {},
        "Inputs/in.json: Serialization.FieldDelimiter is '#'"),
    "avro blob output": ({"Outputs/out.json": output("out", serialization={"Type": "Avro"})},
                         {"ASAQL_KEY_IN": "k"}, "Outputs/out.json: Serialization.Type is Avro"),
    "blob without stand-in": ({"Inputs/in.json": stream_input("in", "Blob Storage")}, {},
                              "Inputs/in.json: DataSourceType is Blob Storage"),
    "stand-in file missing": ({"Inputs/local_in.json": local_input("in", "nowhere.json")},
                              {}, "Inputs/local_in.json: FilePath names nowhere.json"),
    "local without stand-in": ({}, {}, "Inputs/in.json: Name 'in' has no local input file"),
    "no namespace": ({"Inputs/in.json": stream_input("in", ServiceBusNamespace=None)},
                     {}, "Inputs/in.json: EventHubProperties.ServiceBusNamespace is missing"),
}


@pytest.mark.parametrize("case", UNMAPPABLE)
def test_what_cannot_be_mapped_names_the_file_and_the_field(tmp_path, case):
    files, environ, expected = UNMAPPABLE[case]
    default = {"Inputs/in.json": stream_input("in"), "Outputs/out.json": output("out")}
    folder = tmp_path / "p"
    by_folder = {"Inputs": {}, "Outputs": {}}
    for name, data in {**default, **files}.items():
        sub, file_name = name.split("/")
        by_folder[sub][file_name] = data
    write_project(folder, "SELECT * INTO out FROM [in]", by_folder["Inputs"],
                  by_folder["Outputs"])
    with pytest.raises(ProjectError) as error:
        bind(folder, environ={} if case == "missing key" else {"ASAQL_KEY_IN": "k", **environ},
             local=case.startswith(("stand-in", "local")))
    assert str(error.value).startswith(str(folder) + "/" + expected.split(":")[0]), error.value
    assert expected.split(": ", 1)[1] in str(error.value)
    assert "\n" not in str(error.value)


def test_bad_project_files_name_the_file(tmp_path):
    folder = write_project(tmp_path / "p", "SELECT * INTO out FROM [in]",
                           {"in.json": stream_input("in")}, {"out.json": output("out")})
    (folder / "Inputs" / "in.json").write_text('{"Name": "in",')
    with pytest.raises(ProjectError, match=r"Inputs/in.json: is not JSON"):
        read_project(str(folder))
    (folder / "Inputs" / "in.json").unlink()
    with pytest.raises(ProjectError, match=r"asaproj.json: configurations lists Inputs/in.json, "
                                           "which is not in the project"):
        read_project(str(folder))
    manifest = json.loads((folder / "asaproj.json").read_text())
    (folder / "asaproj.json").write_text(json.dumps({**manifest, "startFile": "Other.asaql",
                                                     "configurations": []}))
    with pytest.raises(ProjectError, match=r"asaproj.json: startFile names Other.asaql"):
        read_project(str(folder))
    with pytest.raises(ProjectError, match=r"no asaproj.json"):
        read_project(str(tmp_path))


def test_a_stand_in_without_its_live_input_file_is_read(tmp_path):
    """As in projects that list only Inputs/Local_entry.json (ScriptType InputMock)."""
    (tmp_path / "entry.json").write_text('{"a": 1}\n')
    folder = write_project(tmp_path / "p", "SELECT * INTO out FROM entry",
                           inputs={"Local_entry.json": local_input("entry", "../entry.json")},
                           outputs={"out.json": output("out")})
    assert bind(folder).inputs == {"entry": str(folder / ".." / "entry.json")}
