"""Plan expressions and relations → Spark Columns: expressions, functions, joins and APPLY as
per-event arrays, the inputs of windows and analytic functions. Reads asaql.plan, asaql.core and
the runtime's step specifications; nothing else of the Spark package (tests/unit/test_layers.py)."""
