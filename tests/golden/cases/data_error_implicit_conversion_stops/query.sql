SELECT deviceId, temperature
INTO out FROM input TIMESTAMP BY t
WHERE temperature > 25
