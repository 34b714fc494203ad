-- Two stateful steps in a row, joined by a stage: windows over analytic functions (changes of
-- status per device and minute), and windows over windows (the busiest minute of each device
-- in 5 minutes). The second step's windows close on the first step's watermark.
WITH PerMinute AS (
    SELECT dev, COUNT(*) AS n
    FROM input TIMESTAMP BY t
    GROUP BY dev, TumblingWindow(minute, 1)
)

SELECT dev, COUNT(*) AS changes, System.Timestamp() AS WindowEnd
INTO changes
FROM input TIMESTAMP BY t
WHERE LAG(status) OVER (PARTITION BY dev LIMIT DURATION(minute, 5)) <> status
GROUP BY dev, TumblingWindow(minute, 1)

SELECT dev, MAX(n) AS peak, SUM(n) AS total, System.Timestamp() AS WindowEnd
INTO peaks
FROM PerMinute
GROUP BY dev, TumblingWindow(minute, 5)
