-- ASA "Use repartitioning to optimize processing" (compatibility level 1.2), with the
-- window_tumbling_boundaries case's windows over the repartitioned step.
WITH RepartitionedInput AS (
    SELECT * FROM input TIMESTAMP BY EventTime PARTITION BY deviceId INTO 4
)
SELECT System.Timestamp() AS WindowEnd, deviceId, COUNT(*) AS n, SUM(reading) AS total
FROM RepartitionedInput
GROUP BY deviceId, TumblingWindow(second, 10)
