WITH Tagged AS (
    SELECT "DeviceId", "State", "Region North" AS Region
    FROM input
    WHERE "State" = "WA"
)
SELECT "DeviceId", "Region", "not a column" AS Note
INTO output
FROM Tagged
