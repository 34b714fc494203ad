SELECT id,
       CAST(b0 AS bit) ^ CAST(b1 AS bit) AS xor01, CAST(b1 AS bit) & CAST(b1 AS bit) AS and11,
       CAST(b1 AS bit) | CAST(b0 AS bit) AS or10, ~CAST(b0 AS bit) AS not0,
       n1 ^ n2 AS xor_i, ~n1 AS not_i, s | n1 AS text_or, f & n1 AS float_and,
       CAST(b1 AS bit) | n2 AS bit_or_i, nothing & n1 AS null_and,
       CAST(nothing AS bit) | CAST(b1 AS bit) AS null_or_true, CAST(nothing AS bit) & CAST(b0 AS bit) AS null_and_false
INTO out FROM input
