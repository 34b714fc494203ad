"""The stateful operators: a timestamped source's or a JOIN's one step (asaql/runtime) wired
into applyInPandasWithState over the lowered inputs, and each statement's output lines. Uses
the lowering and the sources; the execution side (execute, embed, sink) uses these."""
