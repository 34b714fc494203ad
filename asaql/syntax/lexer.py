"""Query text → tokens for the fast parser (asaql/syntax/descent.py), as lark's lexer reads them.

One compiled master regex with the terminals of grammar/asaql.lark in lark's order (comments,
then OVER_CALL, STRING and FLOAT, then names, numbers and signs); a word is a keyword when it
is one in any case, as lark's "unless" check makes it. Tokens are kept in parallel lists (kind,
text, 1-based line and column of the start and of the end) rather than objects: the parser only
needs the kind of most of them, and positions only where a node begins or ends.

A character no terminal matches ends the tokens with an "ERROR" token there: the parser stops
at it (lark, which lexes as it parses, reports whatever it meets first).
"""

from __future__ import annotations

import re
from bisect import bisect_right

KEYWORDS = frozenset({
    "SELECT", "DISTINCT", "TOP", "AS", "INTO", "FROM", "WHERE", "GROUP", "BY", "HAVING", "UNION",
    "ALL", "WITH", "TIMESTAMP", "OVER", "PARTITION", "JOIN", "INNER", "LEFT", "OUTER", "CROSS",
    "APPLY", "ON", "OR", "AND", "NOT", "IS", "NULL", "LIKE", "IN", "BETWEEN", "CAST", "TRY_CAST",
    "CASE", "WHEN", "THEN", "ELSE", "END", "WITHIN", "ORDER", "ASC", "DESC", "LIMIT",
    "MATCH_RECOGNIZE",
})
_KEYWORD_OF = {word.lower(): word for word in KEYWORDS}

_SIGNS = {
    "=": "EQ", "<>": "NE", "!=": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE", "+": "PLUS",
    "-": "MINUS", "*": "STAR", "/": "SLASH", "%": "PERCENT", "&": "AMP", "|": "PIPE",
    "^": "CARET", "~": "TILDE", "(": "LPAR", ")": "RPAR", ",": "COMMA", ".": "DOT",
    ";": "SEMICOLON", "?": "QUESTION",
}

_COMMENT = r"--[^\n]*|/\*[\s\S]*?\*/"
# Group numbers are the token kinds below; the patterns are the grammar's, verbatim.
_MASTER = re.compile("|".join(f"({pattern})" for pattern in (
    rf"\s+|{_COMMENT}",  # 1: skipped
    rf"(?i:over)(?=(?:\s|{_COMMENT})*\()",  # 2: OVER_CALL (OVER directly before a parenthesis)
    r"(?i:N?'(?:[^']|'')*')",  # 3: STRING
    r"(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+",  # 4: FLOAT
    r"[A-Za-z_][A-Za-z0-9_]*",  # 5: IDENT or a keyword
    r"\[(?:[^\]]|\]\])*\]|\"(?:[^\"]|\"\")*\"",  # 6: BRACKET_IDENT or QUOTED_IDENT
    r"\d+",  # 7: INT
    r"<=|<>|!=|>=|[=<>+\-*/%&|^~(),.;?]",  # 8: a sign
)))
_SKIP, _OVER_CALL, _STRING, _FLOAT, _WORD, _BRACKET, _INT, _SIGN = range(1, 9)
_KIND_OF_GROUP = {_OVER_CALL: "OVER_CALL", _STRING: "STRING", _FLOAT: "FLOAT",
                  _BRACKET: "BRACKET_IDENT", _INT: "INT"}


# Tokens read at a time ahead of a statement: most statements are far shorter.
READ_AHEAD = 4096


class Tokens:
    """The tokens of text[start:end], read on demand so that a parse that stops early (a syntax
    error) costs what it read, not the whole text: the lists end with a "MORE" token while text
    is left (`read_to` reads on), then with "$END" (or "ERROR" at a character no terminal
    matches)."""

    __slots__ = ("kinds", "texts", "offsets", "lines", "columns", "end_lines", "end_columns",
                 "_text", "_line_starts", "_end", "_scan", "_at", "_line")

    def __init__(self, text: str, line_starts: list[int], start: int, end: int):
        self.kinds, self.texts, self.offsets = ["MORE"], [""], [start]
        line = bisect_right(line_starts, start)
        column = start - line_starts[line - 1] + 1
        self.lines, self.columns, self.end_lines, self.end_columns = \
            [line], [column], [line], [column]
        self._text, self._line_starts, self._end = text, line_starts, end
        self._scan = _MASTER.scanner(text, start, end).match
        self._at, self._line = start, line
        self.read_to(READ_AHEAD)

    @property
    def complete(self) -> bool:
        return self.kinds[-1] != "MORE"

    def read_to(self, count: int) -> None:
        """Read until there are `count` tokens before the last one, or to the end."""
        kinds, texts, offsets = self.kinds, self.texts, self.offsets
        lines, columns, end_lines, end_columns = \
            self.lines, self.columns, self.end_lines, self.end_columns
        if kinds[-1] != "MORE" or len(kinds) > count:
            return
        for column in (kinds, texts, offsets, lines, columns, end_lines, end_columns):
            column.pop()  # the MORE token
        line_starts, line = self._line_starts, self._line
        line_start, next_line = _line_bounds(line_starts, line)
        scan, at = self._scan, self._at
        keyword_of, signs, kind_of_group = _KEYWORD_OF, _SIGNS, _KIND_OF_GROUP
        add_kind, add_text, add_offset = kinds.append, texts.append, offsets.append
        add_line, add_column = lines.append, columns.append
        add_end_line, add_end_column = end_lines.append, end_columns.append
        left = count - len(kinds)
        while left > 0:
            match = scan()
            if match is None:
                break
            group = match.lastindex
            at = match.end()
            if group == _SKIP:
                continue
            left -= 1
            word = match.group()
            first = match.start()
            if group == _WORD:
                add_kind(keyword_of.get(word.lower(), "IDENT"))
            elif group == _SIGN:
                add_kind(signs[word])
            elif group == _BRACKET and word[0] == '"':
                add_kind("QUOTED_IDENT")
            else:
                add_kind(kind_of_group[group])
            add_text(word)
            add_offset(first)
            if first >= next_line:
                line = bisect_right(line_starts, first)
                line_start, next_line = _line_bounds(line_starts, line)
            add_line(line)
            add_column(first - line_start + 1)
            if at > next_line:  # a string or [name] that spans lines
                line = bisect_right(line_starts, at - 1)
                line_start, next_line = _line_bounds(line_starts, line)
            add_end_line(line)
            add_end_column(at - line_start + 1)
        self._at, self._line = at, line
        # MORE when stopped by the count; else the position after the last token, or of the
        # character no terminal matches
        kind = "MORE" if left <= 0 and at < self._end else "ERROR" if at < self._end else "$END"
        line = bisect_right(line_starts, at)
        column = at - line_starts[line - 1] + 1
        add_kind(kind)
        add_text("")
        add_offset(at)
        add_line(line)
        add_column(column)
        add_end_line(line)
        add_end_column(column)


def _line_bounds(line_starts: list[int], line: int) -> tuple[int, int]:
    """(offset where 1-based `line` starts, offset where the next one starts or a huge number)."""
    following = line_starts[line] if line < len(line_starts) else 1 << 62
    return line_starts[line - 1], following

