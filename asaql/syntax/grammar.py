"""Find grammar/asaql.lark (installed wheel or repository checkout) and build the parser once."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from lark import Lark

GRAMMAR_FILE = "asaql.lark"


def grammar_text() -> str:
    packaged = resources.files("asaql") / "grammar" / GRAMMAR_FILE
    if packaged.is_file():  # a wheel: the build force-includes grammar/ as asaql/grammar
        return packaged.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_FILE
    return checkout.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    return Lark(grammar_text(), parser="lalr", lexer="basic", propagate_positions=True,
                maybe_placeholders=False)
