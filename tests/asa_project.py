"""VS Code ASA project folders for tests, in the shapes the Azure Stream Analytics extension
writes (as in Azure/azure-stream-analytics Samples/OnnxExample/ASAUDF: asaproj.json with
startFile and configurations; Inputs/NAME.json with ScriptType Input, EventHubProperties /
BlobStorageProperties / IoTHubProperties, Serialization; Inputs/local_NAME.json with
ScriptType InputMock; Outputs/NAME.json with ScriptType Output)."""

from __future__ import annotations

import json
from pathlib import Path

SERIALIZATION = {"Encoding": "UTF8", "Type": "Json", "FieldDelimiter": None, "Format": None,
                 "SerializationDllPath": None, "SerializationClassName": None,
                 "SerializationDllPathInLocal": None}
NO_SOURCES = {"EventHubProperties": None, "BlobStorageProperties": None,
              "IoTHubProperties": None, "BlobReferenceProperties": None,
              "SqlReferenceInputInfo": None}


def event_hub_properties(**changes) -> dict:
    return {"ConsumerGroupName": None, "EventHubName": "readings-hub",
            "ServiceBusNamespace": "contoso-ns", "SharedAccessPolicyKey": None,
            "SharedAccessPolicyName": "RootManageSharedAccessKey",
            "AuthenticationMode": "ConnectionString", **changes}


def blob_properties() -> dict:
    return {"StorageAccounts": [{"AccountName": "contosostore", "AccountKey": None}],
            "Container": "readings", "PathPattern": "{date}/{time}", "DateFormat": "yyyy/MM/dd",
            "TimeFormat": "HH", "AuthenticationMode": "ConnectionString"}


def stream_input(name: str, kind: str = "Event Hub", serialization: dict | None = None,
                 **properties) -> dict:
    section = {"Event Hub": "EventHubProperties", "IoT Hub": "IoTHubProperties"}.get(
        kind, "BlobStorageProperties")
    default = {"EventHubProperties": event_hub_properties(),
               "IoTHubProperties": {"IotHubNamespace": "contoso-hub",
                                    "SharedAccessPolicyName": "iothubowner",
                                    "SharedAccessPolicyKey": None,
                                    "ConsumerGroupName": "$Default",
                                    "Endpoint": "messages/events"},
               "BlobStorageProperties": blob_properties()}[section]
    return {"Sample": None, **NO_SOURCES, section: {**default, **properties},
            "DataSourceCredentialDomain": None, "Name": name, "Type": "Data Stream",
            "DataSourceType": kind, "Serialization": {**SERIALIZATION, **(serialization or {})},
            "CompresssionType": "None", "ScriptType": "Input", "PartitionKey": None}


def reference_input(name: str) -> dict:
    return {**NO_SOURCES, "BlobReferenceProperties": blob_properties(), "Name": name,
            "Type": "Reference data", "DataSourceType": "Blob Storage",
            "Serialization": SERIALIZATION, "ScriptType": "Input"}


def local_input(alias: str, path: str, fmt: str = "Json") -> dict:
    return {"InputAlias": alias, "Type": "Data Stream", "Format": fmt, "FilePath": path,
            "SerializationDllPath": None, "SerializationClassName": None,
            "SerializationDllPathInLocal": None, "ScriptType": "InputMock"}


def output(name: str, kind: str = "Blob Storage", serialization: dict | None = None,
           **properties) -> dict:
    sources = {"EventHubProperties": None, "BlobStorageProperties": None,
               "SQLDatabaseProperties": None, "TableStorageProperties": None,
               "ServiceBusQueueProperties": None, "ServiceBusTopicProperties": None,
               "DocumentDbProperties": None, "PowellBIProperties": None,
               "AzureDataLakeStoreProperties": None, "AzureFunctionProperties": None}
    if kind == "Event Hub":
        sources["EventHubProperties"] = event_hub_properties(**properties)
    elif kind == "Blob Storage":
        sources["BlobStorageProperties"] = {**blob_properties(), **properties}
    elif kind == "SQL Database":
        sources["SQLDatabaseProperties"] = {"Server": "contoso", "Database": "db",
                                            "User": "asa", "Password": None, "Table": "t"}
    return {**sources, "DataSourceCredentialDomain": None, "Name": name,
            "DataSourceType": kind,
            "Serialization": {**SERIALIZATION, "Format": "LineSeparated",
                              **(serialization or {})},
            "MinimumRows": None, "MaximumTime": None, "ScriptType": "Output"}


JOB_CONFIG = {"DataLocale": "en-US", "OutputErrorPolicy": "Stop",
              "EventsLateArrivalMaxDelayInSeconds": 5, "EventsOutOfOrderMaxDelayInSeconds": 2,
              "EventsOutOfOrderPolicy": "Adjust", "StreamingUnits": 3,
              "CompatibilityLevel": "1.2"}


def write_project(folder: Path, query: str, inputs: dict[str, dict] = (),
                  outputs: dict[str, dict] = (), job_config: dict | None = None,
                  name: str = "Readings") -> Path:
    """A project folder: `inputs` and `outputs` map a file name (in Inputs/, Outputs/) to its
    JSON; every file is listed in asaproj.json, with Windows separators as the extension
    writes them."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.asaql").write_text(query, encoding="utf-8")
    configurations = []
    if job_config is not None:
        (folder / "JobConfig.json").write_text(json.dumps(job_config, indent=4))
        configurations.append({"filePath": "JobConfig.json", "subType": "JobConfig"})
    for sub, files in (("Inputs", dict(inputs)), ("Outputs", dict(outputs))):
        (folder / sub).mkdir(exist_ok=True)
        for file_name, data in files.items():
            (folder / sub / file_name).write_text(json.dumps(data, indent=4), encoding="utf-8")
            configurations.append({"filePath": f"{sub}\\{file_name}",
                                   "subType": data["ScriptType"]})
    (folder / "asaproj.json").write_text(json.dumps(
        {"name": name, "startFile": f"{name}.asaql", "configurations": configurations},
        indent=4), encoding="utf-8")
    return folder
