WITH firstQuery AS (
   SELECT input.TollId, input.EntryTime,
   flat.ArrayIndex AS i1, flat.ArrayValue AS licenses
      FROM input
      CROSS APPLY GetArrayElements(input.ArrayOfArray) AS flat)

SELECT firstQuery.TollId, firstQuery.EntryTime, firstQuery.i1,
flat2.ArrayIndex AS i2, flat2.ArrayValue AS license
   INTO licenses
   FROM firstQuery
   CROSS APPLY GetArrayElements(firstQuery.licenses) AS flat2

SELECT input.TollId, outer1.ArrayIndex AS i1, inner1.PropertyName AS name,
       inner1.PropertyValue AS value
   INTO properties
   FROM input
   CROSS APPLY GetArrayElements(input.Plates) AS outer1
   OUTER APPLY GetRecordProperties(outer1.ArrayValue) AS inner1

SELECT i.TollId, lane.ArrayValue AS lane
   INTO lanes
   FROM input i
   JOIN Lanes l ON i.TollId = l.TollId
   CROSS APPLY GetArrayElements(l.Lanes) AS lane
