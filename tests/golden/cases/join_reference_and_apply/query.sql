-- Reference data joins (a static table per --reference) and APPLY. Registration has two rows
-- for YXZ 1001: the ON condition picks the one not expired. ABC 1004 is only expired: the LEFT
-- JOIN keeps it with NULLs. A NULL license plate matches nothing.
SELECT e.LicensePlate, r.RegistrationId, s.Station, System.Timestamp() AS ts
INTO registrations
FROM Entry e TIMESTAMP BY EntryTime
LEFT JOIN Registration r ON e.LicensePlate = r.LicensePlate AND r.Expired = 0
JOIN Stations s ON s.TollId = e.TollId
WHERE e.EntryTime < '2021-01-01T00:00:10Z'

-- Inner join keeps matched events only; r.* adds the reference row's fields.
SELECT e.LicensePlate, r.*
INTO expired
FROM Entry e TIMESTAMP BY EntryTime
JOIN Registration r ON r.LicensePlate = e.LicensePlate
WHERE r.Expired = 1

-- CROSS APPLY: one row per element (none for an empty or NULL array); OUTER APPLY keeps the event.
SELECT e.LicensePlate, a.ArrayIndex, a.ArrayValue AS axleCount
INTO axles
FROM Entry e TIMESTAMP BY EntryTime
CROSS APPLY GetArrayElements(e.Axles) AS a
WHERE e.EntryTime < '2021-01-01T00:00:10Z'

SELECT e.TollId, p.PropertyName, p.PropertyValue
INTO vehicle
FROM Entry e TIMESTAMP BY EntryTime
OUTER APPLY GetRecordProperties(e.Vehicle) AS p
WHERE e.EntryTime < '2021-01-01T00:00:10Z'

-- A GROUP BY over joined reference data: tolls per station in 10 s windows.
SELECT s.Station, COUNT(*) AS vehicles, SUM(e.Toll) AS tolls, System.Timestamp() AS windowEnd
INTO perStation
FROM Entry e TIMESTAMP BY EntryTime
JOIN Stations s ON e.TollId = s.TollId
GROUP BY s.Station, TumblingWindow(second, 10)
