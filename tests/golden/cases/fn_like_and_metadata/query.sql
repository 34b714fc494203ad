SELECT
    id,
    name LIKE 'a%' AS starts_a,
    name LIKE '%b%' AS has_b,
    name NOT LIKE '%c' AS not_c,
    name LIKE 'a_c' AS a_any_c,
    name LIKE '[a-b]%' AS set_start,
    PATINDEX('%[b-c]%', name) AS pat_set,
    PATINDEX('%[_]%', name) AS pat_underscore,
    PATINDEX('a%', name) AS pat_start,
    PATINDEX('%[^a-b]%', name) AS pat_not,
    GetMetadataPropertyValue(i, 'EventEnqueuedUtcTime') AS arrived,
    GetMetadataPropertyValue(i, '[EventHub].[PartitionId]') AS part
FROM input i
WHERE GetMetadataPropertyValue(i, 'PartitionId') < 3
