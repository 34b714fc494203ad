-- Readings above 25 °C, stamped with the time asaql assigned to each event.
SELECT deviceId, temperature, EventTime, System.Timestamp() AS SystemTimestamp
INTO alerts
FROM input TIMESTAMP BY EventTime OVER deviceId, PartitionId
WHERE temperature > 25
