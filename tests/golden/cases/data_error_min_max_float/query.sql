SELECT k, MIN(v) AS lo, MAX(v) AS hi, COUNT(*) AS n
INTO out FROM input TIMESTAMP BY t
GROUP BY k, TumblingWindow(second, 10)
