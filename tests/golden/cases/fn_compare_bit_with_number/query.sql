SELECT id, flag = 1 AS isOne, flag >= 90 AS atLeast90, 0 < flag AS positive,
       CASE WHEN flag = 0 THEN 'off' ELSE 'on' END AS state
INTO out FROM input
