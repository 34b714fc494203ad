"""How a resolved GetMetadataPropertyValue property is spelled between the layers: ASA's name
('PartitionKey'), or a user (custom) property '[User].[name]' as "User.name"."""

from __future__ import annotations

USER_PROPERTY = "User."


def user_property_name(prop: str) -> str | None:
    """The name of a user property ('User.source' → 'source'); None for an Event Hub one."""
    return prop[len(USER_PROPERTY):] if prop.startswith(USER_PROPERTY) else None
