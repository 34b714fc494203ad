-- GetRecordProperties lists the properties a record has: b's SensorReadings lacks Humidity and
-- Extra, which other events have (the schema is their union, so a struct would show them as
-- NULL); c holds Humidity as null, which is a property it has. Also through the step that
-- orders events (TIMESTAMP BY) and under a GROUP BY.
SELECT e.DeviceId, p.PropertyName, p.PropertyValue
INTO properties
FROM input e
CROSS APPLY GetRecordProperties(e.R) AS p

SELECT e.DeviceId, p.PropertyName
INTO ordered
FROM input e TIMESTAMP BY EventEnqueuedUtcTime
CROSS APPLY GetRecordProperties(R) AS p
WHERE p.PropertyName <> 'Temperature'

SELECT DeviceId, COUNT(*) AS properties, System.Timestamp() AS windowEnd
INTO counted
FROM input e
CROSS APPLY GetRecordProperties(e.R) AS p
GROUP BY DeviceId, TumblingWindow(minute, 1)
