-- ASA "Common query patterns", remove duplicates (12/2019 revision): a snapshot step keeps one
-- row per value, device and System.Timestamp, then a tumbling window averages them. A GROUP BY
-- over a step that aggregates: two stateful steps in a row, joined by a stage. Input and output
-- are the documentation's.
With Temp AS (
    SELECT COUNT(DISTINCT Time) AS CountTime, Value, DeviceId
    FROM Input TIMESTAMP BY Time
    GROUP BY Value, DeviceId, SYSTEM.TIMESTAMP()
)

SELECT AVG(Value) AS AverageValue, DeviceId
INTO Output
FROM Temp
GROUP BY DeviceId,TumblingWindow(minute, 5)
