"""Where a run reads and writes: a local path, or the same given as a `file://` URI. No pyspark.

asaql itself touches these places with Python's file functions on the driver (checks before
Spark starts, the checkpoint's manifest and journals, stage and control folders, `.jsonl`
appends, the errors and metrics files), and Spark's executors read and write the same paths.
So a `file://` URI becomes its path, and any other file system (hdfs://, abfss://, s3a://, …) is
refused with one line: half of a run on a remote store and half on local disk would lose its
exactly-once guarantees. On a cluster of several hosts, these paths must be on a file system
every host mounts at the same place (README, "Running on a cluster").
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from asaql.errors import ConfigurationError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_LOCAL_HOSTS = ("", "localhost")


def local_path(location: str, what: str) -> str:
    """`file:///a/b`, `file:/a/b` and `file://localhost/a/b` → `/a/b` (percent-escapes
    decoded); a plain path as given. `what` names the option in the error message."""
    scheme = _SCHEME.match(location)
    if scheme is None or not _is_uri(location, scheme.group(1)):
        return location
    name = scheme.group(1).lower()
    if name != "file":
        raise ConfigurationError(
            f"{what} {location}: {name}:// is not supported; asaql reads and writes local "
            "paths or file:// URIs (on a cluster: a shared folder mounted at the same path on "
            "every host)")
    parts = urlsplit(location)
    if parts.netloc.lower() not in _LOCAL_HOSTS or not parts.path.startswith("/") \
            or parts.query or parts.fragment:
        raise ConfigurationError(f"{what} {location}: a file URI names an absolute local path, "
                                 "as file:///folder/name")
    return unquote(parts.path)


def _is_uri(location: str, scheme: str) -> bool:
    """`file:` followed by anything, or SCHEME://: a relative path such as `a:b/c` stays one."""
    return scheme.lower() == "file" or location[len(scheme) + 1:].startswith("//")
