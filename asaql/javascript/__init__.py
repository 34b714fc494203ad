"""JavaScript user-defined functions and aggregates (ASA's UDF and UDA)."""
