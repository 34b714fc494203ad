"""A database table as an output (`--output ALIAS=postgresql://USER@HOST:PORT/DB/TABLE`, or a
JDBC URL naming its table with `table=`): where it is, which JDBC driver writes it, and the
password, which is never part of the location: it comes from the environment or a password
file, as libpq reads them, and never shows in what asaql prints. No pyspark."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from asaql.errors import ConfigurationError

# JDBC subprotocol → the driver class Spark loads (it must be on the classpath: --jars)
DRIVERS = {
    "postgresql": "org.postgresql.Driver",
    "jtds:sqlserver": "net.sourceforge.jtds.jdbc.Driver",
    "sqlserver": "com.microsoft.sqlserver.jdbc.SQLServerDriver",
    "mysql": "com.mysql.cj.jdbc.Driver",
    "mariadb": "org.mariadb.jdbc.Driver",
}
# Where Debian's packages put the drivers (libpostgresql-jdbc-java, libjtds-java): used when
# the run is not given one with --jars
DEBIAN_JARS = {
    "postgresql": "/usr/share/java/postgresql.jar",
    "jtds:sqlserver": "/usr/share/java/jtds.jar",
}
# The password of a database other than PostgreSQL (PostgreSQL's: PGPASSWORD, ~/.pgpass)
PASSWORD_VARIABLE = "ASAQL_DB_PASSWORD"
_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class DatabaseTable:
    """An output table. `url` is the JDBC URL without user, password or table; `password` is
    left out of every text of this object."""

    url: str
    table: str  # as the user named it: `alerts`, `public.alerts`
    user: str | None
    subprotocol: str  # postgresql, jtds:sqlserver, …
    host: str
    database: str
    password: str | None = field(default=None, repr=False, compare=False)

    @property
    def driver(self) -> str | None:
        return DRIVERS.get(self.subprotocol)

    @property
    def postgresql(self) -> bool:
        return self.subprotocol == "postgresql"

    def __str__(self) -> str:
        who = f"{self.user}@" if self.user else ""
        return f"table {self.table} in {self.subprotocol} database {self.database} " \
               f"at {who}{self.host}"

    def properties(self) -> dict[str, str]:
        """What Spark's JDBC source and the driver are given (the password among them)."""
        found = {"driver": self.driver} if self.driver else {}
        if self.user:
            found["user"] = self.user
        if self.password is not None:
            found["password"] = self.password
        return found

    def redact(self, text: str) -> str:
        """`text` (a driver's or Spark's message) with the password taken out."""
        if self.password:
            text = text.replace(self.password, "***")
        return re.sub(r"(?i)(password=)[^;&\s]*", r"\1***", text)


def driver_jars(given: str | None, outputs) -> tuple[str, ...]:
    """--jars, and the JDBC driver Debian installs for a database output's kind when --jars
    has none for it."""
    jars = [jar.strip() for jar in (given or "").split(",") if jar.strip()]
    for target in outputs:
        if isinstance(target, DatabaseTable):
            found = DEBIAN_JARS.get(target.subprotocol)
            if not given and found and os.path.exists(found) and found not in jars:
                jars.append(found)
    return tuple(jars)


def is_database_location(text) -> bool:
    return isinstance(text, str) and (text.lower().startswith(_SCHEMES)
                                      or text.lower().startswith("jdbc:"))


def database_table(text: str, what: str = "--output",
                   environ: Mapping[str, str] = os.environ) -> DatabaseTable:
    """`postgresql://USER@HOST[:PORT]/DB/[SCHEMA.]TABLE[?PARAM=VALUE…]` (libpq's URI with the
    table as the last segment; the parameters go to the JDBC driver), or `jdbc:…` with the
    table as `table=NAME` among its parameters (`?…&table=` or `;table=`)."""
    if text.lower().startswith(_SCHEMES):
        table = _from_uri(text, what)
    else:
        table = _from_jdbc(text, what)
    return replace(table, password=_password(table, environ))


def _from_uri(text: str, what: str) -> DatabaseTable:
    parts = urlsplit(text)
    if parts.password is not None:
        raise _password_given(what)
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if len(segments) != 2:
        raise ConfigurationError(
            f"{what}: a database output is postgresql://USER@HOST:PORT/DATABASE/TABLE (the "
            f"table as the last part of the path): {_shown(text)}")
    database, table = segments
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key.lower() == "password" for key, _ in query):
        raise _password_given(what)
    _check_table(table, what)
    try:
        port = parts.port or 5432
    except ValueError:
        raise ConfigurationError(f"{what}: the port of {_shown(text)} is not a number") from None
    host = parts.hostname or "localhost"
    shown_host = f"[{host}]" if ":" in host else host
    url = f"jdbc:postgresql://{shown_host}:{port}/{database}" + (
        f"?{urlencode(query)}" if query else "")
    return DatabaseTable(url, table, unquote(parts.username) if parts.username else None,
                         "postgresql", f"{shown_host}:{port}", database)


def _from_jdbc(text: str, what: str) -> DatabaseTable:
    match = re.match(r"jdbc:([a-z0-9]+(?::[a-z0-9]+)?):(.*)$", text, re.IGNORECASE | re.DOTALL)
    if match is None:
        raise ConfigurationError(f"{what}: not a JDBC URL: {_shown(text)}")
    subprotocol, rest = match.group(1).lower(), match.group(2)
    rest, params = _taken_parameters(rest, ("table", "user", "password"))
    if "password" in params:
        raise _password_given(what)
    table = params.get("table")
    if not table:
        raise ConfigurationError(f"{what}: name the table in the JDBC URL: …?table=NAME (or "
                                 f";table=NAME): {_shown(text)}")
    _check_table(table, what)
    where = re.match(r"//([^/;?]*)(?:/([^;?]*))?", rest)
    host = where.group(1) if where else ""
    database = where.group(2) if where and where.group(2) else \
        (re.search(r"(?i)databaseName=([^;&]*)", rest) or [None, ""])[1]
    return DatabaseTable(f"jdbc:{subprotocol}:{rest}", table, params.get("user"), subprotocol,
                         host, database)


def _taken_parameters(rest: str, names: tuple) -> tuple[str, dict[str, str]]:
    """`rest` of a JDBC URL without the parameters `names` (in `?a=b&c=d` or `;a=b;c=d`
    form), and those parameters' values."""
    tokens = re.split(r"([?&;])", rest)
    text, taken, asked = tokens[0], {}, False
    for separator, token in zip(tokens[1::2], tokens[2::2]):
        key, _, value = token.partition("=")
        if key.strip().lower() in names:
            taken[key.strip().lower()] = unquote(value)
            continue
        if not token:
            continue
        if separator == ";":
            text += ";" + token
        else:
            text += ("&" if asked else "?") + token
            asked = True
    return text, taken


def _check_table(table: str, what: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?", table):
        raise ConfigurationError(f"{what}: the table name {table!r} is not a plain name "
                                 "(letters, digits, _; SCHEMA.TABLE)")


def _password(table: DatabaseTable, environ: Mapping[str, str]) -> str | None:
    if not table.postgresql:
        return environ.get(PASSWORD_VARIABLE)
    if environ.get("PGPASSWORD"):
        return environ["PGPASSWORD"]
    passfile = Path(environ.get("PGPASSFILE") or Path(environ.get("HOME") or "~").expanduser()
                    / ".pgpass")
    host, _, port = table.host.rpartition(":")
    return pgpass_lookup(passfile, host.strip("[]"), port, table.database, table.user or "")


def pgpass_lookup(path: Path, host: str, port: str, database: str, user: str) -> str | None:
    """The password of the first line of libpq's password file (`host:port:db:user:password`,
    `*` matches anything, `\\:` and `\\\\` escape) that matches; None without one."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    wanted = (host, port, database, user)
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _pgpass_fields(line)
        if len(fields) != 5:
            continue
        local = host in ("localhost", "127.0.0.1", "::1") and fields[0] == "localhost"
        if all(f == "*" or f == w or (i == 0 and local)
               for i, (f, w) in enumerate(zip(fields[:4], wanted))):
            return fields[4]
    return None


def _pgpass_fields(line: str) -> list[str]:
    fields, current, escaped = [], [], False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":" and len(fields) < 4:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields


def _password_given(what: str) -> ConfigurationError:
    return ConfigurationError(
        f"{what}: a database output's location must not hold its password (it would show in "
        "the shell's history and the process list): set PGPASSWORD or use a password file "
        f"(~/.pgpass, PGPASSFILE); for other databases {PASSWORD_VARIABLE}")


def _shown(text: str) -> str:
    """A location as a message may show it: any password taken out."""
    text = re.sub(r"(?i)(password=)[^;&\s]*", r"\1***", text)
    return re.sub(r"(://[^/:@]*):[^@/]*@", r"\1:***@", text)
