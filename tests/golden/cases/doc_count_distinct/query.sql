-- ASA "Common query patterns", count unique values: input and output are the documentation's.
SELECT COUNT(DISTINCT Make) AS Count_make, System.TIMESTAMP() AS Time
FROM Input TIMESTAMP BY TIME
GROUP BY TumblingWindow(second, 2)
