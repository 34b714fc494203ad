"""Compiling a query: text → AST → bound statements → logical plan, and `asaql check`'s
errors. No Spark here."""
