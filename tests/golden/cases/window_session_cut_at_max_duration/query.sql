SELECT System.Timestamp() AS WindowEnd, COUNT(*) AS n, MIN(reading) AS first, MAX(reading) AS last
FROM input TIMESTAMP BY EventTime
GROUP BY SessionWindow(second, 5, 10)
