WITH s AS (SELECT System.Timestamp AS eventtime, dev FROM input TIMESTAMP BY t)
SELECT dev, eventtime, LAG(eventtime) OVER (PARTITION BY dev LIMIT DURATION(hour, 1)) AS previous,
 LAG(System.Timestamp()) OVER (LIMIT DURATION(hour, 1)) AS prev_any INTO out FROM s