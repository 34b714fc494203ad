SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS n, MIN(reading) AS lowest
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 20)
