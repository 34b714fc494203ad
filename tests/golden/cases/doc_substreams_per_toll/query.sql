-- ASA "Common query patterns", process events with independent time (substreams).
SELECT TollId, COUNT(*) AS Count
FROM input TIMESTAMP BY Time OVER TollId
GROUP BY TUMBLINGWINDOW(second, 5), TollId
