""".NET format strings (T-SQL's FORMAT(value, format [, culture])) translated once, when the
query compiles, into what Spark's vectorised functions take: Java DecimalFormat patterns
(`format_number`), printf patterns (`format_string`) and DateTimeFormatter patterns
(`date_format`). No pyspark here (`asaql check` runs without it); the Spark side is
asaql/spark/lowering/format_function.py.

A format is a standard format (one letter and an optional precision: 'N2', 'D', 'o') or a
custom pattern ('#,##0.00', 'yyyy-MM-dd'). Which one applies depends on the value's type, known
only at lowering, so both readings are kept: `number` and `datetime` (None where the format
means nothing for that type). Cultures: en-US (the default) and the invariant culture ('').
"""

from __future__ import annotations

from dataclasses import dataclass


class FormatError(ValueError):
    """A format asaql cannot translate; the message says why."""


CULTURES = {"en-us": "en-US", "": "invariant"}

# ------------------------------------------------------------------ numbers


@dataclass(frozen=True, slots=True)
class StandardNumber:
    """C, D, E, F, G, N, P, X (`letter` upper case; `upper`: the letter's case, for E and X)."""

    letter: str
    precision: int | None
    upper: bool = True


@dataclass(frozen=True, slots=True)
class NumberSection:
    """One `;` section of a custom numeric pattern. `java` is a DecimalFormat pattern of the
    number with its prefix and suffix quoted, or None when literals sit between the digits
    ('###-##-####': `digits` then lists placeholders and literals, integers only). The value
    is multiplied by `scale` (%, ‰, and divided by 1000 per scaling comma) and rounded half
    away from zero to `decimals` before Java formats it (Java rounds half to even)."""

    java: str | None
    scale: float
    decimals: int
    digits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CustomNumber:
    sections: tuple[NumberSection, ...]  # positive[, negative[, zero]]


_NUMBER_LETTERS = set("CDEFGNPX")
_DEFAULT_PRECISION = {"C": 2, "E": 6, "F": 2, "N": 2, "P": 2}


def _standard_number(text: str):
    letter, digits = text[0], text[1:]
    if letter.upper() not in _NUMBER_LETTERS or (digits and not digits.isdigit()) \
            or len(digits) > 2:
        return None
    precision = int(digits) if digits else _DEFAULT_PRECISION.get(letter.upper())
    return StandardNumber(letter.upper(), precision, letter.isupper())


def _split_sections(text: str) -> list[str]:
    sections, current, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c in "'\"":
            end = text.find(c, i + 1)
            end = len(text) - 1 if end < 0 else end
            current += text[i:end + 1]
            i = end + 1
            continue
        if c == "\\" and i + 1 < len(text):
            current += text[i:i + 2]
            i += 2
            continue
        if c == ";":
            sections.append(current)
            current = ""
        else:
            current += c
        i += 1
    sections.append(current)
    return sections


def _tokens(text: str) -> list[tuple[str, str]]:
    """('lit', text) or ('sym', char) tokens of a custom numeric section."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                raise FormatError(f"the quote at {i + 1} is not closed")
            out.append(("lit", text[i + 1:end]))
            i = end + 1
        elif c == "\\":
            out.append(("lit", text[i + 1:i + 2]))
            i += 2
        elif c in "0#.,%‰":
            out.append(("sym", c))
            i += 1
        elif c in "eE" and i + 1 < len(text) and (text[i + 1] == "0" or (
                text[i + 1] in "+-" and text[i + 2:i + 3] == "0")):
            raise FormatError("exponents in custom numeric formats are not supported yet; "
                              "use the standard format 'E'")
        else:
            out.append(("lit", c))
            i += 1
    return out


def _java_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'" if text else ""


def _section(text: str, first_section: bool = True) -> NumberSection:
    tokens = _tokens(text)
    places = [i for i, (kind, c) in enumerate(tokens) if kind == "sym" and c in "0#"]
    if not places and not first_section:  # a negative or zero section may be text only
        return NumberSection(None, 1.0, 0, (_literal_marker("".join(c for _, c in tokens)),))
    if not places:
        raise FormatError("a custom numeric format needs a digit placeholder, 0 or #")
    first, last = places[0], places[-1]
    body = tokens[first:last + 1]
    # a '.' or ',' just after the last placeholder still belongs to the number
    after = last + 1
    while after < len(tokens) and tokens[after] in (("sym", "."), ("sym", ",")):
        body.append(tokens[after])
        after += 1
    outside = tokens[:first] + tokens[after:]
    scale = 1.0
    for kind, c in outside:
        scale *= 100.0 if (kind, c) == ("sym", "%") else 1000.0 if (kind, c) == ("sym", "‰") \
            else 1.0
    prefix = "".join(c for _, c in tokens[:first])
    suffix = "".join(c for _, c in tokens[after:])
    point = next((k for k, t in enumerate(body) if t == ("sym", ".")), None)
    whole = body if point is None else body[:point]
    fraction = [] if point is None else body[point + 1:]
    # commas right before the point (or the end) scale by 1000; others turn grouping on
    while whole and whole[-1] == ("sym", ","):
        scale /= 1000.0
        whole = whole[:-1]
    literal_inside = any(kind == "lit" or c in "%‰" for kind, c in whole + fraction) or \
        ("sym", ".") in fraction
    if literal_inside:
        if point is not None:
            raise FormatError("literal characters between the digits are supported in whole "
                              "number formats only")
        digits = tuple("," if (k, c) == ("sym", ",") else c if k == "sym" else "'" + c
                       for k, c in whole if (k, c) != ("sym", ","))
        if any(d in ("%", "‰") for d in digits):
            raise FormatError("'%' between the digits is not supported")
        return NumberSection(None, scale, 0, (_literal_marker(prefix),) + digits
                             + (_literal_marker(suffix),))
    grouping = ("sym", ",") in whole
    places_whole = [c for k, c in whole if (k, c) != ("sym", ",")]
    minimum = len(places_whole) - places_whole.index("0") if "0" in places_whole else 0
    width = max(minimum, 4 if grouping else 1)
    integer = "#" * (width - minimum) + "0" * minimum
    if grouping:
        integer = integer[:-3] + "," + integer[-3:]
    places_fraction = [c for k, c in fraction if k == "sym" and c in "0#"]
    least = max((k + 1 for k, c in enumerate(places_fraction) if c == "0"), default=0)
    decimals = len(places_fraction)
    java = _java_literal(prefix) + integer
    if decimals:
        java += "." + "0" * least + "#" * (decimals - least)
    java += _java_literal(suffix)
    return NumberSection(java, scale, decimals)


def _literal_marker(text: str) -> str:
    return "'" + text


def _custom_number(text: str) -> CustomNumber:
    sections = _split_sections(text)
    if len(sections) > 3:
        raise FormatError("a custom numeric format has at most three sections")
    parsed = [_section(s, k == 0) if s else None for k, s in enumerate(sections)]
    if parsed[0] is None:
        raise FormatError("the first section of a custom numeric format is empty")
    return CustomNumber(tuple(p or parsed[0] for p in parsed))


# ------------------------------------------------------------------ datetimes


@dataclass(frozen=True, slots=True)
class DatePiece:
    """`kind`: 'java' (a DateTimeFormatter pattern), 'text' (a literal), 'year' (.NET 'y':
    the year modulo 100, no padding), 'ampm1' (.NET 't': 'A' or 'P'), 'fraction' (.NET 'F…':
    `width` digits without trailing zeros, and the '.' before them when `text` is '.')."""

    kind: str
    text: str = ""
    width: int = 0


@dataclass(frozen=True, slots=True)
class DateFormat:
    pieces: tuple[DatePiece, ...]


_DATE_LETTERS = set("dDfFgGmMoOrRstTuUyY")
# standard date formats → custom patterns, per culture (.NET Framework's, as SQL Server's FORMAT)
_STANDARD_DATES = {
    "en-US": {"d": "M/d/yyyy", "D": "dddd, MMMM d, yyyy", "t": "h:mm tt", "T": "h:mm:ss tt",
              "M": "MMMM d", "Y": "MMMM yyyy"},
    "invariant": {"d": "MM/dd/yyyy", "D": "dddd, dd MMMM yyyy", "t": "HH:mm", "T": "HH:mm:ss",
                  "M": "MMMM dd", "Y": "yyyy MMMM"},
}
_FIXED_DATES = {
    "s": "yyyy'-'MM'-'dd'T'HH':'mm':'ss",
    "u": "yyyy'-'MM'-'dd HH':'mm':'ss'Z'",
    "o": "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
    "r": "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'",
}


def _standard_date(letter: str, culture: str) -> str:
    names = _STANDARD_DATES[culture]
    if letter in "dDtTM" and letter in names:
        return names[letter]
    if letter == "m":
        return names["M"]
    if letter in "yY":
        return names["Y"]
    if letter in "fF":  # full: long date and short (f) or long (F) time
        return names["D"] + " " + names["t" if letter == "f" else "T"]
    if letter == "U":
        return names["D"] + " " + names["T"]
    if letter in "gG":
        return names["d"] + " " + names["t" if letter == "g" else "T"]
    return _FIXED_DATES[letter.lower()]


def _run(text: str, i: int) -> int:
    j = i
    while j < len(text) and text[j] == text[i]:
        j += 1
    return j - i


def _custom_date(text: str) -> DateFormat:
    pieces: list[DatePiece] = []

    def java(pattern: str) -> None:
        pieces.append(DatePiece("java", pattern))

    def literal(value: str) -> None:
        if pieces and pieces[-1].kind == "text":
            pieces[-1] = DatePiece("text", pieces[-1].text + value)
        else:
            pieces.append(DatePiece("text", value))

    specifiers = 0
    i = 0
    while i < len(text):
        c = text[i]
        n = _run(text, i)
        if c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                raise FormatError(f"the quote at {i + 1} is not closed")
            literal(text[i + 1:end])
            i = end + 1
            continue
        if c == "\\":
            if i + 1 >= len(text):
                raise FormatError("the format ends with '\\'")
            literal(text[i + 1])
            i += 2
            continue
        if c == "%":  # '%d': a single custom specifier
            i += 1
            continue
        specifiers += c in "dfFghHKmMstyz"
        if c == "d":
            java({1: "d", 2: "dd", 3: "EEE"}.get(n, "EEEE"))
        elif c == "M":
            java({1: "M", 2: "MM", 3: "MMM"}.get(n, "MMMM"))
        elif c == "y":
            if n == 1:
                pieces.append(DatePiece("year"))
            else:
                java("yy" if n == 2 else "y" * n)
        elif c in "hHms":
            java(c if n == 1 else c * 2)
        elif c == "f":
            if n > 7:
                raise FormatError("at most seven 'f' (fractions of a second)")
            java("S" * n)
        elif c == "F":
            if n > 7:
                raise FormatError("at most seven 'F' (fractions of a second)")
            dot = bool(pieces) and pieces[-1].kind == "text" and pieces[-1].text.endswith(".")
            if dot:
                rest = pieces[-1].text[:-1]
                pieces.pop()
                if rest:
                    literal(rest)
            pieces.append(DatePiece("fraction", "." if dot else "", n))
        elif c == "t":
            if n == 1:
                pieces.append(DatePiece("ampm1"))
            else:
                java("a")
        elif c == "g":
            literal("A.D.")  # asaql's datetimes are all of the common era
        elif c == "z":  # datetimes are UTC
            literal({1: "+0", 2: "+00"}.get(n, "+00:00"))
        elif c == "K":
            literal("Z" * n)
        else:  # ':' and '/' are the separators of both cultures; anything else is copied
            literal(c * n)
        i += n
    if not specifiers:
        raise FormatError("no date or time specifier (y, M, d, h, H, m, s, f, t …)")
    return DateFormat(_merge(pieces))


def _merge(pieces: list[DatePiece]) -> tuple[DatePiece, ...]:
    """Literal text between Java patterns goes into them, quoted: one date_format per run."""
    out: list[DatePiece] = []
    for piece in pieces:
        if piece.kind == "text" and out and out[-1].kind == "java":
            out[-1] = DatePiece("java", out[-1].text + _java_literal(piece.text))
        elif piece.kind == "java" and out and out[-1].kind in ("java", "text"):
            previous = out[-1].text if out[-1].kind == "java" else _java_literal(out[-1].text)
            out[-1] = DatePiece("java", previous + piece.text)
        else:
            out.append(piece)
    return tuple(out)


# ------------------------------------------------------------------ both


@dataclass(frozen=True, slots=True)
class FormatPlan:
    number: StandardNumber | CustomNumber | None
    datetime: DateFormat | None
    culture: str  # 'en-US' or 'invariant'
    number_problem: str = ""  # why `number` is None
    datetime_problem: str = ""


def culture_of(name: str | None) -> str:
    if name is None:
        return "en-US"
    found = CULTURES.get(name.strip().lower())
    if found is None:
        raise FormatError(f"the culture '{name}' is not supported; asaql formats with en-US "
                          "(the default) or the invariant culture ('')")
    return found


def translate(text: str, culture: str = "en-US") -> FormatPlan:
    """The .NET format `text` read for numbers and for datetimes; FormatError when neither
    reading works."""
    if not text:
        raise FormatError("the format is empty")
    number = datetime = None
    number_problem = datetime_problem = ""
    if len(text) <= 3 and text[0].isalpha() and (len(text) == 1 or text[1:].isdigit()):
        number = _standard_number(text)
        if number is None:
            number_problem = f"'{text}' is not a standard numeric format (C, D, E, F, G, N, " \
                             "P, X with an optional precision)"
        if len(text) == 1 and text in _DATE_LETTERS:
            datetime = DateFormat(_custom_date(_standard_date(text, culture)).pieces)
        else:
            datetime_problem = f"'{text}' is not a standard date and time format"
    else:
        try:
            number = _custom_number(text)
        except FormatError as error:
            number_problem = str(error)
        try:
            datetime = _custom_date(text)
        except FormatError as error:
            datetime_problem = str(error)
    if number is None and datetime is None:
        raise FormatError(f"cannot read the format '{text}': for numbers, {number_problem}; "
                          f"for datetimes, {datetime_problem}")
    return FormatPlan(number, datetime, culture, number_problem, datetime_problem)
