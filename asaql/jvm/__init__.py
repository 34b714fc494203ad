"""The JVM engine's jar: built from the Scala sources under `jvm/` (a wheel ships them and the
jar inside `asaql/jvm/`) with the Scala compiler in pyspark's wheel, cached by source hash; and
the names of every JVM entry point the Python side calls (asaql/jvm/engine.py)."""
