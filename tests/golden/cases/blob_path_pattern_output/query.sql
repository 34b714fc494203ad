-- A Blob output's path pattern: each row goes to the folder its System.Timestamp names (the
-- window's end, or the event's time), "@folder" in the expected rows.
SELECT tollBoothId, COUNT(*) AS cars, System.Timestamp() AS windowEnd
INTO perMinute
FROM input TIMESTAMP BY time
GROUP BY tollBoothId, TumblingWindow(second, 30)

SELECT tollBoothId, make, LicensePlate, System.Timestamp() AS at
INTO passages
FROM input TIMESTAMP BY time
WHERE make = 'Lexus'
