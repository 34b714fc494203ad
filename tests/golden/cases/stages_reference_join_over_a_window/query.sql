-- A reference JOIN over a step that aggregates: the step's rows are read from a stage, with
-- their System.Timestamp (the window end); the stage's watermark lines are not rows.
WITH perBooth AS (
    SELECT tollBoothId, COUNT(*) AS cars
    FROM input TIMESTAMP BY time
    GROUP BY tollBoothId, TumblingWindow(minute, 1)
)
SELECT p.tollBoothId, p.cars, b.city, System.Timestamp() AS windowEnd
INTO output
FROM perBooth p
LEFT JOIN Booths b ON p.tollBoothId = b.id
