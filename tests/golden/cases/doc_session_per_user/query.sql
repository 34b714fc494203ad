-- ASA "Common query patterns", session windows per user.
SELECT user_id, MIN(time) AS StartTime, MAX(time) AS EndTime, System.Timestamp() AS WindowEnd
FROM input TIMESTAMP BY time
GROUP BY user_id, SessionWindow(minute, 1, 60) OVER (PARTITION BY user_id)
