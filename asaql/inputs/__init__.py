"""The inputs' side of a run, without Spark: which files an input path stands for, their
formats, one record read as the Spark reader reads it, and a record's position."""
