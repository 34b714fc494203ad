-- ASA's toll app: the entry and exit streams of toll booths joined with DATEDIFF, and a
-- reference table of registrations. Four outputs read one step.
WITH Trips AS (
    SELECT e.TollId, e.EntryTime, x.ExitTime, e.LicensePlate,
           DATEDIFF(minute, e.EntryTime, x.ExitTime) AS DurationInMinutes
    FROM EntryStream e TIMESTAMP BY EntryTime
    JOIN ExitStream x TIMESTAMP BY ExitTime
    ON e.TollId = x.TollId AND e.LicensePlate = x.LicensePlate
    AND DATEDIFF(minute, e, x) BETWEEN 0 AND 15
)

-- Every trip through a booth, with its duration (System.Timestamp: the exit, the later event).
SELECT TollId, LicensePlate, EntryTime, ExitTime, DurationInMinutes, System.Timestamp() AS ExitedAt
INTO trips
FROM Trips

-- Trips per booth in 5-minute windows, with their average duration: windows over the join
-- (a second stateful step, reading the join's rows as a stage).
SELECT TollId, COUNT(*) AS Trips, AVG(DurationInMinutes) AS AvgMinutes,
       System.Timestamp() AS WindowEnd
INTO perBooth
FROM Trips
GROUP BY TollId, TumblingWindow(minute, 5)

-- Cars with an expired registration, as they leave.
SELECT t.TollId, t.LicensePlate, r.RegistrationId, t.ExitTime
INTO expired
FROM Trips t
JOIN Registration r ON t.LicensePlate = r.LicensePlate
WHERE r.Expired = 1

-- Cars that entered and did not leave within 15 minutes (known at entry + 15 minutes).
SELECT e.TollId, e.LicensePlate, e.EntryTime, System.Timestamp() AS MissingSince
INTO missing
FROM EntryStream e TIMESTAMP BY EntryTime
LEFT JOIN ExitStream x TIMESTAMP BY ExitTime
ON e.TollId = x.TollId AND e.LicensePlate = x.LicensePlate
AND DATEDIFF(minute, e, x) BETWEEN 0 AND 15
WHERE x.TollId IS NULL
