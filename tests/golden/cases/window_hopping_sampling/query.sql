SELECT System.Timestamp() AS WindowEnd, COUNT(*) AS n, MIN(reading) AS first, MAX(reading) AS last
INTO counts
FROM input TIMESTAMP BY EventTime
GROUP BY HoppingWindow(second, 5, 15)

SELECT System.Timestamp() AS WindowEnd, deviceId, AVG(reading) AS mean
INTO averages
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, HoppingWindow(Duration(second, 5), Hop(second, 15), Offset(second, 2))
