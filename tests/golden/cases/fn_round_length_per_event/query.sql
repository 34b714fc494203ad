SELECT id, ROUND(x, n) AS r, ROUND(x, n, 1) AS t INTO out FROM input
