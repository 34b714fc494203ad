-- A Blob input with path pattern logs/{date}/{time}, read from a local copy of its container:
-- only the files in the folders the pattern names (not logs/archive/, not the top level);
-- without TIMESTAMP BY an event arrives at its folder's time (as ASA's blob events at
-- BlobLastModifiedUtcTime); GetMetadataPropertyValue gives the blob's name and time.
SELECT deviceId, temperature, System.Timestamp() AS arrived,
       GetMetadataPropertyValue(input, 'BlobName') AS blob,
       GetMetadataPropertyValue(input, 'BlobLastModifiedUtcTime') AS modified
INTO rows
FROM input

SELECT deviceId, AVG(temperature) AS avgTemperature, COUNT(*) AS readings,
       System.Timestamp() AS windowEnd
INTO hourly
FROM input
GROUP BY deviceId, TumblingWindow(hour, 1)

SELECT deviceId, temperature, System.Timestamp() AS readAt,
       GetMetadataPropertyValue(input, 'BlobName') AS blob
INTO hot
FROM input TIMESTAMP BY readingTime
WHERE temperature > 25
