"""An input given as `kafka://HOST:PORT/TOPIC` or as an Event Hubs connection string, with the
client settings of `--kafka-config FILE` (librdkafka properties).

Secrets live only in `KafkaTopic.settings`, which is never printed: the topic shows itself as
`kafka://HOST:PORT/TOPIC` in messages, `explain`, metrics and the checkpoint's manifest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from asaql.errors import ConfigurationError

SCHEME = "kafka://"
EVENT_HUBS_PORT = 9093
# Settings whose values are secrets: never shown, in any message.
_SECRET = re.compile(r"password|secret|key|token|jaas", re.IGNORECASE)


@dataclass(frozen=True)
class KafkaTopic:
    bootstrap: str                    # HOST:PORT[,HOST:PORT…]
    topic: str
    settings: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        return f"{SCHEME}{self.bootstrap}/{self.topic}"

    def client_config(self) -> dict[str, str]:
        """librdkafka settings for a client of this topic's broker."""
        return {"bootstrap.servers": self.bootstrap, **dict(self.settings)}

    def redact(self, text: str) -> str:
        """`text` with every secret setting's value replaced."""
        for name, value in self.settings:
            if _SECRET.search(name) and value:
                text = text.replace(value, "***")
        return text


def is_kafka_location(value: str) -> bool:
    return value.lower().startswith(SCHEME) or value.lower().startswith("endpoint=sb://")


def kafka_topic(value: str, config_file: str | None = None) -> KafkaTopic:
    """`kafka://HOST:PORT/TOPIC` or `Endpoint=sb://NS.servicebus.windows.net/;…;EntityPath=…`,
    with the settings of `config_file` (which win over the connection string's)."""
    settings = read_client_config(config_file) if config_file else {}
    if value.lower().startswith("endpoint="):
        topic = _event_hub(value)
        return KafkaTopic(topic.bootstrap, topic.topic,
                          tuple({**dict(topic.settings), **settings}.items()))
    rest = value[len(SCHEME):]
    bootstrap, _, topic = rest.partition("/")
    if not bootstrap or not topic or "/" in topic:
        raise ConfigurationError(f"a Kafka input is kafka://HOST:PORT/TOPIC, got '{value}'")
    return KafkaTopic(bootstrap, topic, tuple(settings.items()))


def _event_hub(connection: str) -> KafkaTopic:
    """An Event Hubs connection string → its Kafka endpoint: NS.servicebus.windows.net:9093,
    SASL_SSL with PLAIN, user `$ConnectionString` and the whole string as the password
    (Event Hubs' documented way for Kafka clients)."""
    parts = {}
    for item in connection.strip().strip(";").split(";"):
        name, sep, value = item.partition("=")
        if sep:
            parts[name.strip().lower()] = value.strip()
    endpoint = re.match(r"sb://([^/;]+)/?$", parts.get("endpoint", ""), re.IGNORECASE)
    if endpoint is None:
        raise ConfigurationError("an Event Hubs connection string needs Endpoint=sb://NAMESPACE."
                                 "servicebus.windows.net/")
    hub = parts.get("entitypath")
    if not hub:
        raise ConfigurationError("the Event Hubs connection string has no EntityPath=EVENT_HUB "
                                 "(copy it from the event hub's Shared access policies)")
    if "sharedaccesskeyname" not in parts or "sharedaccesskey" not in parts:
        raise ConfigurationError("the Event Hubs connection string needs SharedAccessKeyName= "
                                 "and SharedAccessKey=")
    host = endpoint.group(1)  # a HOST:PORT (a local stand-in, the emulator) keeps its port
    bootstrap = host if ":" in host else f"{host}:{EVENT_HUBS_PORT}"
    settings = {"security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN",
                "sasl.username": "$ConnectionString", "sasl.password": connection.strip()}
    return KafkaTopic(bootstrap, hub, tuple(settings.items()))


def with_settings(topic: KafkaTopic, settings: dict[str, str] | None) -> KafkaTopic:
    """The topic with more client settings (they win over its own)."""
    if not settings:
        return topic
    merged = {**dict(topic.settings), **{str(k): str(v) for k, v in settings.items()}}
    return KafkaTopic(topic.bootstrap, topic.topic, tuple(merged.items()))


def start_position(value) -> str | int:
    """Where a new run starts reading a topic: "earliest", "now", or a time (ISO 8601 text, UTC
    unless it says; a datetime; ms since the epoch) → ms since the epoch."""
    from datetime import datetime, timezone

    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("earliest", "now"):
        return value.lower()
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            moment = None
    if not isinstance(moment, datetime):
        raise ConfigurationError(f"a start position is earliest, now or a time such as "
                                 f"2026-11-24T10:00:00Z, got '{value}'")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def read_client_config(path: str) -> dict[str, str]:
    """A librdkafka properties file: `name=value` lines, `#` comments, blank lines."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"cannot read the Kafka settings {path}: "
                                 f"{getattr(error, 'strerror', None) or error}") from None
    settings = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise ConfigurationError(f"{path}:{number}: a Kafka setting is name=value")
        settings[name.strip()] = value.strip()
    return settings
