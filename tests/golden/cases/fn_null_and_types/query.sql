SELECT
    id,
    COALESCE(a, 42) AS co_a,
    COALESCE(b, 'none') AS co_b,
    COALESCE(NULL, NULL, b) AS co_3,
    ISNULL(b, 'dflt') AS isn,
    NULLIF(a, 0) AS nif_a,
    NULLIF(b, '') AS nif_b,
    GetType(a) AS t_a,
    GetType(b) AS t_b,
    GetType(f) AS t_f,
    GetType(flag) AS t_flag,
    GetType(rec) AS t_rec,
    GetType(arr) AS t_arr,
    GetType(System.Timestamp()) AS t_ts,
    GetType(NULL) AS t_null,
    GetType(a * 1.0) AS t_product,
    GetType(1) AS t_literal,
    LEN(NEWID()) AS id_len,
    CHARINDEX('-', NEWID()) AS id_dash
FROM input
WHERE COALESCE(b, '') <> 'skip'
