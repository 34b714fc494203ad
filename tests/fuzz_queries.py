"""Queries to throw at `asaql check`: random productions of the grammar and mutations of the
golden cases' and samples' queries, as the bytes of a query file. Shared by the fuzz test
(tests/property/test_fuzz_check.py) and the 100,000-query script (benchmarks/fuzz_check.py).

`outcome(data)` runs one through the same path as `asaql check` (decode, then check_query)
and says whether it ended as it must: success, or an AsaqlError at a line and column (a file
that does not decode: an error naming the file and byte offset).
"""

from __future__ import annotations

import random
import re
import sys
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lark.grammar import NonTerminal, Terminal

from asaql.compiler.check import check_query
from asaql.errors import AsaqlError
from asaql.syntax.query_text import QueryFileError, decode_query
from asaql.syntax.grammar import parser

ROOT = Path(__file__).resolve().parents[1]

# Sample text for each terminal that is a pattern rather than a word or a sign.
_PATTERN_SAMPLES = {
    "IDENT": ["a", "deviceId", "input", "t", "x1", "_y", "TumblingWindow", "COUNT", "LAG",
              "DATEDIFF", "minute", "second", "System", "IsFirst", "GetArrayElements", "udf"],
    "BRACKET_IDENT": ["[a]", "[select]", "[x]]y]", "[Timestamp]", "[ ]"],
    "INT": ["0", "1", "5", "42", "9223372036854775807", "9223372036854775808", "007"],
    "FLOAT": ["1.5", ".5", "1e3", "2.", "1e308", "1e309"],
    "STRING": ["'a'", "''", "'it''s'", "N'x'", "'2024-01-01T00:00:00Z'", "'%a_'"],
    "OVER_CALL": ["OVER"],
    "NE": ["<>", "!="],
}
_ODD = ["ß", "é", "\u00a0", "\u2028", "\x0c", "\x00", "\ufeff", "\r", "\r\n", "\t", "'", "[",
        "]", "(", ")", ",", ";", "--", "/*", "*/", "\\", "\"", "`", "@", "#", "$", "?", "!",
        "~", "^", ".", "..", "*", "日本", "😀", "N'", "'''"]
_KEYWORDS = ["SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "INTO", "WITH", "AS", "UNION",
             "JOIN", "ON", "LEFT OUTER", "CROSS APPLY", "TIMESTAMP BY", "OVER", "PARTITION BY",
             "LIMIT DURATION(hour, 1)", "CASE", "WHEN", "THEN", "END", "CAST(", "NULL", "AND",
             "OR", "NOT", "IN (", "BETWEEN", "LIKE", "IS", "DISTINCT", "TOP", "MATCH_RECOGNIZE (",
             "TumblingWindow(second, 5)", "System.Timestamp()", "DATEDIFF(minute, a, b)",
             "COUNT(*)", "LAG(x) OVER (LIMIT DURATION(second, 3))", "9" * 30, "1e999"]


_MATCH_WORDS = ("MEASURES", "AFTER", "MATCH", "SKIP", "TO", "NEXT", "ROW", "PATTERN", "DEFINE")


@lru_cache(maxsize=1)
def seed_queries() -> tuple[str, ...]:
    """The golden cases' and the samples' queries."""
    files = sorted((ROOT / "tests" / "golden" / "cases").glob("*/query.sql"))
    files += sorted((ROOT / "samples").glob("*/query.sql"))
    return tuple(f.read_text(encoding="utf-8") for f in files)


# ------------------------------------------------------------------ grammar productions


@lru_cache(maxsize=1)
def _grammar():
    """rule name → its expansions (lists of symbols), terminal name → its literal text (or
    None for a pattern), and each rule's least depth to a text of terminals only."""
    lark = parser()
    rules: dict[str, list[list]] = {}
    for rule in lark.rules:
        rules.setdefault(rule.origin.name, []).append(list(rule.expansion))
    literals = {t.name: (t.pattern.value if t.pattern.type == "str" else None)
                for t in lark.terminals}
    least = {name: None for name in rules}
    changed = True
    while changed:  # fixpoint: a rule's depth is 1 + the deepest symbol of its best expansion
        changed = False
        for name, expansions in rules.items():
            for expansion in expansions:
                depths = [0 if isinstance(s, Terminal) else least[s.name] for s in expansion]
                if None in depths:
                    continue
                depth = 1 + max(depths, default=0)
                if least[name] is None or depth < least[name]:
                    least[name], changed = depth, True
    return rules, literals, least


def grammar_query(rng: random.Random, budget: int = 12) -> str:
    """A random production of grammar/asaql.lark from `query`: random expansions while the
    depth is under `budget`, then the shallowest ones (iterative, so any budget is safe)."""
    rules, literals, least = _grammar()
    out: list[str] = []
    stack: list[tuple[object, int]] = [(NonTerminal("query"), 0)]
    while stack and len(out) < 600:
        symbol, depth = stack.pop()
        if isinstance(symbol, str):  # a word MATCH_RECOGNIZE reads as a name
            out.append(symbol)
            continue
        if isinstance(symbol, Terminal):
            out.append(_terminal_text(rng, symbol.name, literals))
            continue
        expansions = rules[symbol.name]
        if depth >= budget:
            shallowest = least[symbol.name] or 0
            expansions = [e for e in expansions
                          if _expansion_depth(e, least) <= shallowest] or expansions
        expansion = rng.choice(expansions)
        if symbol.name == "match_recognize":  # its IDENTs are MEASURES, AFTER, …, DEFINE
            words = iter(_MATCH_WORDS)
            expansion = [next(words) if isinstance(s, Terminal) and s.name == "IDENT" else s
                         for s in expansion]
        stack.extend((s, depth + 1) for s in reversed(expansion))
    return " ".join(out)


def _expansion_depth(expansion, least) -> int:
    return 1 + max((0 if isinstance(s, Terminal) else (least[s.name] or 99) for s in expansion),
                   default=0)


def _terminal_text(rng: random.Random, name: str, literals: dict) -> str:
    literal = literals.get(name)
    if name in _PATTERN_SAMPLES:
        return rng.choice(_PATTERN_SAMPLES[name])
    if literal is None:
        return "x"
    if literal.isalpha() or "_" in literal:  # a keyword: any case, as ASA allows
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in literal)
    return literal


# ------------------------------------------------------------------ mutations


def mutate(rng: random.Random, text: str) -> bytes:
    """One to four mutations of a query, then its bytes in some encoding (mostly UTF-8)."""
    for _ in range(rng.randint(1, 4)):
        text = rng.choice(_TEXT_MUTATIONS)(rng, text)
    return rng.choice(_ENCODINGS)(rng, text)


def _insert_odd(rng, text):
    at = rng.randint(0, len(text))
    return text[:at] + rng.choice(_ODD) + text[at:]


def _insert_keyword(rng, text):
    at = rng.randint(0, len(text))
    return text[:at] + f" {rng.choice(_KEYWORDS)} " + text[at:]


def _delete_span(rng, text):
    at = rng.randint(0, len(text))
    return text[:at] + text[at + rng.randint(1, 12):]


def _truncate(rng, text):
    return text[:rng.randint(0, len(text))]


def _repeat(rng, text):
    """A piece repeated: long chains, deep nesting, many statements."""
    at = rng.randint(0, len(text))
    piece = text[at:at + rng.randint(1, 20)] or "~"
    return text[:at] + piece * rng.choice([2, 10, 100, 400]) + text[at:]


def _nest(rng, text):
    at = rng.randint(0, len(text))
    opener, closer = rng.choice([("(", ")"), ("~", ""), ("-", ""), ("NOT ", ""), ("ABS(", ")"),
                                 ("CASE WHEN 1=1 THEN ", " END"), ("a + ", ""), ("a AND ", "")])
    n = rng.choice([5, 100, 151, 300, 1000])
    return text[:at] + opener * n + "a" + closer * n + text[at:]


def _line_ends(rng, text):
    return text.replace("\n", rng.choice(["\r", "\r\n", "\n\n", "\x0c", "\u2028"]))


def _swap_lines(rng, text):
    lines = text.split("\n")
    rng.shuffle(lines)
    return "\n".join(lines)


def _big_number(rng, text):
    return _insert_at_random(rng, text, rng.choice(["9" * rng.choice([19, 400, 4301, 5000]),
                                                    "1e" + "9" * 5, "0." + "0" * 400 + "1"]))


def _insert_at_random(rng, text, piece):
    at = rng.randint(0, len(text))
    return text[:at] + " " + piece + " " + text[at:]


def _splice(rng, text):
    """A piece of another seed query."""
    other = rng.choice(seed_queries())
    at, start = rng.randint(0, len(text)), rng.randint(0, len(other))
    return text[:at] + other[start:start + rng.randint(1, 200)] + text[at:]


_WORD = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|'[^']*'|\S")


def _edit_words(rng, text):
    """Words deleted, repeated or replaced by another seed's: queries that still parse and
    reach the analysis (where the GROUP BY over a step once had no position)."""
    words = _WORD.findall(text) or [""]
    vocabulary = _seed_words()
    for _ in range(rng.randint(1, 3)):
        at, roll = rng.randrange(len(words)), rng.random()
        if roll < 0.3:
            del words[at]
        elif roll < 0.6:
            words.insert(at, words[rng.randrange(len(words))])
        else:
            words.insert(at, f" {rng.choice(vocabulary)} ")
        words = words or [""]
    return "".join(words)


@lru_cache(maxsize=1)
def _seed_words() -> tuple[str, ...]:
    return tuple(sorted({w for q in seed_queries() for w in _WORD.findall(q) if w.strip()}))


_TEXT_MUTATIONS = [_insert_odd, _insert_keyword, _delete_span, _truncate, _repeat, _nest,
                   _line_ends, _swap_lines, _big_number, _splice] + [_edit_words] * 5


def _utf8(rng, text):
    return text.encode("utf-8", "surrogatepass")


def _utf8_bom(rng, text):
    return b"\xef\xbb\xbf" + _utf8(rng, text)


def _utf16(rng, text):
    return text.encode(rng.choice(["utf-16", "utf-16-le", "utf-16-be"]), "surrogatepass")


def _latin1(rng, text):
    return text.encode("latin-1", "replace")


def _flip_bytes(rng, text):
    data = bytearray(_utf8(rng, text))
    for _ in range(rng.randint(1, 3)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def _cut_bytes(rng, text):
    data = rng.choice([_utf8_bom, _utf16, _utf8])(rng, text)
    return data[:rng.randint(0, len(data))]


_ENCODINGS = [_utf8] * 6 + [_utf8_bom, _utf16, _latin1, _flip_bytes, _cut_bytes]


def random_query(rng: random.Random) -> bytes:
    """One query file: a grammar production (maybe mutated) or a mutated seed query."""
    roll = rng.random()
    if roll < 0.3:
        text = grammar_query(rng, budget=rng.choice([4, 8, 12, 20]))
        return mutate(rng, text) if rng.random() < 0.3 else text.encode("utf-8")
    return mutate(rng, rng.choice(seed_queries()))


# ------------------------------------------------------------------ the check and its outcome


@dataclass(frozen=True)
class Failure:
    """How a query broke the rule: `kind` is 'internal error' or 'unlocated error'."""

    kind: str
    signature: str  # exception type and innermost asaql frame, or the error message
    detail: str


def outcome(data: bytes) -> Failure | None:
    """None when the check ended as it must; else the Failure."""
    try:
        text = decode_query(data, "fuzz.sql")
    except QueryFileError as error:
        return None if "offset" in error.message else Failure(
            "unlocated error", "QueryFileError without an offset", error.message)
    try:
        report = check_query(text)
    except AsaqlError as error:  # check_query reports, it should not raise
        return Failure("internal error", _signature(error), error.message)
    except Exception as error:  # noqa: BLE001 (this is what the fuzzer looks for)
        return Failure("internal error", _signature(error), f"{type(error).__name__}: {error}"[:300])
    for diagnostic in report.errors:
        if diagnostic.span is None:
            return Failure("unlocated error", diagnostic.message[:80], diagnostic.message)
    return None


def _signature(error: BaseException) -> str:
    """The exception type and the innermost frame inside asaql."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if "/asaql/" in f.filename.replace("\\", "/")]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"
    return f"{type(error).__name__} at {where}"


if __name__ == "__main__":  # print a few, to see what the generator makes
    generator = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    for _ in range(5):
        print(random_query(generator)[:300], "\n")
