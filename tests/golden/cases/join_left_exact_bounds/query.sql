-- A LEFT JOIN of two streams with events exactly on the DATEDIFF bounds: BETWEEN 0 AND 15 is
-- elapsed time, both ends included (an exit 15 min after the entry pairs, 15 min 1 ms does not;
-- an exit before the entry does not). A pair's System.Timestamp is the later event's; an entry
-- without a pair comes out once, at entry + 15 min. A NULL key pairs with nothing.
SELECT e.LicensePlate, e.EntryTime, x.ExitTime, System.Timestamp() AS ts
INTO trips
FROM EntryStream e TIMESTAMP BY EntryTime
LEFT JOIN ExitStream x TIMESTAMP BY ExitTime
ON e.TollId = x.TollId AND e.LicensePlate = x.LicensePlate
AND DATEDIFF(minute, e, x) BETWEEN 0 AND 15

-- ASA's "absence of events" pattern: entries without an exit within 15 minutes.
SELECT e.LicensePlate, e.EntryTime, System.Timestamp() AS MissingSince
INTO missing
FROM EntryStream e TIMESTAMP BY EntryTime
LEFT OUTER JOIN ExitStream x TIMESTAMP BY ExitTime
ON e.TollId = x.TollId AND e.LicensePlate = x.LicensePlate
AND DATEDIFF(minute, e, x) BETWEEN 0 AND 15
WHERE x.TollId IS NULL
