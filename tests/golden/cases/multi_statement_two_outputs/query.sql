-- Two statements over one input: one with TIMESTAMP BY (policy applies), one by arrival time
-- (no TIMESTAMP BY: System.Timestamp is EventEnqueuedUtcTime and no policy applies, as in ASA).
SELECT EventTime, System.Timestamp() AS ts, 'policy' AS [source kind]
INTO adjusted
FROM input TIMESTAMP BY EventTime
WHERE EventTime >= '2021-01-01T00:10:30Z';

SELECT i.*, System.Timestamp AS ts
INTO arrivals
FROM input AS i
