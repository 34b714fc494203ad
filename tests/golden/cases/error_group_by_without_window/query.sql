-- ASA: a GROUP BY over a stream needs a window.
SELECT deviceId, COUNT(*) AS n
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId
