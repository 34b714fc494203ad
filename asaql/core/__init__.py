"""Pure values every layer shares (window specifications, time units, stage names). The bottom
of the stack beside asaql.errors: it imports nothing of asaql, so the analysis, the plan, the
Spark backend and the runtime kernels can all read them."""
