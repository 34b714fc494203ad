WITH PerInterval AS (
    SELECT Topic, User, COUNT(*)
    FROM TwitterStream TIMESTAMP BY CreatedAt
    GROUP BY Topic, User, TumblingWindow(minute, 30)
)

SELECT System.Timestamp() AS WindowEnd, Topic, Users = COUNT(*), Total = SUM (count)
INTO TopicsEvery2Hours
FROM PerInterval
GROUP BY Topic, System.Timestamp(), Tumbling (hour, 2)
