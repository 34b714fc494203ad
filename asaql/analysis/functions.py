"""ASA's built-in function names, so an unsupported one reads 'not supported yet', not 'unknown'."""

from __future__ import annotations

import difflib

AGGREGATES = {
    "avg", "collect", "collecttop", "count", "max", "min", "percentile_cont", "percentile_disc",
    "stdev", "stdevp", "sum", "topone", "var", "varp",
}
ANALYTIC = {"isfirst", "lag", "last"}
WINDOWS = {
    "tumblingwindow", "tumbling", "hoppingwindow", "hopping", "slidingwindow", "sliding",
    "sessionwindow", "session", "snapshotwindow", "windows", "window",
}
SCALAR = {
    # string
    "charindex", "concat", "concat_ws", "left", "len", "lower", "ltrim", "nchar", "patindex",
    "regexmatch", "replace", "replicate", "reverse", "right", "rtrim", "space", "stuff",
    "substring", "translate", "trim", "unicode", "upper", "format",
    # math
    "abs", "acos", "asin", "atan", "atn2", "ceiling", "cos", "cot", "degrees", "exp", "floor",
    "log", "log10", "pi", "power", "radians", "rand", "round", "sign", "sin", "sqrt", "square",
    "tan",
    # date and time
    "dateadd", "datediff", "datename", "datepart", "datetimefromparts", "day", "month", "year",
    # conversion, records, arrays, metadata
    "coalesce", "getarrayelement", "getarrayelements", "getarraylength", "getmetadatapropertyvalue",
    "getrecordproperties", "getrecordpropertyvalue", "gettype", "isnull", "nullif", "newid",
    "json_parse",
    "try_cast",
    # geospatial and machine learning
    "createlinestring", "createpoint", "createpolygon", "st_distance", "st_intersects",
    "st_overlaps", "st_within", "anomalydetection_changepoint", "anomalydetection_spikeanddip",
    "duration", "limit",
}
KNOWN = AGGREGATES | ANALYTIC | WINDOWS | SCALAR


def is_known(name: str) -> bool:
    lowered = name.lower()
    return lowered in KNOWN or lowered.startswith(("udf.", "uda."))


def suggest(name: str) -> str | None:
    match = difflib.get_close_matches(name.lower(), sorted(KNOWN), n=1, cutoff=0.75)
    return f"did you mean '{match[0].upper()}'?" if match else None
