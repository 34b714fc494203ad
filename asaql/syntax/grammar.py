"""Find `asaql.lark` (installed wheel or repository checkout) and build its LALR parser once."""

from __future__ import annotations

import hashlib
import importlib.resources
import os
from functools import lru_cache
from pathlib import Path

import lark

GRAMMAR_FILE = "asaql.lark"
# "with_steps" lets `asaql check` parse the WITH steps after a broken one on their own.
START = ["query", "with_steps"]


def grammar_text() -> str:
    """The wheel force-includes the top-level `grammar/` folder as `asaql/grammar`; a checkout
    has it next to the package."""
    packaged = importlib.resources.files("asaql") / "grammar" / GRAMMAR_FILE
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_FILE
    return checkout.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def parser() -> lark.Lark:
    text = grammar_text()
    return lark.Lark(
        text,
        parser="lalr",
        lexer="basic",  # not "contextual": that one would lex a misplaced keyword as a name
        start=START,
        propagate_positions=True,
        maybe_placeholders=True,
        cache=_cache_file(text),
    )


def _cache_file(text: str) -> str | bool:
    """Building the LALR tables takes ~0.3 s and loading them from lark's cache ~0.03 s; the
    cache lives in the user's cache folder (not a shared /tmp, as it is a pickle). lark checks
    the grammar hash stored inside and ignores a cache it cannot read or write."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "asaql"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return str(folder / f"grammar-{digest}-lark{lark.__version__}.pickle")
