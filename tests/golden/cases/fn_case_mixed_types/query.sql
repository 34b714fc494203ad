SELECT id,
       CASE WHEN id = 1 THEN rec ELSE 'text' END AS mixed,
       CASE WHEN id = 1 THEN GetRecordPropertyValue(rec, 'a') ELSE 5 END AS prop
INTO out FROM input
