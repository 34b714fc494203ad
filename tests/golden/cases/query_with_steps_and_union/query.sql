-- WITH steps are views: each SELECT reading a step is composed with it. Steps read steps,
-- several SELECTs read one step, and a UNION writes the rows of both branches (duplicates kept).
WITH Readings AS (
    SELECT deviceId, temp * 2 AS doubled, rec, System.Timestamp() AS ts
    FROM input TIMESTAMP BY EventTime
    WHERE temp IS NOT NULL
),
Warm AS (
    SELECT * FROM Readings WHERE doubled >= 40
),
PerDevice AS (
    SELECT deviceId, COUNT(*) AS n, MAX(doubled) AS best, System.Timestamp() AS windowEnd
    FROM Readings
    GROUP BY deviceId, TumblingWindow(second, 10)
)
SELECT w.deviceId, doubled, w.rec.a AS a, ts, w.deviceId + '-hot' AS tag INTO hot FROM Warm w WHERE doubled > 40

SELECT * INTO counts FROM PerDevice WHERE n > 1

SELECT deviceId, n AS total, windowEnd INTO totals FROM PerDevice
UNION
SELECT deviceId, best AS total, System.Timestamp() AS windowEnd FROM PerDevice
