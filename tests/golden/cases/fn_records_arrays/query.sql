SELECT
    i.id,
    GetRecordPropertyValue(i.readings, 'Temperature') AS temp,
    GetRecordPropertyValue(i.readings, 'humidity') AS hum,
    GetRecordPropertyValue(i.readings, 'Missing') AS missing,
    GetRecordPropertyValue(i.readings, i.sensor) AS by_name,
    GetArrayElement(i.custom, 0) AS first,
    GetArrayElement(i.custom, i.idx) AS at_idx,
    GetArrayLength(i.custom) AS len,
    GetArrayElement(i.custom, GetArrayLength(i.custom) - 1) AS last,
    GetRecordPropertyValue(GetArrayElement(i.items, 1), 'v') AS second_v
FROM input AS i
