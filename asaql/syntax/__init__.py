"""Query text → typed AST. The only package that imports lark."""

from asaql.syntax.parser import parse

__all__ = ["parse"]
