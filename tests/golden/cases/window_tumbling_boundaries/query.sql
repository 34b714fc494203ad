SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS n, SUM(reading) AS total
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 10)
