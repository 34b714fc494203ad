"""librdkafka settings (what `--kafka-config` and Event Hubs connection strings give) as the Java
Kafka client options Spark's own Kafka connector takes (`kafka.`-prefixed), for
`--kafka-connector spark`; and the run options that connector cannot honour. No pyspark here:
the mapping is checked before Spark starts."""

from __future__ import annotations

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic

# The same name and meaning in both clients.
SAME = frozenset({
    "security.protocol", "client.id", "client.rack", "session.timeout.ms",
    "heartbeat.interval.ms", "max.poll.interval.ms", "fetch.min.bytes", "fetch.max.bytes",
    "max.partition.fetch.bytes", "receive.buffer.bytes", "send.buffer.bytes",
    "reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.ms",
    "metadata.max.age.ms", "connections.max.idle.ms", "isolation.level", "check.crcs",
    "request.timeout.ms", "socket.connection.setup.timeout.ms", "sasl.kerberos.service.name",
    "ssl.cipher.suites", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.location", "ssl.truststore.password",
})
# librdkafka's name → the Java client's.
RENAMED = {"sasl.mechanisms": "sasl.mechanism", "sasl.mechanism": "sasl.mechanism",
           "fetch.wait.max.ms": "fetch.max.wait.ms", "socket.timeout.ms": "request.timeout.ms",
           "ssl.endpoint.identification.algorithm": "ssl.endpoint.identification.algorithm"}
# Settings Spark's connector decides itself (it refuses them as options).
MANAGED = frozenset({"group.id", "auto.offset.reset", "enable.auto.commit", "key.deserializer",
                     "value.deserializer", "interceptor.classes", "enable.partition.eof"})
# The JAAS login module of each SASL mechanism that takes a user name and password.
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def java_options(topic: KafkaTopic) -> dict[str, str]:
    """The topic's client settings as Spark Kafka connector options: `kafka.NAME`. A user name
    and password become `kafka.sasl.jaas.config`; a CA file `ssl.ca.location` a PEM
    truststore. A setting without a Java equivalent is a clear error naming it (never its
    value: it may be a secret)."""
    settings = dict(topic.settings)
    options = {"bootstrap.servers": topic.bootstrap, "isolation.level": "read_committed"}
    user, password = settings.pop("sasl.username", None), settings.pop("sasl.password", None)
    for name, value in settings.items():
        if name in MANAGED:
            raise ConfigurationError(f"the Kafka setting '{name}' is managed by Spark's Kafka "
                                     "connector: leave it out with --kafka-connector spark")
        if name in SAME:
            options[name] = value
        elif name in RENAMED:
            options[RENAMED[name]] = "" if value == "none" else value
        elif name == "ssl.ca.location":
            options.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": value})
        else:
            raise ConfigurationError(
                f"the Kafka setting '{name}' has no Java client equivalent asaql knows, for "
                "--kafka-connector spark: leave it out, or use the default connector (python)")
    if user is not None or password is not None:
        mechanism = options.get("sasl.mechanism", "PLAIN").upper()
        if mechanism not in LOGIN_MODULES or user is None or password is None:
            raise ConfigurationError(
                f"sasl.username and sasl.password are mapped for SASL {', '.join(LOGIN_MODULES)} "
                f"with --kafka-connector spark (got {mechanism}, "
                f"{'both' if user and password else 'one of them'})")
        options["sasl.mechanism"] = mechanism
        options["sasl.jaas.config"] = (f'{LOGIN_MODULES[mechanism]} required '
                                       f'username="{_jaas(user)}" password="{_jaas(password)}";')
    return {f"kafka.{name}": value for name, value in options.items()}


def _jaas(value: str) -> str:
    """A JAAS option value inside double quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def start_options(start: str | int) -> dict[str, str]:
    """--start as the connector's options (a checkpoint resumes whatever they say, as with
    asaql's source): a time finds each partition's first record stamped at or after it, and a
    partition without one starts at its end."""
    if start == "earliest":
        return {"startingOffsets": "earliest"}
    if start == "now":
        return {"startingOffsets": "latest"}
    return {"startingTimestamp": str(int(start)), "startingOffsetsByTimestampStrategy": "latest"}


def check_connector_options(connector: str, group: str | None, follow: bool,
                            max_per_trigger: int | None, topics: list[KafkaTopic],
                            payloads: tuple[str, ...] = ()) -> None:
    """Before Spark starts: what Spark's connector cannot do as asaql's source does is refused
    with the reason, and every topic's settings map to Java options."""
    if connector != "spark":
        return
    if group:
        raise ConfigurationError("--kafka-group works with the default connector (python): "
                                 "Spark's Kafka connector commits no offsets to a consumer group")
    if any(payload != "json" for payload in payloads):
        raise ConfigurationError("--kafka-connector spark reads JSON messages: CSV and Avro "
                                 "messages need the default connector (python)")
    if max_per_trigger and not follow:
        raise ConfigurationError(
            "--max-events-per-trigger with --kafka-connector spark needs --follow: a finite run's "
            "end-of-input record could come before the topic's last records")
    for topic in topics:
        java_options(topic)
