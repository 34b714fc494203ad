"""Query files: bytes → text, the one way every command reads a query.

Accepted: UTF-8 with or without a byte-order mark, and UTF-16 with a byte-order mark (what
Windows editors write as "Unicode"). Line ends may be LF, CRLF or CR alone; they all become
LF so that line and column numbers match what an editor shows. Anything else is refused with
the file name and the byte offset of the first byte that does not decode.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from asaql.errors import ConfigurationError

# Longest first: a UTF-32 mark would start like UTF-16's, but only UTF-16 is accepted.
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)


class QueryFileError(ConfigurationError):
    """A query file that cannot be read or decoded: one line naming the file, exit 2."""


def normalize_newlines(text: str) -> str:
    """CRLF and a lone CR become LF (the parser counts lines by LF)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_query(data: bytes, filename: str = "query.sql") -> str:
    """The text of a query file's bytes, or a QueryFileError naming the byte offset."""
    encoding, label, skip = "utf-8", "UTF-8", 0
    for mark, codec, name in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            encoding, label, skip = codec, name, len(mark)
            break
    try:
        text = data[skip:].decode(encoding)
    except UnicodeDecodeError as error:
        offset = skip + error.start
        shown = data[offset:offset + 4].hex(" ")
        raise QueryFileError(
            f"{filename} is not valid {label} text: the bytes at offset {offset} ({shown}) "
            f"do not decode ({error.reason}); save the query as UTF-8, or as UTF-16 with a "
            "byte-order mark") from None
    return normalize_newlines(text)


def read_query_file(path: str | Path) -> str:
    """Read and decode a query file; an unreadable or undecodable one is a QueryFileError."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise QueryFileError(f"cannot read query file {path}: {error.strerror}") from None
    return decode_query(data, str(path))
