-- Not a golden case (no recorded input): a query to watch a live topic with `asaql run --follow`
-- (samples/live/produce.py).
-- Per device, every 10 seconds of device time: how many readings, their average and peak.
-- Arrival time is the record's timestamp; EventTime is the device's clock.
SELECT deviceId, COUNT(*) AS readings, AVG(temperature) AS avgTemperature,
       MAX(temperature) AS maxTemperature, System.Timestamp() AS windowEnd
INTO out
FROM input TIMESTAMP BY EventTime PARTITION BY PartitionId
GROUP BY PartitionId, deviceId, TumblingWindow(second, 10)
