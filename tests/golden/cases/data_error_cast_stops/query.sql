SELECT id, CAST(v AS bigint) AS n, TRY_CAST(w AS bigint) AS m
INTO out FROM input TIMESTAMP BY t
