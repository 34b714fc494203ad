-- Every substream has its own watermark: its windows must be per substream.
SELECT COUNT(*) AS n
FROM input TIMESTAMP BY EventTime OVER deviceId
GROUP BY TumblingWindow(second, 10)
