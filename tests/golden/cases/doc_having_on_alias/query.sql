-- ASA "Common query patterns", alert on a count: input and output are the documentation's.
SELECT Make, System.TimeStamp() AS Time, COUNT(*) AS [Count]
INTO AlertOutput
FROM Input TIMESTAMP BY Time
GROUP BY Make, TumblingWindow(second, 10)
HAVING [Count] >= 3
