"""ASA's path pattern of a Blob / ADLS Gen2 input or output: the folders under the container
where an input's files are (their time, the events' arrival) or an output row's file goes (from
the row's System.Timestamp, UTC). Tokens: `{date}` and `{time}` in the
output's date and time formats (DateFormat `yyyy/MM/dd`, `MM/dd/yyyy`, `dd/MM/yyyy`,
`yyyy-MM-dd`, …; TimeFormat `HH`, `HH/mm`, `HH-mm`), and `{datetime:<specifier>}` (one of
yyyy, MM, M, dd, d, HH, H, mm, m, ss, s: ASA's custom DateTime path patterns); the rest is
literal text. A custom `{field}` (partitioning by a column) is refused with its own message.
No pyspark: the Spark side formats with `spark_format()`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from asaql.errors import ConfigurationError

DATE_FORMAT, TIME_FORMAT = "yyyy/MM/dd", "HH"
_DATE_PARTS = re.compile(r"^(yyyy|MM|dd)([/-])(yyyy|MM|dd)\2(yyyy|MM|dd)$")
_TIME_PARTS = re.compile(r"^HH([/-]mm)?$")
_SPECIFIERS = {"yyyy", "MM", "M", "dd", "d", "HH", "H", "mm", "m", "ss", "s"}
_TOKEN = re.compile(r"\{([^{}]*)\}")
_SPECIFIER = re.compile(r"yyyy|MM|dd|HH|mm|ss|[MdHms]")  # longest first: MM before M
_DIGITS = {"yyyy": r"(\d{4})", "MM": r"(\d{2})", "dd": r"(\d{2})", "HH": r"(\d{2})",
           "mm": r"(\d{2})", "ss": r"(\d{2})", "M": r"(\d{1,2})", "d": r"(\d{1,2})",
           "H": r"(\d{1,2})", "m": r"(\d{1,2})", "s": r"(\d{1,2})"}
_FIELD = {"yyyy": "yyyy", "MM": "MM", "M": "MM", "dd": "dd", "d": "dd", "HH": "HH", "H": "HH",
          "mm": "mm", "m": "mm", "ss": "ss", "s": "ss"}


@dataclass(frozen=True, slots=True)
class PathPattern:
    """`parts`: literal texts and datetime specifiers, in order: ("text", "logs/") or
    ("datetime", "yyyy/MM/dd")."""

    text: str
    parts: tuple[tuple[str, str], ...]

    def spark_format(self) -> str:
        """The whole path as one Spark datetime pattern (literal text quoted)."""
        out = []
        for kind, value in self.parts:
            if kind == "datetime":
                # two specifiers side by side would read as one ({datetime:M}{datetime:MM})
                out.append(("''" if out and not out[-1].endswith("'") else "") + value)
            elif value:
                out.append("'" + value.replace("'", "''") + "'")
        return "".join(out)

    def regex(self) -> str:
        """A regular expression (Python's and Java's syntax) that matches the folder path a
        time gives; each datetime specifier one group of digits, in `specifiers()` order."""
        out = []
        for kind, value in self.parts:
            if kind == "datetime":
                out.append(_SPECIFIER.sub(lambda m: _DIGITS[m.group(0)],
                                  value))
            elif kind == "any":
                out.append(r"(?:[^/]+)")
            else:
                out.append(re.escape(value))
        return "".join(out)

    def specifiers(self) -> list[str]:
        """The datetime specifiers of the pattern in order, one per group of regex()."""
        return [m.group(0) for kind, value in self.parts if kind == "datetime"
                for m in _SPECIFIER.finditer(value)]

    def glob(self) -> str:
        """A glob (Hadoop's and Python's) of the folders: at least those regex() matches."""
        out = []
        for kind, value in self.parts:
            if kind == "datetime":
                out.append(_SPECIFIER.sub(lambda m: "[0-9]" * len(m.group(0))
                                          if len(m.group(0)) > 1 else "[0-9]*", value))
            elif kind == "any":
                out.append("*")
            else:
                out.append(re.sub(r"([*?\[\]{}\\,])", r"\\\1", value))
        return "".join(out)

    def time_of(self, folder: str):
        """The UTC time a folder path (relative, '/' separated) stands for, or None when the
        pattern does not match it; a field the pattern lacks is its lowest value."""
        found = re.fullmatch(self.regex(), folder)
        if found is None:
            return None
        values = {"yyyy": 1970, "MM": 1, "dd": 1, "HH": 0, "mm": 0, "ss": 0}
        for specifier, text in zip(self.specifiers(), found.groups()):
            values[_FIELD[specifier]] = int(text)
        try:
            return datetime(values["yyyy"], values["MM"], values["dd"], values["HH"],
                            values["mm"], values["ss"], tzinfo=timezone.utc)
        except ValueError:  # 2024/02/31
            return None

    def python_format(self) -> str:
        """The same as a strftime format (tests and tools that list the folders)."""
        codes = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
        out = []
        for kind, value in self.parts:
            if kind == "datetime":
                out.append(re.sub(r"yyyy|MM|dd|HH|mm|ss", lambda m: codes[m.group(0)], value))
            else:
                out.append(value.replace("%", "%%"))
        return "".join(out)


def parse_path_pattern(text: str, date_format: str | None = None,
                       time_format: str | None = None, what: str = "the path pattern",
                       for_input: bool = False) -> PathPattern:
    """`text` with ASA's tokens; a bad token or format is a ConfigurationError naming it.
    `for_input`: an input's pattern, where `{partition}` is any one folder (ASA's input
    partitions)."""
    text = text.strip().strip("/")
    if not text:
        raise ConfigurationError(f"{what} is empty")
    date = _date_format(date_format or DATE_FORMAT, what)
    time = _time_format(time_format or TIME_FORMAT, what)
    parts: list[tuple[str, str]] = []
    at = 0
    for token in _TOKEN.finditer(text):
        parts.append(("text", text[at:token.start()]))
        name = token.group(1)
        if name.lower() == "date":
            parts.append(("datetime", date))
        elif name.lower() == "time":
            parts.append(("datetime", time))
        elif name.lower() == "partition" and for_input:
            parts.append(("any", ""))
        elif name.lower().startswith("datetime:"):
            specifier = name.split(":", 1)[1]
            if specifier not in _SPECIFIERS:
                raise ConfigurationError(
                    f"{what} {text!r}: {{datetime:{specifier}}} is not one of ASA's specifiers "
                    f"({', '.join(sorted(_SPECIFIERS))})")
            parts.append(("datetime", specifier))
        else:
            raise ConfigurationError(
                f"{what} {text!r}: {{{name}}} partitions the files by a column, which asaql "
                "does not do yet; {date}, {time} and {datetime:…} are supported")
        at = token.end()
    parts.append(("text", text[at:]))
    literal = "".join(v for k, v in parts if k == "text")
    if "{" in literal or "}" in literal:
        raise ConfigurationError(f"{what} {text!r}: a brace outside a token")
    if ".." in text.replace("\\", "/").split("/") or text.startswith(("/", "\\")):
        raise ConfigurationError(f"{what} {text!r}: its folders must stay inside the output's "
                                 "folder")
    return PathPattern(text, tuple((k, v) for k, v in parts if k != "text" or v))


def _date_format(text: str, what: str) -> str:
    normal = text.replace("YYYY", "yyyy").replace("DD", "dd")
    found = _DATE_PARTS.match(normal)
    if found is None or sorted(found.group(1, 3, 4)) != ["MM", "dd", "yyyy"]:
        raise ConfigurationError(f"{what}'s date format {text!r} is not one of ASA's "
                                 "(yyyy/MM/dd, MM/dd/yyyy, dd/MM/yyyy, or with '-')")
    return normal


def _time_format(text: str, what: str) -> str:
    if not _TIME_PARTS.match(text):
        raise ConfigurationError(f"{what}'s time format {text!r} is not one of ASA's (HH, "
                                 "HH/mm, HH-mm)")
    return text
