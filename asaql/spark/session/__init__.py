"""The SparkSession a run uses: building it, Spark Connect, shipping asaql to executors."""
