SELECT e.id, CAST(r.f0 AS bit) & CAST(r.f1 AS bit) AS refand, CAST(e.b1 AS bit) | CAST(r.f0 AS bit) AS mixor,
       ~CAST(r.f1 AS bit) AS refnot, GetRecordPropertyValue(e.rec, r.prop) AS picked,
       GetRecordPropertyValue(e.rec, r.prop) + 1 AS plus1
INTO refbits FROM input e JOIN flags r ON e.id = r.id
WHERE GetRecordPropertyValue(e.rec, r.prop) > r.lim

SELECT e.id, n.ArrayValue AS name, GetRecordPropertyValue(e.rec, n.ArrayValue) AS v
INTO byelement FROM input e CROSS APPLY GetArrayElements(e.names) AS n
WHERE GetRecordPropertyValue(e.rec, n.ArrayValue) >= 70

SELECT e.id, x.ArrayIndex, GetRecordPropertyValue(x.ArrayValue, 'a') AS a, GetRecordPropertyValue(x.ArrayValue, 'b') AS b,
       GetArrayLength(e.names) AS n
INTO elementrecords FROM input e CROSS APPLY GetArrayElements(e.recs) AS x

SELECT e.id, p.PropertyName, p.PropertyValue
INTO bigprops FROM input e CROSS APPLY GetRecordProperties(e.rec) AS p
WHERE p.PropertyValue > 75
