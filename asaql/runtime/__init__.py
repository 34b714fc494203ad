"""What runs inside Spark's Python workers: numpy/pandas kernels and the stateful step. No pyspark
import here: the kernels are tested on their own."""
