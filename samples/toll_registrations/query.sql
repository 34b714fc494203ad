-- Toll booths with reference data, in steps (the shape of ASA's toll-app queries):
-- each car's registration is looked up in a static table, then two outputs read the result.
WITH Entries AS (
    SELECT TollId, EntryTime, UPPER(LicensePlate) AS LicensePlate
    FROM EntryStream TIMESTAMP BY EntryTime
),
Checked AS (
    SELECT e.TollId, e.EntryTime, e.LicensePlate, r.RegistrationId, r.Expired
    FROM Entries e
    LEFT JOIN Registration r ON e.LicensePlate = r.LicensePlate
)

-- Cars whose registration has expired, as they pass.
SELECT TollId, EntryTime, LicensePlate, RegistrationId, System.Timestamp() AS SeenAt
INTO expired
FROM Checked
WHERE Expired = 1

-- Unregistered cars per booth, in 3-minute windows.
SELECT TollId, COUNT(*) AS Unregistered, System.Timestamp() AS WindowEnd
INTO unregistered
FROM Checked
WHERE RegistrationId IS NULL
GROUP BY TollId, TumblingWindow(minute, 3)
