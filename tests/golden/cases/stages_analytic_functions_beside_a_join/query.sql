-- Analytic functions beside a JOIN of two streams: ASA evaluates them before the JOIN, over
-- the left input's events (all of them: before WHERE too). The left input's events and the
-- functions' values are a stage that the JOIN reads.
SELECT a.dev, a.v, LAG(a.v) OVER (PARTITION BY a.dev LIMIT DURATION(second, 30)) AS prev, b.w,
       System.Timestamp() AS ts
INTO pairs
FROM A a TIMESTAMP BY t JOIN B b TIMESTAMP BY t
ON a.dev = b.dev AND DATEDIFF(second, a, b) BETWEEN 0 AND 5
WHERE LAG(a.v) OVER (PARTITION BY a.dev LIMIT DURATION(second, 30)) IS NOT NULL OR a.v > 20

-- and then windows over the joined rows: three stateful steps in a row
SELECT a.dev, COUNT(*) AS n, SUM(b.w) AS w, System.Timestamp() AS ts
INTO rising
FROM A a TIMESTAMP BY t JOIN B b TIMESTAMP BY t
ON a.dev = b.dev AND DATEDIFF(second, a, b) BETWEEN 0 AND 5
WHERE LAG(a.v) OVER (PARTITION BY a.dev LIMIT DURATION(second, 30)) < a.v
GROUP BY a.dev, TumblingWindow(second, 10)
