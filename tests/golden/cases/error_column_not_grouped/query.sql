SELECT deviceId, reading, COUNT(*) AS n
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(second, 10)
