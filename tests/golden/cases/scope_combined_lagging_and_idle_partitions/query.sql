SELECT System.Timestamp() AS WindowEnd, COUNT(*) AS n, MIN(reading) AS lowest, MAX(reading) AS highest
FROM input TIMESTAMP BY EventTime
GROUP BY TumblingWindow(second, 10)
