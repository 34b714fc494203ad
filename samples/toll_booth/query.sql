-- Cars entering each toll booth per 3-minute window (ASA's toll-booth tutorial), by entry time.
SELECT TollId, System.Timestamp() AS WindowEnd, COUNT(*) AS Cars, MIN(EntryTime) AS FirstEntry
INTO counts
FROM EntryStream TIMESTAMP BY EntryTime
GROUP BY TollId, TumblingWindow(minute, 3)
