-- ASA "Use query parallelization", a multi-step query: the first step counts per partition
-- (PARTITION BY PartitionId), the second sums over partitions. The documentation's query, with
-- the window end added. Step1 is a stage whose watermark is the minimum over the partitions.
WITH Step1 AS (
    SELECT COUNT(*) AS Count, TollBoothId, PartitionId
    FROM Input1 Partition By PartitionId
    GROUP BY TumblingWindow(minute, 3), TollBoothId, PartitionId
)

SELECT SUM(Count) AS Count, TollBoothId, System.Timestamp() AS WindowEnd
FROM Step1
GROUP BY TumblingWindow(minute, 3), TollBoothId
