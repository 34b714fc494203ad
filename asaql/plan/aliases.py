"""The paths a user gives (--input, --output, --reference, the API's frames) matched to the
names a plan reads and writes."""

from __future__ import annotations

from asaql.errors import ConfigurationError


def resolve_aliases(names: tuple[str, ...], given: dict[str, str], what: str) -> dict[str, str]:
    """Match --input/--output aliases to the query's names, case-insensitively as ASA does."""
    by_key = {name.lower(): name for name in names}
    resolved = {}
    for alias, path in given.items():
        if alias.lower() not in by_key:
            known = ", ".join(names) or "none"
            raise ConfigurationError(f"unknown {what} alias '{alias}' (the query's {what}s: {known})")
        resolved[by_key[alias.lower()]] = path
    return resolved
