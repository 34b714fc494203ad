-- A step joined with a stream, and two steps joined: each step is read as a stage (its rows
-- with their System.Timestamp, its watermark), and the JOIN pairs them as it pairs two inputs.
WITH Fast AS (SELECT dev, t, v FROM A TIMESTAMP BY t WHERE v > 10),
PerDev AS (
    SELECT dev, COUNT(*) AS n FROM B TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 10)
)

-- a filtered step (left) with an input (right); LEFT JOIN: a row without partner at +5 s
SELECT f.dev, f.v, o.w, System.Timestamp() AS ts
INTO withInput
FROM Fast f LEFT JOIN B o TIMESTAMP BY t
ON f.dev = o.dev AND DATEDIFF(second, f, o) BETWEEN 0 AND 5

-- two steps: each fast event with its device's count in the window that ends within 10 s
SELECT f.dev, f.v, p.n, System.Timestamp() AS ts
INTO withStep
FROM Fast f JOIN PerDev p ON f.dev = p.dev AND DATEDIFF(second, f, p) BETWEEN 0 AND 10
