SELECT System.Timestamp() AS WindowEnd, COUNT(*) AS n, Collect(reading) AS readings
FROM input TIMESTAMP BY EventTime
GROUP BY TumblingWindow(second, 10)
