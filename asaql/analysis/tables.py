"""CREATE TABLE declarations → each input's declared columns (name, ASA type), in order."""

from __future__ import annotations

from asaql.errors import InvalidQueryError
from asaql.syntax import ast

DeclaredColumns = tuple[tuple[str, str], ...]


def declared_schemas(tree: ast.Query) -> dict[str, DeclaredColumns]:
    """Lower-case input name → its declared columns; a table or column declared twice is an
    error at the second one."""
    schemas: dict[str, DeclaredColumns] = {}
    for table in tree.tables:
        if table.name.key in schemas:
            raise InvalidQueryError(f"CREATE TABLE {table.name.name} appears twice", table.span)
        seen: set[str] = set()
        for column in table.columns:
            if column.name.key in seen:
                raise InvalidQueryError(f"CREATE TABLE {table.name.name}: column "
                                        f"'{column.name.name}' is declared twice", column.span)
            seen.add(column.name.key)
        schemas[table.name.key] = tuple((c.name.name, c.type_name) for c in table.columns)
    return schemas
