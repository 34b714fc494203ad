-- Offset(millisecond, -1), ASA's documented way to include the start and exclude the end.
SELECT System.Timestamp() AS WindowEnd, COUNT(*) AS n, MIN(reading) AS first, MAX(reading) AS last
FROM input TIMESTAMP BY EventTime
GROUP BY TumblingWindow(Duration(second, 10), Offset(millisecond, -1))
