"""A JavaScript result as a value of the function's declared output type (its .json's
`OutputType`), or the reason it is none: ASA converts a result to the declared type and fails
where it cannot; asaql sets that row aside, as it does for a failed CAST.

Spark types a column once, where ASA types each value: `any`, `record` and `array` results are
JSON text here (a String result as itself, a Date as ASA writes datetimes): declare a scalar
output type to get a number, a datetime or a bit. No pyspark.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

_LONG = (-(2 ** 63), 2 ** 63 - 1)


def asa_datetime_text(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"


def _json_default(value):
    if isinstance(value, datetime):
        return asa_datetime_text(value)
    raise TypeError(type(value).__name__)


def _js_name(value) -> str:
    if isinstance(value, bool):
        return "a Boolean"
    if isinstance(value, (int, float)):
        return f"the Number {value!r}"
    if isinstance(value, str):
        return f"the String {value[:40]!r}"
    if isinstance(value, datetime):
        return "a Date"
    return "an Array" if isinstance(value, list) else "an Object"


def as_output(value, output_type: str):
    """(the value, None) or (None, why it is not of `output_type`)."""
    if value is None:
        return None, None
    if output_type in ("any", "record", "array", "nvarchar(max)"):
        if output_type == "record" and not isinstance(value, dict) or \
                output_type == "array" and not isinstance(value, list):
            return None, f"returned {_js_name(value)}, not {'a record' if output_type == 'record' else 'an array'}"
        return as_text(value), None
    if output_type == "bigint":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"returned {_js_name(value)}, not a bigint"
        if isinstance(value, float) and not value.is_integer() or \
                not _LONG[0] <= value <= _LONG[1]:
            return None, f"returned {_js_name(value)}, not a bigint"
        return int(value), None
    if output_type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"returned {_js_name(value)}, not a float"
        return float(value), None
    if output_type == "datetime":
        if isinstance(value, datetime):
            return value, None
        return None, f"returned {_js_name(value)}, not a Date"
    if output_type == "bit":
        if isinstance(value, bool):
            return value, None
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value), None
        return None, f"returned {_js_name(value)}, not a bit"
    return None, f"the output type {output_type} is unknown"


def as_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        return asa_datetime_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return json.dumps(value, default=_json_default, ensure_ascii=False, separators=(",", ":"))
