"""--kafka-connector spark: librdkafka settings as the Java client's `kafka.` options, --start as
the connector's, and what that connector cannot honour refused before Spark starts."""

from __future__ import annotations

import pytest

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic, kafka_topic
from asaql.kafka.java_options import check_connector_options, java_options, start_options

CONNECTION = ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=listen;"
              "SharedAccessKey=s3cr3t=;EntityPath=telemetry")


def test_an_event_hubs_connection_string_becomes_sasl_ssl_plain_with_a_jaas_config():
    options = java_options(kafka_topic(CONNECTION))
    assert options["kafka.bootstrap.servers"] == "ns.servicebus.windows.net:9093"
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert options["kafka.sasl.mechanism"] == "PLAIN"
    assert options["kafka.sasl.jaas.config"] == (
        'org.apache.kafka.common.security.plain.PlainLoginModule required '
        f'username="$ConnectionString" password="{CONNECTION}";')
    assert options["kafka.isolation.level"] == "read_committed"
    assert all(name.startswith("kafka.") for name in options)


def test_scram_tls_and_renamed_settings_map_to_their_java_names():
    topic = KafkaTopic("b:9092", "t", (
        ("security.protocol", "SASL_SSL"), ("sasl.mechanisms", "SCRAM-SHA-512"),
        ("sasl.username", 'u"ser'), ("sasl.password", "p\\w"),
        ("ssl.ca.location", "/etc/ca.pem"), ("fetch.wait.max.ms", "50"),
        ("ssl.endpoint.identification.algorithm", "none"), ("client.id", "asaql")))
    options = java_options(topic)
    assert options["kafka.sasl.jaas.config"] == (
        'org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="u\\"ser" password="p\\\\w";')
    assert options["kafka.ssl.truststore.type"] == "PEM"
    assert options["kafka.ssl.truststore.location"] == "/etc/ca.pem"
    assert options["kafka.fetch.max.wait.ms"] == "50"
    assert options["kafka.ssl.endpoint.identification.algorithm"] == ""
    assert options["kafka.client.id"] == "asaql"
    assert "kafka.sasl.username" not in options and "kafka.fetch.wait.max.ms" not in options


@pytest.mark.parametrize("setting, said", [
    (("queued.min.messages", "secret-value"), "'queued.min.messages' has no Java client"),
    (("group.id", "mine"), "'group.id' is managed by Spark's Kafka connector"),
    (("sasl.username", "only-user"), "sasl.username and sasl.password"),
])
def test_settings_without_a_java_equivalent_are_named_never_their_value(setting, said):
    with pytest.raises(ConfigurationError) as error:
        java_options(KafkaTopic("b:9092", "t", (setting,)))
    assert said in str(error.value)
    assert setting[1] not in str(error.value)


def test_a_gssapi_password_is_refused():
    topic = KafkaTopic("b:9092", "t", (("sasl.mechanism", "GSSAPI"), ("sasl.username", "u"),
                                        ("sasl.password", "p")))
    with pytest.raises(ConfigurationError, match="got GSSAPI"):
        java_options(topic)


def test_start_positions_as_the_connector_takes_them():
    assert start_options("earliest") == {"startingOffsets": "earliest"}
    assert start_options("now") == {"startingOffsets": "latest"}
    assert start_options(1_795_000_000_000) == {
        "startingTimestamp": "1795000000000", "startingOffsetsByTimestampStrategy": "latest"}


def test_what_the_spark_connector_cannot_honour_is_refused():
    topic = KafkaTopic("b:9092", "t")
    check_connector_options("python", "group", False, 10, [topic])  # the default: all allowed
    check_connector_options("spark", None, True, 10, [topic])
    with pytest.raises(ConfigurationError, match="--kafka-group works with the default"):
        check_connector_options("spark", "monitor", False, None, [topic])
    with pytest.raises(ConfigurationError, match="needs --follow"):
        check_connector_options("spark", None, False, 10, [topic])
    with pytest.raises(ConfigurationError, match="no Java client equivalent"):
        check_connector_options("spark", None, False, None,
                                [KafkaTopic("b:9092", "t", (("debug", "all"),))])


def test_a_group_without_a_topic_input_is_refused(tmp_path):
    from asaql.compiler.pipeline import compile_query
    from asaql.plan.policy import EventOrderingPolicy
    from asaql.run.runner import RunOptions, check_options

    (tmp_path / "in.jsonl").write_text("{}\n")
    compiled = compile_query("SELECT * INTO out FROM input", EventOrderingPolicy(), ())
    options = RunOptions(inputs={"input": str(tmp_path / "in.jsonl")}, outputs={},
                         kafka_group="monitor")
    with pytest.raises(ConfigurationError, match="reads none"):
        check_options(compiled, options)
