SELECT id, flag = 1 AS isOne, flag >= 90 AS atLeast90, 0 < flag AS positive,
       CASE WHEN flag = 0 THEN 'off' ELSE 'on' END AS state,
       flag + flag AS twice, flag * 10 AS tens, -flag AS negated
INTO out FROM input
