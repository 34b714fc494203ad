SELECT deviceId, EventTime, System.Timestamp() AS SystemTimestamp
INTO output
FROM input TIMESTAMP BY EventTime
