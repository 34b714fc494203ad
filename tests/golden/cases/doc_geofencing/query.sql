-- ASA's geofencing example (geospatial scenarios): a device outside the site it is allowed in.
SELECT DeviceStreamInput.DeviceID, SiteReferenceInput.SiteID, SiteReferenceInput.SiteName
INTO Output
FROM DeviceStreamInput TIMESTAMP BY Time
JOIN SiteReferenceInput
ON st_within(DeviceStreamInput.GeoPosition, SiteReferenceInput.Geofence) = 0
WHERE DeviceStreamInput.DeviceID = SiteReferenceInput.AllowedDeviceID

-- Devices per zone and minute, the zones being GeoJSON polygon records.
SELECT z.Zone, COUNT(*) AS devices, System.Timestamp() AS windowEnd
INTO perZone
FROM DeviceStreamInput d TIMESTAMP BY Time
JOIN Zones z ON ST_WITHIN(d.GeoPosition, z.Area) = 1
GROUP BY z.Zone, TumblingWindow(minute, 1)
