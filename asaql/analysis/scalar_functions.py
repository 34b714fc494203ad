"""The scalar functions asaql runs, with the number of arguments each takes (ASA's reference).

The analyzer accepts a call to one of these and checks its arity here; the Spark lowering is in
asaql/spark/scalar_functions.py. A function ASA has that is not listed here is "not supported
yet" (asaql/analysis/functions.py knows every ASA name).
"""

from __future__ import annotations

from asaql.errors import InvalidQueryError
from asaql.syntax import ast

# name (lower case) → (fewest, most) arguments; None = any number
SIGNATURES: dict[str, tuple[int, int | None]] = {
    "upper": (1, 1),
    "lower": (1, 1),
    "len": (1, 1),
}


def is_supported(name: str) -> bool:
    return name.lower() in SIGNATURES


def check_call(call: ast.FunctionCall) -> None:
    name = call.name.name
    fewest, most = SIGNATURES[name.lower()]
    count = len(call.args)
    if call.star or call.distinct or call.over is not None or call.within_group:
        raise InvalidQueryError(f"{name.upper()}() is a scalar function: it takes plain "
                                "arguments", call.span)
    if count < fewest or (most is not None and count > most):
        expected = str(fewest) if fewest == most else \
            f"{fewest} to {most}" if most is not None else f"at least {fewest}"
        raise InvalidQueryError(f"{name.upper()}() takes {expected} argument"
                                f"{'' if expected == '1' else 's'}, not {count}", call.span)
