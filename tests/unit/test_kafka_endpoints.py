"""Where a Kafka input is and how to connect: kafka:// addresses, Event Hubs connection
strings, librdkafka settings files; secrets never shown."""

from __future__ import annotations

import pytest

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import is_kafka_location, kafka_topic

CONNECTION = ("Endpoint=sb://contoso-ns.servicebus.windows.net/;SharedAccessKeyName=listen;"
              "SharedAccessKey=AbCdEf0123456789secretKEY=;EntityPath=telemetry")


def test_a_kafka_address_names_the_broker_and_topic():
    topic = kafka_topic("kafka://127.0.0.1:9092/iot")
    assert (topic.bootstrap, topic.topic) == ("127.0.0.1:9092", "iot")
    assert str(topic) == "kafka://127.0.0.1:9092/iot"


@pytest.mark.parametrize("bad", ["kafka://host:9092", "kafka:///topic", "kafka://h:1/a/b"])
def test_a_kafka_address_without_broker_or_topic_is_refused(bad):
    with pytest.raises(ConfigurationError, match="kafka://HOST:PORT/TOPIC"):
        kafka_topic(bad)


def test_an_event_hubs_connection_string_becomes_its_kafka_endpoint():
    topic = kafka_topic(CONNECTION)
    assert topic.bootstrap == "contoso-ns.servicebus.windows.net:9093"
    assert topic.topic == "telemetry"
    config = topic.client_config()
    assert config["security.protocol"] == "SASL_SSL"
    assert config["sasl.mechanisms"] == "PLAIN"
    assert config["sasl.username"] == "$ConnectionString"
    assert config["sasl.password"] == CONNECTION
    assert is_kafka_location(CONNECTION)


def test_an_endpoint_with_a_port_keeps_it():
    """A local stand-in (the Event Hubs emulator, a test broker) is named with its port."""
    topic = kafka_topic(CONNECTION.replace("contoso-ns.servicebus.windows.net", "127.0.0.1:9092"))
    assert topic.bootstrap == "127.0.0.1:9092"


def test_the_secret_is_never_in_the_topics_text_or_repr():
    topic = kafka_topic(CONNECTION)
    for shown in (str(topic), repr(topic), f"{topic}"):
        assert "secretKEY" not in shown
    assert topic.redact(f"failed with {CONNECTION}") == "failed with ***"


@pytest.mark.parametrize("missing, message", [
    ("EntityPath=telemetry", "EntityPath"),
    ("SharedAccessKey=AbCdEf0123456789secretKEY=;", "SharedAccessKey"),
])
def test_an_incomplete_connection_string_says_what_is_missing(missing, message):
    with pytest.raises(ConfigurationError, match=message) as raised:
        kafka_topic(CONNECTION.replace(missing, ""))
    assert "secretKEY" not in str(raised.value)


def test_settings_files_are_read_and_win_over_the_connection_string(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text("# tuning\n\nfetch.wait.max.ms = 50\nsasl.mechanisms=OAUTHBEARER\n")
    topic = kafka_topic(CONNECTION, str(path))
    config = topic.client_config()
    assert config["fetch.wait.max.ms"] == "50"
    assert config["sasl.mechanisms"] == "OAUTHBEARER"


def test_a_settings_line_without_a_value_names_its_line(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text("security.protocol=SASL_SSL\njust a word\n")
    with pytest.raises(ConfigurationError, match=r"client.properties:2"):
        kafka_topic("kafka://h:1/t", str(path))
