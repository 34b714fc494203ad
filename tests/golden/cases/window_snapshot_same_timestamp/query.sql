SELECT System.Timestamp() AS At, COUNT(*) AS n, SUM(reading) AS total
FROM input TIMESTAMP BY EventTime
GROUP BY System.Timestamp()
