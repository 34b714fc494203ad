"""An Event Hub or IoT Hub input or output of a project → the Kafka endpoint asaql reads or
writes (asaql/kafka/endpoints.py builds it from a connection string).

ASA keeps keys out of a project (`SharedAccessPolicyKey` is null), so the key comes from, in
order: the environment variable ASAQL_CONNECTION_<ALIAS> (a whole connection string, or a
kafka://HOST:PORT/TOPIC stand-in), the file's own SharedAccessPolicyKey, ASAQL_KEY_<ALIAS>
(the key alone), or `sasl.password` in --kafka-config. An IoT Hub is read through its Event
Hub-compatible endpoint, whose namespace is not in the project: ASAQL_CONNECTION_<ALIAS> must
give that endpoint's connection string. No pyspark."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Mapping

from asaql.kafka.endpoints import KafkaTopic, is_kafka_location, kafka_topic, read_client_config
from asaql.project.files import ConfigFile

DEFAULT_CONSUMER_GROUP = "$Default"


def variable(kind: str, alias: str) -> str:
    """ASAQL_KEY_<ALIAS> / ASAQL_CONNECTION_<ALIAS>: the alias in capitals, other characters
    as _."""
    return f"ASAQL_{kind}_" + re.sub(r"[^A-Z0-9]", "_", alias.upper())


def event_hub(config: ConfigFile, alias: str, kafka_config: str | None,
              environ: Mapping[str, str] = os.environ) -> KafkaTopic:
    """The Kafka topic of an Event Hub input or output file (EventHubProperties)."""
    section = "EventHubProperties"
    connection = environ.get(variable("CONNECTION", alias))
    if connection:
        return _with_group(_from_variable(connection, alias, kafka_config), config, section)
    props = config.get(section)
    if not isinstance(props, dict):
        raise config.fail(section, "is missing: an Event Hub input or output has them")
    _key_authentication(config, section, alias)
    namespace, hub = _required(config, section, "ServiceBusNamespace"), \
        _required(config, section, "EventHubName")
    policy = config.get(section, "SharedAccessPolicyName") or "RootManageSharedAccessKey"
    key = config.get(section, "SharedAccessPolicyKey") or environ.get(variable("KEY", alias))
    if not key and not _password_in(kafka_config):
        raise config.fail(f"{section}.SharedAccessPolicyKey", (
            f"is empty (ASA keeps keys out of the project): set {variable('KEY', alias)} to "
            f"the key of policy '{policy}', or {variable('CONNECTION', alias)} to a connection "
            f"string, or give sasl.password in --kafka-config, or --input/--output {alias}=... "
            "for a stand-in"))
    host = namespace if "." in namespace else f"{namespace}.servicebus.windows.net"
    text = (f"Endpoint=sb://{host}/;SharedAccessKeyName={policy};SharedAccessKey={key or ''};"
            f"EntityPath={hub}")
    return _with_group(kafka_topic(text, kafka_config), config, section)


def iot_hub(config: ConfigFile, alias: str, kafka_config: str | None,
            environ: Mapping[str, str] = os.environ) -> KafkaTopic:
    """An IoT Hub input: its Event Hub-compatible endpoint, from ASAQL_CONNECTION_<ALIAS>."""
    section = "IoTHubProperties"
    connection = environ.get(variable("CONNECTION", alias))
    if not connection:
        hub = config.get(section, "IotHubNamespace") or alias
        raise config.fail("DataSourceType", (
            f"is IoT Hub: asaql reads its Event Hub-compatible endpoint, which the project does "
            f"not name: set {variable('CONNECTION', alias)} to that endpoint's connection "
            f"string (Azure portal: IoT hub '{hub}' > Built-in endpoints; it ends with "
            f"EntityPath=...), or --input {alias}=... for a stand-in"))
    return _with_group(_from_variable(connection, alias, kafka_config), config, section)


def _from_variable(connection: str, alias: str, kafka_config: str | None) -> KafkaTopic:
    name = variable("CONNECTION", alias)
    if not is_kafka_location(connection):
        from asaql.project.files import ProjectError

        raise ProjectError(f"{name} is neither an Event Hubs connection string "
                           "(Endpoint=sb://...) nor kafka://HOST:PORT/TOPIC")
    return kafka_topic(connection, kafka_config)


def _with_group(topic: KafkaTopic, config: ConfigFile, section: str) -> KafkaTopic:
    """The project's consumer group (for the progress commits a broker shows; --kafka-config's
    group.id wins)."""
    group = config.get(section, "ConsumerGroupName")
    if not group or group == DEFAULT_CONSUMER_GROUP:
        return topic
    return replace(topic, settings=(("group.id", str(group)), *topic.settings))


def _key_authentication(config: ConfigFile, section: str, alias: str) -> None:
    mode = config.get(section, "AuthenticationMode")
    if mode and str(mode).lower() != "connectionstring":
        raise config.fail(f"{section}.AuthenticationMode", (
            f"is {mode}: asaql connects with a shared access key, not a managed identity: set "
            f"{variable('CONNECTION', alias)} to a connection string, or --input/--output "
            f"{alias}=... for a stand-in"))


def _required(config: ConfigFile, section: str, name: str) -> str:
    value = config.get(section, name)
    if not isinstance(value, str) or not value.strip():
        raise config.fail(f"{section}.{name}", "is missing")
    return value.strip()


def _password_in(kafka_config: str | None) -> bool:
    return bool(kafka_config) and bool(read_client_config(kafka_config).get("sasl.password"))
