SELECT System.Timestamp() AS WindowEnd, Topic, COUNT(*) AS n, MIN(Stamp) AS lowest
FROM TwitterStream TIMESTAMP BY CreatedAt
GROUP BY Topic, Sliding(second, 10)
