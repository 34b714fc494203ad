-- ASA reference, PERCENTILE_CONT and PERCENTILE_DISC: 0.988 and 0.99 over the five regions.
SELECT PERCENTILE_CONT(0.95) OVER (ORDER BY ServiceAvailability) AS cont,
       PERCENTILE_DISC(0.95) OVER (ORDER BY ServiceAvailability) AS disc,
       Percentile_Cont(0.5) WITHIN GROUP (ORDER BY ServiceAvailability DESC) AS median_desc,
       COUNT(*) AS regions
FROM testInput TIMESTAMP BY t
GROUP BY TumblingWindow(hour, 1)
