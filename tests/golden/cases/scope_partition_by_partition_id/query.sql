SELECT System.Timestamp() AS WindowEnd, PartitionId, COUNT(*) AS n, MIN(reading) AS lowest
FROM input TIMESTAMP BY EventTime PARTITION BY PartitionId
GROUP BY PartitionId, TumblingWindow(second, 10)
