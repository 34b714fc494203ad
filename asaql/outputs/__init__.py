"""The outputs' side of a run, without Spark: file output formats and the checks of every
path a run writes."""
