"""A project's inputs and outputs → what `asaql run` takes (--input, --input-format,
--reference, --output, --output-format, --partition-key), for the aliases the query uses and
the command line does not give (the command line always wins: a local stand-in for a live
endpoint). What cannot be mapped is one ProjectError naming the file and the field.

- Event Hub / IoT Hub inputs → their Kafka endpoints (asaql/project/live.py);
- Blob / ADLS Gen2 inputs and Blob reference data → the file of their local stand-in
  (Inputs/local_*.json, ScriptType InputMock, FilePath relative to the project folder);
  `--local` takes every input from its stand-in, as VS Code's "Use local input";
- Event Hub outputs → their topics, with EventHubProperties.PartitionKey as the message key;
- SQL Database and PostgreSQL outputs → their tables (asaql/outputs/database.py): Server
  (HOST, HOST:PORT or HOST,PORT), Database, Table, User; the password never from the file:
  PGPASSWORD or ~/.pgpass for PostgreSQL, ASAQL_DB_PASSWORD for SQL Database (jTDS);
- Blob / ADLS Gen2 outputs → LocalRunOutputs/<alias> in the project folder: a folder of part
  files in the output's serialization (JSON lines, CSV, Parquet), laid out in the subfolders of
  its PathPattern ({date}/{time} in its DateFormat and TimeFormat, by each row's
  System.Timestamp), or one `<alias>.json` file for JSON in the Array format.
No pyspark."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from asaql.outputs.formats import output_format
from asaql.inputs.path_pattern import parse_path_pattern
from asaql.project import live
from asaql.errors import ConfigurationError
from asaql.project.files import ConfigFile, Project

LOCAL_OUTPUTS = "LocalRunOutputs"  # where Blob outputs go, in the project folder
EVENT_HUB = "event hub"
IOT_HUB = "iot hub"
STORAGE = ("blob storage", "azure data lake storage gen2", "adls gen2",
           "blob storage/adls gen2", "blob storage/data lake storage gen2")
# ASA's serializations of file inputs and outputs → asaql's formats
_FORMATS = {"json": "json", "csv": "csv", "parquet": "parquet", "avro": "avro"}
_DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", " ": "space",
               "tab": "tab", "comma": "comma", "semicolon": "semicolon", "pipe": "pipe",
               "space": "space"}


@dataclass
class Bindings:
    """The run's options; each dict alias → value, as the command line's."""
    inputs: dict = field(default_factory=dict)
    input_formats: dict = field(default_factory=dict)
    references: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    output_formats: dict = field(default_factory=dict)
    partition_keys: dict = field(default_factory=dict)
    output_path_patterns: dict = field(default_factory=dict)  # alias → PathPattern
    input_path_patterns: dict = field(default_factory=dict)  # alias → PathPattern


def bind_project(project: Project, compiled, given: Bindings, kafka_config: str | None,
                 local: bool = False, environ: Mapping[str, str] = os.environ) -> Bindings:
    """The project's entries for the query's aliases, under those `given` on the command line."""
    inputs = _known(project.inputs, compiled.input_names + compiled.reference_names)
    mocks = _known(project.mocks, compiled.input_names + compiled.reference_names)
    outputs = _known(project.outputs, compiled.output_names)
    bound = Bindings()
    for alias in compiled.input_names:
        if alias in given.inputs:
            continue
        if alias in inputs:
            bound.inputs[alias], fmt = _stream_input(project, inputs[alias], mocks.get(alias),
                                                     alias, kafka_config, local, environ)
        elif alias in mocks:  # a stand-in without its live input's file
            bound.inputs[alias], fmt = _mock_file(project, mocks[alias])
        else:
            continue
        if fmt:
                bound.input_formats[alias] = fmt
    for alias in compiled.reference_names:
        if alias not in given.references and alias in inputs:
            bound.references[alias] = _reference(project, inputs[alias], mocks.get(alias), alias)
        elif alias not in given.references and alias in mocks:
            bound.references[alias] = _mock_file(project, mocks[alias])[0]
    for alias in compiled.output_names:
        config = outputs.get(alias)
        if config is None:
            continue
        if alias in given.outputs:  # a folder stand-in keeps the output's serialization
            if _kind(config) in STORAGE and alias not in given.output_formats:
                fmt = _storage_format(config)
                target = given.outputs[alias]
                if isinstance(target, str) and output_format(target) is None and fmt != "json":
                    bound.output_formats[alias] = fmt
                pattern = _path_pattern(config, alias, "output")
                if isinstance(target, str) and output_format(target) is None and pattern:
                    bound.output_path_patterns[alias] = pattern
            continue
        _output(project, config, alias, kafka_config, environ, bound)
    merged = Bindings(*(  # the command line wins
        {**mine, **theirs} for mine, theirs in zip(vars(bound).values(), vars(given).values())))
    for alias, path in merged.inputs.items():  # a folder standing for a Blob container
        if alias in inputs and alias not in merged.input_path_patterns \
                and isinstance(path, str) and Path(path).is_dir():
            pattern = _path_pattern(inputs[alias], alias, "input")
            if pattern is not None:
                merged.input_path_patterns[alias] = pattern
    return merged


def _known(files: dict[str, ConfigFile], names: tuple) -> dict[str, ConfigFile]:
    """The files of the query's aliases (matched case-insensitively, as ASA does)."""
    by_key = {name.lower(): name for name in names}
    return {by_key[alias.lower()]: config for alias, config in files.items()
            if alias.lower() in by_key}


def _kind(config: ConfigFile) -> str:
    return str(config.get("DataSourceType") or "").strip().lower()


def _stream_input(project, config, mock, alias, kafka_config, local, environ):
    kind = _kind(config)
    if mock is not None and (local or kind in STORAGE):
        path, fmt = _mock_file(project, mock)
        delimiter = _DELIMITERS.get(str(config.get("Serialization", "FieldDelimiter") or ""))
        return path, f"csv:{delimiter}" if fmt == "csv" and delimiter else fmt
    if local:
        raise config.fail("Name", f"'{alias}' has no local input file (Inputs/local_{alias}.json"
                          f", ScriptType InputMock) for --local: add one, or give --input "
                          f"{alias}=FILE")
    if kind == EVENT_HUB:
        return live.event_hub(config, alias, kafka_config, environ), _topic_payload(config)
    if kind == IOT_HUB:
        return live.iot_hub(config, alias, kafka_config, environ), _topic_payload(config)
    if kind in STORAGE:
        raise config.fail("DataSourceType", (
            f"is {config.get('DataSourceType')}: asaql reads a local stand-in: add a local input "
            f"file (Inputs/local_{alias}.json, ScriptType InputMock) or give --input "
            f"{alias}=FILE_OR_FOLDER"))
    raise _unmappable(config, "input", alias)


def _reference(project, config, mock, alias) -> str:
    if _kind(config) not in STORAGE:
        raise _unmappable(config, "reference", alias)
    if mock is None:
        raise config.fail("DataSourceType", (
            f"is {config.get('DataSourceType')} reference data: asaql reads a local file: add "
            f"a local input file (Inputs/local_{alias}.json) or give --reference {alias}=FILE"))
    return _mock_file(project, mock)[0]


def local_samples(project: Project) -> dict[str, str]:
    """Alias → the file of its local stand-in (for `asaql check`'s samples)."""
    return {alias: _mock_file(project, mock)[0] for alias, mock in project.mocks.items()}


def _mock_file(project: Project, mock: ConfigFile) -> tuple[str, str | None]:
    """A local stand-in's file and format: FilePath relative to the project folder (or to the
    stand-in's own folder)."""
    text = mock.get("FilePath")
    if not isinstance(text, str) or not text.strip():
        raise mock.fail("FilePath", "is missing: it names the local file of the input")
    relative = Path(text.replace("\\", "/"))
    path = next((p for p in (project.folder / relative, mock.path.parent / relative)
                 if p.exists()), None)
    if path is None:
        raise mock.fail("FilePath", f"names {text}, which does not exist")
    fmt = str(mock.get("Format") or "").lower()
    if fmt and fmt not in _FORMATS:
        raise mock.fail("Format", f"is {mock.get('Format')}: asaql reads Json, Csv, Avro and "
                        "Parquet files")
    return str(path), _FORMATS.get(fmt)


def _topic_payload(config: ConfigFile) -> str | None:
    """An Event Hub input's messages: JSON (None: the default), CSV with its delimiter, or
    Avro, as --input-format gives them for a topic."""
    kind = str(config.get("Serialization", "Type") or "Json").lower()
    if kind not in ("json", "csv", "avro"):
        raise config.fail("Serialization.Type", (
            f"is {config.get('Serialization', 'Type')}: asaql reads a topic's messages as Json, "
            "Csv or Avro"))
    _uncompressed(config)
    if kind == "csv":
        delimiter = _DELIMITERS.get(str(config.get("Serialization", "FieldDelimiter") or ","))
        if delimiter is None:
            raise config.fail("Serialization.FieldDelimiter", (
                f"is {config.get('Serialization', 'FieldDelimiter')!r}: ASA's CSV delimiters "
                "are comma, semicolon, tab, pipe and space"))
        return f"csv:{delimiter}"
    return None if kind == "json" else kind


def _json_payload(config: ConfigFile, alias: str) -> None:
    kind = str(config.get("Serialization", "Type") or "Json").lower()
    if kind != "json":
        raise config.fail("Serialization.Type", (
            f"is {config.get('Serialization', 'Type')}: asaql writes a topic's messages as JSON; "
            f"give --output {alias}=... with a local file or folder for this output"))
    _uncompressed(config)


def _uncompressed(config: ConfigFile) -> None:
    compression = str(config.get("CompressionType") or config.get("CompresssionType")
                      or "None").lower()
    if compression != "none":
        raise config.fail("CompressionType", f"is {compression}: asaql reads uncompressed "
                          "messages")


def _output(project, config, alias, kafka_config, environ, bound: Bindings) -> None:
    kind = _kind(config)
    if kind == EVENT_HUB:
        _json_payload(config, alias)
        bound.outputs[alias] = live.event_hub(config, alias, kafka_config, environ)
        key = config.get("EventHubProperties", "PartitionKey") or config.get("PartitionKey")
        if key:
            bound.partition_keys[alias] = str(key)
        return
    if kind in DATABASES:
        bound.outputs[alias] = _database(config, alias, kind, environ)
        return
    if kind not in STORAGE:
        raise _unmappable(config, "output", alias)
    fmt = _storage_format(config)
    folder = project.folder / LOCAL_OUTPUTS
    array = fmt == "json" and str(config.get("Serialization", "Format") or "").lower() == "array"
    bound.outputs[alias] = str(folder / (f"{alias}.json" if array else alias))
    if fmt != "json":
        bound.output_formats[alias] = fmt
    pattern = None if array else _path_pattern(config, alias, "output")
    if pattern is not None:
        bound.output_path_patterns[alias] = pattern


def _database(config: ConfigFile, alias: str, kind: str, environ):
    """A SQL Database or PostgreSQL output's table (its password from the environment)."""
    from asaql.outputs.database import database_table

    postgresql = "postgres" in kind
    section = next((name for name in DATABASE_SECTIONS
                    if isinstance(config.get(name), dict)), None)
    if section is None:
        raise config.fail("DataSourceType", f"is {config.get('DataSourceType')!r}, but the file "
                          f"has none of {', '.join(DATABASE_SECTIONS)}")
    found = {key: config.get(section, key) for key in ("Server", "Database", "Table", "User",
                                                       "Port")}
    for key in ("Server", "Database", "Table"):
        if not isinstance(found[key], str) or not found[key].strip():
            raise config.fail(f"{section}.{key}", f"is missing: output '{alias}' needs it")
    if config.get(section, "Password"):
        raise config.fail(f"{section}.Password", "is set: asaql takes a database's password "
                          "from the environment (PGPASSWORD, ~/.pgpass; ASAQL_DB_PASSWORD), "
                          "never from a file it may show")
    server = found["Server"].strip().replace(",", ":")
    host, _, port = server.partition(":")
    port = str(found["Port"] or port or ("5432" if postgresql else "1433"))
    user = found["User"] or ""
    if postgresql:
        location = (f"postgresql://{user + '@' if user else ''}{host}:{port}/"
                    f"{found['Database']}/{found['Table']}")
    else:  # Azure SQL Database / SQL Server through Debian's jTDS driver
        location = (f"jdbc:jtds:sqlserver://{host}:{port}/{found['Database']};"
                    + (f"user={user};" if user else "") + f"table={found['Table']}")
    try:
        return database_table(location, f"output '{alias}'", environ)
    except ConfigurationError as error:
        raise config.fail(section, error.message) from None


DATABASES = ("sql database", "azure sql database", "postgresql", "azure database for postgresql",
             "postgresql database")
DATABASE_SECTIONS = ("SQLDatabaseProperties", "PostgreSQLProperties",
                      "PostgreSQLDatabaseProperties")
_STORAGE_SECTIONS = ("BlobStorageProperties", "DataLakeStorageGen2Properties",
                     "AzureDataLakeStoreProperties")


def _path_pattern(config: ConfigFile, alias: str, what: str):
    """The input's or output's PathPattern with its DateFormat and TimeFormat (None without
    one)."""
    for section in _STORAGE_SECTIONS:
        text = config.get(section, "PathPattern")
        if isinstance(text, str) and text.strip():
            try:
                return parse_path_pattern(text, config.get(section, "DateFormat"),
                                          config.get(section, "TimeFormat"),
                                          for_input=what == "input")
            except ConfigurationError as error:
                raise config.fail(f"{section}.PathPattern of {what} '{alias}':",
                                  error.message) from None
    return None


def _storage_format(config: ConfigFile) -> str:
    kind = str(config.get("Serialization", "Type") or "Json").lower()
    if kind not in ("json", "csv", "parquet"):
        raise config.fail("Serialization.Type", (
            f"is {config.get('Serialization', 'Type')}: asaql writes Json, Csv and Parquet "
            "files"))
    delimiter = config.get("Serialization", "FieldDelimiter")
    if kind == "csv" and delimiter not in (None, "", ",", "comma"):
        raise config.fail("Serialization.FieldDelimiter", (
            f"is {delimiter!r}: asaql writes CSV with commas"))
    return kind


def _unmappable(config: ConfigFile, what: str, alias: str):
    option = {"input": "--input", "reference": "--reference", "output": "--output"}[what]
    kinds = {"input": "Event Hub, IoT Hub and Blob/ADLS Gen2 inputs",
             "reference": "Blob/ADLS Gen2 reference data",
             "output": "Event Hub, Blob/ADLS Gen2, SQL Database and PostgreSQL outputs"}[what]
    return config.fail("DataSourceType", (
        f"is {config.get('DataSourceType')!r}: asaql maps {kinds}; give {option} {alias}=... "
        "for a local stand-in"))
