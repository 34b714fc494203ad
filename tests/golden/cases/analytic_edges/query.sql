-- Analytic functions on their edges, per substream (each device has its own history):
-- an event exactly LIMIT DURATION back is out of (t - 10 s, t]; LAG at an event whose value is
-- NULL is NULL, LAST skips it; WHEN chooses what is looked at; an event exactly on a multiple of
-- 10 s is the end of ISFIRST's interval (start, end]; aggregates count the event itself; a tie in
-- System.Timestamp is taken in arrival order.
SELECT seq, dev, System.Timestamp() AS ts,
       LAG(v) OVER (PARTITION BY dev LIMIT DURATION(second, 10)) AS lag_v,
       LAG(v, 2, -1) OVER (PARTITION BY dev LIMIT DURATION(second, 10)) AS lag2_v,
       LAST(v) OVER (PARTITION BY dev LIMIT DURATION(second, 10)) AS last_v,
       LAG(seq) OVER (PARTITION BY dev LIMIT DURATION(minute, 1) WHEN v > 2) AS lag_big,
       ISFIRST(second, 10) OVER (PARTITION BY dev) AS first10,
       COUNT(*) OVER (PARTITION BY dev LIMIT DURATION(second, 10)) AS n10,
       SUM(v) OVER (PARTITION BY dev LIMIT DURATION(second, 10)) AS sum10,
       MAX(v) OVER (PARTITION BY dev LIMIT DURATION(second, 10) WHEN v < 5) AS max_small
FROM input TIMESTAMP BY t OVER dev
